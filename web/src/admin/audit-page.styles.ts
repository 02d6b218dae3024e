import { css } from "lit";
import { dataTable, filterBar, listPage } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";

export const auditPageStyles = [
  base,
  dataTable,
  listPage,
  filterBar,
  css`
    .seq {
      font-variant-numeric: tabular-nums;
    }
    #load-more {
      margin-top: var(--ss-space-3);
    }
  `,
];
