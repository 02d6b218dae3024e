// /organizations — deployment administrators: every organization, and create one (with its
// Default Project); the organization switcher shows a new one at once.
import { consume } from "@lit/context";
import { Task } from "@lit/task";
import { createOrganization, listOrganizations, type Client } from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, state } from "lit/decorators.js";
import { dataOf, RequestFailed } from "../app/api.ts";
import { apiContext, sessionContext } from "../app/context.ts";
import { absoluteUtc } from "../app/format.ts";
import type { Session } from "../app/session.ts";
import { dataTable, formControls, listPage } from "../ui/shared-styles.ts";
import { tableHead } from "../ui/table-head.ts";
import { base } from "../ui/tokens.ts";
import { ORGANIZATION_NAME_PATTERN } from "../ui/patterns.ts";
import { takeSubmit } from "../ui/form-data.ts";

@customElement("ss-organizations-page")
export class SsOrganizationsPage extends LitElement {
  static override styles = [base, dataTable, formControls, listPage];

  @consume({ context: apiContext }) accessor api!: Client;
  @consume({ context: sessionContext, subscribe: true }) @state() accessor session: Session | null = null;

  @state() accessor error: string | null = null;
  @state() accessor notice: string | null = null;
  @state() accessor busy = false;

  private readonly organizations = new Task(this, {
    args: () => [this.session?.user.id ?? null] as const,
    task: async (_args, { signal }) => (await dataOf(listOrganizations({ client: this.api, signal }))).data,
  });

  private async create(event: SubmitEvent): Promise<void> {
    const { form, trimmed } = takeSubmit(event);
    const name = trimmed("name");
    this.busy = true;
    this.error = null;
    this.notice = null;
    try {
      await dataOf(
        createOrganization({ client: this.api, body: { data: { type: "organizations", attributes: { name } } } }),
      );
      this.notice = `The organization ${name} was created with its Default Project.`;
      form.reset();
      void this.organizations.run();
      // The shell re-reads the session's organizations: the switcher shows the new one.
      this.dispatchEvent(new CustomEvent("ss-organizations-changed", { bubbles: true, composed: true }));
    } catch (error) {
      this.error = error instanceof RequestFailed ? error.message : "The organization could not be created.";
    } finally {
      this.busy = false;
    }
  }

  override render(): TemplateResult {
    if (!this.session?.user.site_admin) {
      return html`<h1>Organizations</h1><p class="notice info" role="status" id="organizations-not-allowed">Only a deployment administrator manages organizations.</p>`;
    }
    return html`<h1>Organizations</h1>
      ${this.error ? html`<p class="notice danger" role="alert" id="organizations-error">${this.error}</p>` : nothing}
      ${this.notice ? html`<p class="notice info" role="status" id="organizations-notice">${this.notice}</p>` : nothing}
      <form class="inline" @submit=${(e: SubmitEvent) => void this.create(e)}>
        <label>New organization <input name="name" required autocomplete="off" pattern=${ORGANIZATION_NAME_PATTERN} placeholder="e.g. acme" /></label>
        <button class="primary" type="submit" ?disabled=${this.busy}>Create organization</button>
      </form>
      ${this.organizations.render({
        pending: () => html`<p role="status">Loading organizations…</p>`,
        error: (error) =>
          html`<p class="notice danger" role="alert">The organizations could not be read${error instanceof RequestFailed ? html` (${error.summary})` : nothing}.</p>`,
        complete: (list) =>
          list.length === 0
            ? html`<p id="organizations-empty">No organizations yet.</p>`
            : html`<table id="organizations-table">
                <caption class="visually-hidden">Organizations</caption>
                ${tableHead(["Organization", "Created"])}
                <tbody>
                  ${list.map((o) => html`<tr data-organization=${o.attributes.name}><td>${o.attributes.name}</td><td>${absoluteUtc(o.attributes.created_at)}</td></tr>`)}
                </tbody>
              </table>`,
      })}`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-organizations-page": SsOrganizationsPage;
  }
}
