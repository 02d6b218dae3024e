import { css } from "lit";
import { headedBlock } from "../ui/shared-styles.ts";

/** After `headedBlock` (a block with an h2 heading). */
export const stageTimelineStyles = [
  headedBlock,
  css`
  ol {
    list-style: none;
    margin: 0;
    padding: 0;
    display: grid;
    gap: var(--ss-space-2);
  }
  .summary {
    display: inline-flex;
    flex-wrap: wrap;
    max-width: 100%;
    gap: var(--ss-space-2);
    align-items: center;
    font-size: 0.875rem;
  }
  .attention-badge {
    color: var(--ss-attention);
    background: var(--ss-attention-bg);
    border: 1px solid var(--ss-attention);
    border-radius: 999px;
    padding: 0 var(--ss-space-2);
    font-weight: 600;
  }
  .quiet {
    color: var(--ss-text-muted);
  }
`,
];
