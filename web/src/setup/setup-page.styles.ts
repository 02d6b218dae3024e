import { css } from "lit";
import { secretValue } from "../ui/shared-styles.ts";

export const setupPageStyles = [
  secretValue,
  css`
  :host {
    display: block;
    max-width: 640px;
    margin: var(--ss-space-6) auto;
  }
  form {
    max-width: 400px;
  }
  .hint {
    font-size: 0.8125rem;
  }
  ol.steps {
    display: grid;
    gap: var(--ss-space-4);
    padding-left: var(--ss-space-5, 1.25rem);
  }
  pre.snippet {
    overflow-x: auto;
    padding: var(--ss-space-2) var(--ss-space-3);
    border: 1px solid var(--ss-border);
    border-radius: 4px;
    background: var(--ss-surface);
    font-size: 0.8125rem;
  }
`,
];
