import { css } from "lit";
import { dataTable, formControls } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";

export const membersPageStyles = [
  base,
  dataTable,
  formControls,
  css`
    :host {
      display: block;
    }
    form.inline {
      display: flex;
      flex-wrap: wrap;
      gap: var(--ss-space-3);
      align-items: end;
      margin: var(--ss-space-3) 0 var(--ss-space-4);
    }
    form.inline label {
      display: grid;
      gap: var(--ss-space-1);
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
