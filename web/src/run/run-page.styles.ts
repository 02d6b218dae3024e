import { css } from "lit";

export const runPageStyles = css`
  :host {
    display: block;
  }
  .page {
    display: grid;
    gap: var(--ss-space-4);
    max-width: 1100px;
    margin: 0 auto;
    padding: var(--ss-space-4);
  }
  .stale {
    font-size: 0.8125rem;
  }
  .unavailable {
    display: grid;
    gap: var(--ss-space-2);
  }
  .unavailable h1 {
    font-size: 1.25rem;
    margin: 0;
  }
  .unavailable p {
    margin: 0;
  }
`;
