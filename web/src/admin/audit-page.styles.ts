import { css } from "lit";
import { dataTable } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";

export const auditPageStyles = [
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
    td,
    th {
      vertical-align: top;
    }
    .table-wrap {
      overflow-x: auto;
    }
    .seq {
      font-variant-numeric: tabular-nums;
    }
    #load-more {
      margin-top: var(--ss-space-3);
    }
  `,
];
