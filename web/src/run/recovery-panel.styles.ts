import { css } from "lit";
import { ruledStack } from "../ui/shared-styles.ts";

/** After the resolve form's rule. */
export const recoveryPanelStyles = [
  ruledStack("form", "var(--ss-danger)"),
  css`
  :host {
    display: block;
  }
  section {
    display: grid;
    gap: var(--ss-space-3);
  }
  h2 {
    font-size: 1.125rem;
    margin: 0;
  }
  dl {
    display: grid;
    grid-template-columns: max-content 1fr;
    gap: var(--ss-space-1) var(--ss-space-4);
    margin: 0;
  }
  dt {
    color: var(--ss-text-muted);
  }
  dd {
    margin: 0;
    overflow-wrap: anywhere;
  }
  pre {
    margin: 0;
  }
  fieldset {
    border: 0;
    padding: 0;
    margin: 0;
    display: grid;
    gap: var(--ss-space-1);
  }
  legend {
    font-weight: 600;
    margin-bottom: var(--ss-space-1);
  }
  textarea {
    width: 100%;
    box-sizing: border-box;
    min-height: 4em;
  }
  .error {
    color: var(--ss-danger);
  }
`,
];
