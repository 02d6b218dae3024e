import { css } from "lit";
import { dataTable, formControls, listPage } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";

export const tokensPageStyles = [
  base,
  dataTable,
  formControls,
  listPage,
  css`
    .secret {
      display: flex;
      flex-wrap: wrap;
      gap: var(--ss-space-2);
      align-items: center;
    }
    .secret code {
      overflow-wrap: anywhere;
    }
  `,
];
