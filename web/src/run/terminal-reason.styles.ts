import { css } from "lit";

export const terminalReasonStyles = css`
  :host {
    display: block;
  }
  section {
    display: grid;
    gap: var(--ss-space-2);
  }
  .sentence {
    margin: 0;
    font-weight: 600;
  }
  .code {
    margin: 0;
    font-size: 0.8125rem;
  }
  figure {
    margin: 0;
  }
  figcaption {
    font-size: 0.8125rem;
    color: var(--ss-text-muted);
    margin-bottom: var(--ss-space-1);
  }
  pre {
    margin: 0;
  }
`;
