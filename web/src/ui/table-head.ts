import { html, type TemplateResult } from "lit";

/** A table's header row, one column header per name. */
export function tableHead(columns: readonly string[]): TemplateResult {
  return html`<thead>
    <tr>
      ${columns.map((column) => html`<th scope="col">${column}</th>`)}
    </tr>
  </thead>`;
}
