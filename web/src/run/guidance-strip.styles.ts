import { css } from "lit";

export const guidanceStripStyles = css`
  :host {
    display: block;
  }
  p {
    margin: 0;
  }
  section {
    display: grid;
    gap: var(--ss-space-2);
  }
`;
