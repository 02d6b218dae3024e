import { css } from "lit";

export const runStageStyles = css`
  :host {
    display: block;
  }
  .stage {
    border: 1px solid var(--ss-border);
    border-radius: var(--ss-radius);
    background: var(--ss-bg);
  }
  .head {
    display: grid;
    grid-template-columns: minmax(7rem, max-content) max-content minmax(0, 1fr) max-content;
    gap: var(--ss-space-3);
    align-items: center;
    padding: var(--ss-space-2) var(--ss-space-3);
    width: 100%;
    box-sizing: border-box;
    text-align: left;
    border: 0;
    background: transparent;
    border-radius: var(--ss-radius);
  }
  button.head {
    cursor: pointer;
  }
  button.head:hover {
    background: var(--ss-surface);
  }
  .name {
    font-weight: 600;
    display: inline-flex;
    gap: var(--ss-space-1);
    align-items: center;
  }
  .chevron {
    display: inline-block;
    width: 1em;
    transition: transform 0.1s;
  }
  [aria-expanded="true"] .chevron {
    transform: rotate(90deg);
  }
  .status {
    display: inline-flex;
    gap: var(--ss-space-1);
    align-items: center;
    font-size: 0.875rem;
  }
  .status svg {
    width: 14px;
    height: 14px;
  }
  .tone-info { color: var(--ss-info); }
  .tone-success { color: var(--ss-success); }
  .tone-attention { color: var(--ss-attention); }
  .tone-danger, .tone-error { color: var(--ss-danger); }
  .tone-neutral { color: var(--ss-neutral); }
  .summary {
    min-width: 0;
  }
  .duration {
    font-size: 0.875rem;
    color: var(--ss-text-muted);
    font-variant-numeric: tabular-nums;
  }
  /* A phone: name, status and duration on the first line; the summary wraps on its own line below. */
  @media (max-width: 600px) {
    .head {
      grid-template-columns: minmax(0, 1fr) max-content max-content;
      gap: var(--ss-space-1) var(--ss-space-2);
    }
    .summary {
      grid-column: 1 / -1;
      grid-row: 2;
    }
  }
  .body {
    border-top: 1px solid var(--ss-border);
    padding: var(--ss-space-3);
    display: grid;
    gap: var(--ss-space-3);
  }
  .body[hidden] {
    display: none;
  }
  /* Dimmed and neutral, not a warning; muted text keeps its contrast (no opacity). */
  :host([skipped]) .stage {
    color: var(--ss-text-muted);
    background: var(--ss-surface);
    border-style: dashed;
  }
  :host([skipped]) .name {
    font-weight: 400;
  }
`;
