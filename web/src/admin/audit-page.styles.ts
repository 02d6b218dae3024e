import { css } from "lit";
import { dataTable, listPage } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";

export const auditPageStyles = [
  base,
  dataTable,
  listPage,
  css`
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
    .seq {
      font-variant-numeric: tabular-nums;
    }
    #load-more {
      margin-top: var(--ss-space-3);
    }
  `,
];
