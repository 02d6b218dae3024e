// /workspaces/{id}/variables — the workspace's variables: the list (a sensitive value is never
// shown: the API returns null for it), create, edit and delete (workspace:write). A sensitive
// value is write-only: the form says so, and editing one replaces it without showing the old.
import { createVariable, deleteVariable, listVariables, updateVariable, type Variable } from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { dataOf } from "../app/api.ts";
import { tableHead } from "../ui/table-head.ts";
import { perform } from "./workspace-action.ts";
import { failureText, workspaceStyles } from "./workspace-common.ts";
import { workspaceFrame } from "./workspace-frame.ts";
import { WorkspaceLoader } from "./workspace-loader.ts";

type Category = Variable["attributes"]["category"];

@customElement("ss-workspace-variables-page")
export class SsWorkspaceVariablesPage extends LitElement {
  static override styles = workspaceStyles;

  @property({ attribute: "workspace-id" }) accessor workspaceId = "";

  /** The variable being edited ("new" for the create form), or null. */
  @state() accessor editing: string | null = null;
  @state() accessor deleting: string | null = null;
  @state() accessor error: unknown = null;
  @state() accessor notice: string | null = null;
  @state() accessor busy = false;

  private readonly page = new WorkspaceLoader(this, async (api, id, signal) => {
    const variables = await dataOf(listVariables({ client: api, path: { workspace_id: id }, signal }));
    return { variables: [...variables.data].sort((a, b) => a.attributes.key.localeCompare(b.attributes.key)) };
  });

  private async save(event: SubmitEvent, existing: Variable | null): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const text = (name: string) =>
      (form.elements.namedItem(name) as HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement).value;
    const checked = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).checked;
    const value = text("value");
    const attributes = {
      key: text("key").trim(),
      category: text("category") as Category,
      hcl: checked("hcl"),
      sensitive: checked("sensitive"),
      description: text("description").trim(),
    };
    this.notice = null;
    // An empty value on a sensitive variable keeps the stored one (it is never shown to edit).
    const keep = existing !== null && existing.attributes.sensitive && value === "";
    const send = () =>
      existing
        ? updateVariable({
            client: this.page.api,
            path: { workspace_id: this.workspaceId, variable_id: existing.id },
            body: {
              data: { type: "variables", id: existing.id, attributes: { ...attributes, ...(keep ? {} : { value }) } },
            },
          })
        : createVariable({
            client: this.page.api,
            path: { workspace_id: this.workspaceId },
            body: { data: { type: "variables", attributes: { ...attributes, value } } },
          });
    await perform(
      this,
      () => dataOf(send()),
      () => {
        this.notice = `${attributes.key} was ${existing ? "saved" : "added"}.`;
        this.editing = null;
        this.page.reload();
      },
    );
  }

  private async removeVariable(variable: Variable): Promise<void> {
    await perform(
      this,
      // 204 has no body: a null stands for it so dataOf only has to judge the status.
      () =>
        dataOf(
          deleteVariable({
            client: this.page.api,
            path: { workspace_id: this.workspaceId, variable_id: variable.id },
          }).then((r) => ({ ...r, data: r.data ?? null })),
        ),
      () => {
        this.notice = `${variable.attributes.key} was deleted.`;
        this.deleting = null;
        this.page.reload();
      },
    );
  }

  override render(): TemplateResult {
    return workspaceFrame(this.page, {
      tab: "variables",
      loading: "Loading variables…",
      heading: (workspace) => `Variables of ${workspace.attributes.name}`,
      body: ({ permissions: { write }, variables }) => this.renderVariables(variables, write),
    });
  }

  private renderVariables(variables: Variable[], write: boolean): TemplateResult {
    return html`<p class="muted">Every run of this workspace gets them: Terraform variables as the configuration's input variables, environment variables in the run's environment.</p>
        ${this.error ? html`<p class="notice danger" role="alert" id="variables-error">${failureText(this.error)}</p>` : nothing}
        ${this.notice ? html`<p class="notice info" role="status" id="variables-notice">${this.notice}</p>` : nothing}
        ${write && this.editing !== "new" ? html`<button class="primary" id="add-variable" @click=${() => (this.editing = "new")}>Add variable</button>` : nothing}
        ${this.editing === "new" ? this.renderForm(null) : nothing}
        ${variables.length === 0 ? html`<p id="variables-empty">No variables yet.</p>` : this.renderTable(variables, write)}`;
  }

  private renderTable(variables: Variable[], write: boolean): TemplateResult {
    return html`<table id="variables-table">
      <caption class="visually-hidden">Variables</caption>
      ${tableHead(["Key", "Value", "Category", "Description", ...(write ? [""] : [])])}
      <tbody>
        ${variables.map((v) => (this.editing === v.id ? html`<tr><td colspan=${write ? 5 : 4}>${this.renderForm(v)}</td></tr>` : this.renderRow(v, write)))}
      </tbody>
    </table>`;
  }

  private renderRow(v: Variable, write: boolean): TemplateResult {
    const a = v.attributes;
    return html`<tr data-variable-key=${a.key}>
      <td class="mono">${a.key}${a.hcl ? html` <span class="muted">HCL</span>` : nothing}</td>
      <td class="mono">${a.sensitive ? html`<span class="muted">sensitive: write-only</span>` : a.value}</td>
      <td>${a.category === "env" ? "environment" : "Terraform"}</td>
      <td>${a.description ?? ""}</td>
      ${
        write
          ? html`<td>
            ${
              this.deleting === v.id
                ? html`<span class="row"
                  >Delete ${a.key}? <button class="danger" ?disabled=${this.busy} @click=${() => void this.removeVariable(v)}>Delete variable</button>
                  <button @click=${() => (this.deleting = null)}>Keep</button></span
                >`
                : html`<button @click=${() => (this.editing = v.id)} aria-label="Edit ${a.key}">Edit</button>
                  <button @click=${() => (this.deleting = v.id)} aria-label="Delete ${a.key}">Delete</button>`
            }
          </td>`
          : nothing
      }
    </tr>`;
  }

  private renderForm(existing: Variable | null): TemplateResult {
    const a = existing?.attributes;
    return html`<form class="settings" id=${existing ? "edit-variable" : "new-variable"} @submit=${(e: SubmitEvent) => void this.save(e, existing)}>
      <label>Key <input name="key" required autocomplete="off" .value=${a?.key ?? ""} pattern="[A-Za-z_][A-Za-z0-9_]{0,127}" /></label>
      <label
        >Value
        <textarea name="value" rows="2" placeholder=${a?.sensitive ? "Leave empty to keep the stored value" : ""} .value=${a?.sensitive ? "" : (a?.value ?? "")}></textarea>
      </label>
      <label
        >Category
        <select name="category">
          <option value="terraform" ?selected=${a?.category !== "env"}>Terraform variable</option>
          <option value="env" ?selected=${a?.category === "env"}>Environment variable</option>
        </select>
      </label>
      <label>Description <input name="description" autocomplete="off" maxlength="500" .value=${a?.description ?? ""} /></label>
      <label class="check"><input type="checkbox" name="hcl" ?checked=${a?.hcl ?? false} /> Parse as HCL (a list, a map, a number)</label>
      <label class="check"
        ><input type="checkbox" name="sensitive" ?checked=${a?.sensitive ?? false} ?disabled=${a?.sensitive ?? false} aria-describedby="sensitive-note" /> Sensitive</label
      >
      <p class="muted" id="sensitive-note">
        A sensitive value is write-only: StackShip never shows it again, here or in any API answer, and redacts it from logs and plans.${a?.sensitive ? " It stays sensitive." : ""}
      </p>
      <div class="row">
        <button class="primary" type="submit" ?disabled=${this.busy}>${existing ? "Save variable" : "Add variable"}</button>
        <button type="button" @click=${() => ((this.editing = null), (this.error = null))}>Cancel</button>
      </div>
    </form>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-variables-page": SsWorkspaceVariablesPage;
  }
}
