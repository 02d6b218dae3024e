// Style fragments more than one element uses, each put in an element's `static styles` before the
// element's own sheet (which keeps or overrides the rest). Colours and spacing come from the tokens.
import { css, unsafeCSS, type CSSResult } from "lit";

/** A block element whose section heading is an `h2`. */
export const headedBlock = css`
  :host {
    display: block;
  }
  h2 {
    font-size: 1.125rem;
    margin: 0 0 var(--ss-space-2);
  }
`;

/** A form of stacked fields, each label above its control. */
export const stackedForm = css`
  form {
    display: grid;
    gap: var(--ss-space-3);
  }
  label {
    display: grid;
    gap: var(--ss-space-1);
  }
`;

/** A settings form of stacked fields (at most 520 px wide), each label above its control, which never widens the page. */
export const settingsForm = css`
  :host {
    display: block;
  }
  form {
    display: grid;
    gap: var(--ss-space-2);
    max-width: 520px;
  }
  label {
    display: grid;
    grid-template-columns: minmax(0, 1fr);
    gap: var(--ss-space-1);
  }
`;

/** The controls of an inline form: a full-width textarea, bold labels, a row of buttons, an error line. */
export const formControls = css`
  textarea {
    width: 100%;
    box-sizing: border-box;
  }
  label {
    font-weight: 600;
  }
  .row {
    display: flex;
    flex-wrap: wrap;
    gap: var(--ss-space-2);
    align-items: center;
  }
  .error {
    color: var(--ss-danger);
  }
`;

/** A full-width data table: left-aligned cells with a rule under each row. */
export const dataTable = css`
  table {
    width: 100%;
    border-collapse: collapse;
  }
  th,
  td {
    text-align: left;
    padding: var(--ss-space-2) var(--ss-space-3);
    border-bottom: 1px solid var(--ss-border);
  }
  /* A phone: a table wider than the window scrolls inside itself; the page never scrolls sideways. */
  @media (max-width: 600px) {
    table {
      display: block;
      max-width: 100%;
      overflow-x: auto;
    }
    th,
    td {
      padding: var(--ss-space-1) var(--ss-space-2);
    }
  }
`;

/** A rounded, outlined pill (a status or phase badge) for the elements `selector` names; its tone sets the colours. */
export function pill(selector: string): CSSResult {
  return css`
    ${unsafeCSS(selector)} {
      display: inline-flex;
      align-items: center;
      gap: var(--ss-space-1);
      border: 1px solid currentColor;
      border-radius: 999px;
      padding: 1px var(--ss-space-2);
    }
  `;
}

/** A block of stacked controls below a rule in the colour `rule` (a token), for the elements `selector` names. */
export function ruledStack(selector: string, rule: string): CSSResult {
  return css`
    ${unsafeCSS(selector)} {
      display: grid;
      gap: var(--ss-space-2);
      border-top: 1px solid ${unsafeCSS(rule)};
      padding-top: var(--ss-space-3);
    }
  `;
}

/** A page of lists and small forms (the administration pages): a row of labelled fields, a table that scrolls on its own. */
export const listPage = css`
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
    grid-template-columns: minmax(0, 1fr);
    max-width: 100%;
    gap: var(--ss-space-1);
  }
  .table-wrap {
    overflow-x: auto;
  }
  td,
  th {
    vertical-align: top;
  }
`;

/** A wrapping row of filters above a list, each a bold label over its control. */
export const filterBar = css`
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
`;

/** A secret shown once (`.secret`): its value wraps anywhere beside its copy control. */
export const secretValue = css`
  .secret {
    display: flex;
    flex-wrap: wrap;
    gap: var(--ss-space-2);
    align-items: center;
  }
  .secret code {
    overflow-wrap: anywhere;
  }
`;
