import { css } from "lit";
import { formControls, ruledStack } from "../ui/shared-styles.ts";

/** After `formControls` (textarea, labels, .row, .error) and the confirmation's rule. */
export const attentionStripStyles = [
  formControls,
  ruledStack(".confirm", "var(--ss-attention)"),
  css`
  :host {
    display: block;
  }
  section {
    border: 1px solid var(--ss-attention);
    background: var(--ss-attention-bg);
    border-radius: var(--ss-radius);
    padding: var(--ss-space-3) var(--ss-space-4);
    display: grid;
    gap: var(--ss-space-3);
  }
  h2 {
    font-size: 1rem;
    margin: 0;
  }
  p {
    margin: 0;
  }
  textarea {
    min-height: 4em;
  }
  .destroy {
    font-weight: 700;
    color: var(--ss-danger);
  }
`,
];
