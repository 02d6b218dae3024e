import { css } from "lit";
import { pill } from "../ui/shared-styles.ts";

/** After `pill(".status")`. */
export const runHeaderStyles = [
  pill(".status"),
  css`
  :host {
    display: block;
  }
  header {
    display: grid;
    gap: var(--ss-space-3);
  }
  .top {
    display: flex;
    flex-wrap: wrap;
    align-items: flex-start;
    justify-content: space-between;
    gap: var(--ss-space-3);
  }
  h1 {
    font-size: 1.5rem;
    margin: 0;
    overflow-wrap: anywhere;
  }
  .breadcrumb {
    font-size: 0.85em;
    color: var(--ss-text-muted);
    overflow-wrap: anywhere;
  }
  .message-body {
    margin: var(--ss-space-1) 0 0;
    white-space: pre-line;
    overflow-wrap: anywhere;
  }
  .unrecorded {
    margin: 0;
    font-size: 0.85em;
  }
  .commit-message {
    margin: var(--ss-space-1) 0 0;
    color: var(--ss-text-muted);
    white-space: pre-line;
    overflow-wrap: anywhere;
  }
  .chips {
    display: flex;
    flex-wrap: wrap;
    gap: var(--ss-space-2);
    align-items: center;
  }
  .status {
    font-weight: 600;
  }
  .status svg {
    width: 14px;
    height: 14px;
  }
  .tone-info { color: var(--ss-info); background: var(--ss-info-bg); }
  .tone-success { color: var(--ss-success); background: var(--ss-success-bg); }
  .tone-attention { color: var(--ss-attention); background: var(--ss-attention-bg); }
  .tone-danger, .tone-error { color: var(--ss-danger); background: var(--ss-danger-bg); }
  .tone-neutral { color: var(--ss-neutral); background: var(--ss-neutral-bg); }
  .kind {
    border: 1px solid var(--ss-border);
    border-radius: 999px;
    padding: 1px var(--ss-space-2);
  }
  dl {
    display: grid;
    grid-template-columns: repeat(auto-fill, minmax(200px, 1fr));
    gap: var(--ss-space-2) var(--ss-space-4);
    margin: 0;
  }
  dl > div {
    min-width: 0;
  }
  dt {
    font-size: 0.8125rem;
    color: var(--ss-text-muted);
  }
  dd {
    margin: 0;
    overflow-wrap: anywhere;
  }
  .actions {
    display: flex;
    gap: var(--ss-space-2);
    align-items: center;
    flex-wrap: wrap;
  }
  .confirm {
    display: flex;
    gap: var(--ss-space-2);
    align-items: center;
    flex-wrap: wrap;
  }
  .copy {
    margin-left: var(--ss-space-2);
    padding: 0 var(--ss-space-2);
    font-size: 0.8125rem;
  }
  .error {
    color: var(--ss-danger);
  }
  .stale-note {
    color: var(--ss-text-muted, inherit);
    font-size: 0.8125rem;
    font-style: italic;
  }
`,
];
