import { css } from "lit";
import { dataTable, formControls, ruledStack } from "../ui/shared-styles.ts";

/** Shared by the stage evidence elements (policy, approval, apply, plan body); a compact `dataTable`. */
export const evidenceStyles = [
  formControls,
  dataTable,
  ruledStack("form", "var(--ss-border)"),
  css`
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
  textarea {
    min-height: 3.5em;
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
    width: auto;
    font-size: 0.875rem;
  }
  th,
  td {
    padding: var(--ss-space-1) var(--ss-space-2);
    vertical-align: top;
  }
`,
];
