import { css } from "lit";
import { headedBlock } from "../ui/shared-styles.ts";

/** After `headedBlock` (a block with an h2 heading). */
export const runDownloadsStyles = [
  headedBlock,
  css`
  .items {
    display: grid;
    gap: var(--ss-space-3);
  }
  .items.compact {
    display: flex;
    flex-wrap: wrap;
    gap: var(--ss-space-2);
    align-items: center;
  }
  form.guarded {
    display: grid;
    gap: var(--ss-space-2);
    border: 1px solid var(--ss-border);
    border-radius: var(--ss-radius);
    padding: var(--ss-space-3);
  }
  details {
    margin-top: var(--ss-space-2);
  }
  details .items {
    margin-top: var(--ss-space-2);
  }
  summary {
    cursor: pointer;
    font-weight: 600;
  }
  h3 {
    font-size: 1rem;
    margin: 0;
  }
  p {
    margin: 0;
  }
  label {
    font-weight: 600;
  }
  input[type="text"] {
    width: 100%;
    box-sizing: border-box;
  }
  .row {
    display: flex;
    gap: var(--ss-space-2);
    align-items: center;
    flex-wrap: wrap;
  }
  .error {
    color: var(--ss-danger);
  }
`,
];
