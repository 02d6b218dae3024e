import { css } from "lit";
import { dataTable, formControls } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";

export const tokensPageStyles = [
  base,
  dataTable,
  formControls,
  css`
    :host {
      display: block;
    }
    form.create {
      display: flex;
      flex-wrap: wrap;
      gap: var(--ss-space-3);
      align-items: end;
      margin: var(--ss-space-4) 0;
    }
    form.create label {
      display: grid;
      gap: var(--ss-space-1);
    }
    .secret {
      display: flex;
      flex-wrap: wrap;
      gap: var(--ss-space-2);
      align-items: center;
    }
    .secret code {
      overflow-wrap: anywhere;
    }
    td,
    th {
      vertical-align: top;
    }
    .table-wrap {
      overflow-x: auto;
    }
  `,
];
