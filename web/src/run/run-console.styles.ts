import { css } from "lit";

export const runConsoleStyles = css`
  :host {
    display: block;
  }
  .bar {
    display: flex;
    align-items: center;
    justify-content: space-between;
    gap: var(--ss-space-2);
    margin-bottom: var(--ss-space-1);
    font-size: 0.8125rem;
  }
  pre {
    margin: 0;
    max-height: 420px;
    overflow: auto;
    font-size: 0.8125rem;
    line-height: 1.45;
  }
  .error {
    color: var(--ss-danger);
  }
`;
