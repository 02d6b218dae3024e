import { css } from "lit";

/** Shared by the stage evidence elements (policy, approval, apply, plan body). */
export const evidenceStyles = css`
  :host {
    display: block;
  }
  .lead {
    font-weight: 600;
    margin: 0;
  }
  p {
    margin: 0;
  }
  .stack {
    display: grid;
    gap: var(--ss-space-2);
  }
  .secondary {
    font-size: 0.8125rem;
    color: var(--ss-text-muted);
    overflow-wrap: anywhere;
  }
  ul.findings {
    list-style: none;
    padding: 0;
    margin: 0;
    display: grid;
    gap: var(--ss-space-2);
  }
  ul.findings li {
    border-left: 3px solid var(--ss-attention);
    padding-left: var(--ss-space-2);
  }
  ul.findings li.hard_mandatory {
    border-left-color: var(--ss-danger);
  }
  ul.findings li.advisory {
    border-left-color: var(--ss-info);
  }
  .level {
    font-size: 0.75rem;
    text-transform: uppercase;
    letter-spacing: 0.03em;
    color: var(--ss-text-muted);
  }
  form {
    display: grid;
    gap: var(--ss-space-2);
    border-top: 1px solid var(--ss-border);
    padding-top: var(--ss-space-3);
  }
  textarea {
    width: 100%;
    box-sizing: border-box;
    min-height: 3.5em;
  }
  label {
    font-weight: 600;
  }
  .row {
    display: flex;
    flex-wrap: wrap;
    gap: var(--ss-space-2);
    align-items: center;
  }
  .error {
    color: var(--ss-danger);
  }
  [role="tablist"] {
    display: flex;
    gap: var(--ss-space-1);
    border-bottom: 1px solid var(--ss-border);
  }
  [role="tab"] {
    border: 1px solid transparent;
    border-bottom: 0;
    border-radius: var(--ss-radius) var(--ss-radius) 0 0;
    background: transparent;
  }
  [role="tab"][aria-selected="true"] {
    border-color: var(--ss-border);
    background: var(--ss-bg);
    font-weight: 600;
  }
  table {
    border-collapse: collapse;
    font-size: 0.875rem;
  }
  th,
  td {
    text-align: left;
    padding: var(--ss-space-1) var(--ss-space-2);
    border-bottom: 1px solid var(--ss-border);
    vertical-align: top;
  }
`;
