import { css } from "lit";

export const recoveryPanelStyles = css`
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
  form {
    display: grid;
    gap: var(--ss-space-2);
    border-top: 1px solid var(--ss-danger);
    padding-top: var(--ss-space-3);
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
`;
