import { css } from "lit";
import { dataTable } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";

export const runsPageStyles = [
  base,
  dataTable,
  css`
    :host {
      display: block;
    }
    .filters {
      display: flex;
      flex-wrap: wrap;
      gap: var(--ss-space-4);
      margin: var(--ss-space-4) 0;
    }
    .filters label {
      display: grid;
      gap: var(--ss-space-1);
      font-weight: 600;
    }
    .filters input {
      min-width: 280px;
    }
    th,
    td {
      vertical-align: top;
    }
    th {
      font-size: 0.85em;
      color: var(--ss-text-muted);
    }
    .run-id {
      font-size: 0.8em;
    }
    .duration {
      font-variant-numeric: tabular-nums;
      white-space: nowrap;
    }
    #load-more {
      margin-top: var(--ss-space-3);
    }
  `,
];
