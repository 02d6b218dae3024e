// /policy-sets — the organization's policy sets: each with its scope (global, or the workspaces
// and projects it is attached to), its current immutable version (number, digest, the policies
// and their enforcement levels); organization admins publish a new version or create a set from
// `.rego` files chosen in the browser, or `.tar.gz` bundles of them unpacked in the browser (one
// policy per module, named after its file).
import { consume } from "@lit/context";
import { Task } from "@lit/task";
import {
  createPolicySet,
  createPolicySetVersion,
  listPolicySets,
  listWorkspaces,
  type Client,
  type PolicyInput,
  type PolicySet,
} from "@stackship/client";
import { LitElement, css, html, nothing, type TemplateResult } from "lit";
import { customElement, state } from "lit/decorators.js";
import { dataOf, RequestFailed } from "../app/api.ts";
import { apiContext, sessionContext } from "../app/context.ts";
import { absoluteUtc } from "../app/format.ts";
import type { Session } from "../app/session.ts";
import { dataTable, formControls, listPage } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";
import { regoModules } from "./rego-archive.ts";
import { takeSubmit } from "../ui/form-data.ts";

type Level = PolicyInput["enforcement_level"];
const LEVELS: Record<Level, string> = {
  advisory: "advisory",
  soft_mandatory: "soft-mandatory",
  hard_mandatory: "hard-mandatory",
};

/** The policies of the chosen `.rego` files or `.tar.gz` bundles: one per module, named after its file, all at `level`. */
async function policiesFrom(files: FileList | null, level: Level): Promise<PolicyInput[]> {
  if (!files || files.length === 0) throw new Error("Choose at least one .rego file or a .tar.gz of them.");
  const modules = await regoModules([...files]);
  return modules.map((m) => ({
    name: m.name.replace(/[^A-Za-z0-9_-]/g, "-"),
    enforcement_level: level,
    source: m.source,
  }));
}

@customElement("ss-policy-sets-page")
export class SsPolicySetsPage extends LitElement {
  static override styles = [
    base,
    dataTable,
    formControls,
    listPage,
    css`
      article {
        border: 1px solid var(--ss-border);
        border-radius: 6px;
        padding: var(--ss-space-3) var(--ss-space-4);
        margin-bottom: var(--ss-space-4);
      }
      article h2 {
        margin-top: 0;
      }
      form {
        display: grid;
        gap: var(--ss-space-2);
        max-width: 560px;
        margin: var(--ss-space-3) 0;
      }
      form label {
        display: grid;
        gap: var(--ss-space-1);
      }
      .digest {
        overflow-wrap: anywhere;
      }
    `,
  ];

  @consume({ context: apiContext }) accessor api!: Client;
  @consume({ context: sessionContext, subscribe: true }) @state() accessor session: Session | null = null;

  /** The set whose new-version form is open ("new" for the new-set form). */
  @state() accessor editing: string | null = null;
  @state() accessor error: string | null = null;
  @state() accessor notice: string | null = null;
  @state() accessor busy = false;

  private readonly sets = new Task(this, {
    args: () => [this.session?.organization ?? null] as const,
    task: async ([organization], { signal }) => {
      if (!organization) return null;
      const path = { organization_name: organization };
      const [sets, workspaces] = await Promise.all([
        dataOf(listPolicySets({ client: this.api, path, signal })),
        dataOf(listWorkspaces({ client: this.api, path, signal })).catch(() => null),
      ]);
      return { sets: sets.data, workspaces: new Map((workspaces?.data ?? []).map((w) => [w.id, w.attributes.name])) };
    },
  });

  private async run(what: string, call: () => Promise<string>): Promise<void> {
    this.busy = true;
    this.error = null;
    this.notice = null;
    try {
      this.notice = await call();
      this.editing = null;
      void this.sets.run();
    } catch (error) {
      this.error = `${what}: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      this.busy = false;
    }
  }

  private publish(event: SubmitEvent, set: PolicySet): void {
    const { form, trimmed } = takeSubmit(event);
    const files = (form.elements.namedItem("files") as HTMLInputElement).files;
    const level = trimmed("level") as Level;
    void this.run("Publishing the version", async () => {
      const policies = await policiesFrom(files, level);
      await dataOf(
        createPolicySetVersion({
          client: this.api,
          path: { policy_set_id: set.id },
          body: { data: { type: "policy-set-versions", attributes: { policies } } },
        }),
      );
      return `${set.attributes.name} has a new version; later runs evaluate it.`;
    });
  }

  private create(event: SubmitEvent): void {
    const { form, trimmed } = takeSubmit(event);
    const organization = this.session?.organization;
    if (!organization) return;
    const name = trimmed("name");
    const scope = trimmed("scope");
    const files = (form.elements.namedItem("files") as HTMLInputElement).files;
    const level = trimmed("level") as Level;
    void this.run("Creating the policy set", async () => {
      const policies = await policiesFrom(files, level);
      const attachment = scope === "" ? { global: true } : { global: false, workspace_ids: [scope] };
      await dataOf(
        createPolicySet({
          client: this.api,
          path: { organization_name: organization },
          body: { data: { type: "policy-sets", attributes: { name, policies, ...attachment } } },
        }),
      );
      return `The policy set ${name} was created.`;
    });
  }

  override render(): TemplateResult {
    const organization = this.session?.organization ?? null;
    if (!organization)
      return html`<h1>Policy sets</h1><p class="notice info" role="status">You are not a member of any organization yet.</p>`;
    return html`<h1>Policy sets</h1>
      <p class="muted">Rego policies every plan of <strong>${organization}</strong> is checked against before it can be approved. A version is immutable; runs keep the version they were evaluated with.</p>
      ${this.error ? html`<p class="notice danger" role="alert" id="policy-sets-error">${this.error}</p>` : nothing}
      ${this.notice ? html`<p class="notice info" role="status" id="policy-sets-notice">${this.notice}</p>` : nothing}
      ${this.sets.render({
        pending: () => html`<p role="status">Loading policy sets…</p>`,
        error: (error) =>
          html`<div class="notice danger" role="alert"><p>The policy sets could not be read${error instanceof RequestFailed ? html` (${error.summary})` : nothing}. Try again in a moment.</p></div>`,
        complete: (loaded) => (loaded ? this.renderSets(loaded.sets, loaded.workspaces) : nothing),
      })}`;
  }

  private levelSelect(): TemplateResult {
    return html`<label
      >Enforcement level
      <select name="level">
        ${(Object.keys(LEVELS) as Level[]).map((level) => html`<option value=${level} ?selected=${level === "soft_mandatory"}>${LEVELS[level]}</option>`)}
      </select>
    </label>`;
  }

  private renderSets(sets: PolicySet[], workspaces: Map<string, string>): TemplateResult {
    const admin = this.session?.organizationAdmin === true;
    return html`
      ${admin && this.editing !== "new" ? html`<button class="primary" id="new-policy-set" @click=${() => (this.editing = "new")}>New policy set</button>` : nothing}
      ${
        this.editing === "new"
          ? html`<form id="new-policy-set-form" @submit=${(e: SubmitEvent) => this.create(e)}>
            <label>Name <input name="name" required autocomplete="off" /></label>
            <label
              >Applies to
              <select name="scope">
                <option value="">every workspace (global)</option>
                ${[...workspaces].map(([id, name]) => html`<option value=${id}>workspace ${name}</option>`)}
              </select>
            </label>
            <label>Policies (.rego files, one policy each, or a .tar.gz of them) <input type="file" name="files" accept=".rego,.tar.gz,.tgz" multiple /></label>
            ${this.levelSelect()}
            <div class="row">
              <button class="primary" type="submit" ?disabled=${this.busy}>Create policy set</button>
              <button type="button" @click=${() => (this.editing = null)}>Cancel</button>
            </div>
          </form>`
          : nothing
      }
      ${sets.length === 0 ? html`<p id="policy-sets-empty">No policy sets yet: plans are not checked against any policy.</p>` : sets.map((set) => this.renderSet(set, workspaces, admin))}
    `;
  }

  private renderSet(set: PolicySet, workspaces: Map<string, string>, admin: boolean): TemplateResult {
    const a = set.attributes;
    const scope = a.global
      ? "every workspace (global)"
      : [
          ...a.workspace_ids.map((id) => `workspace ${workspaces.get(id) ?? id}`),
          ...a.project_ids.map((id) => `project ${id}`),
        ].join(", ") || "nothing yet";
    const v = a.current_version;
    return html`<article data-policy-set=${a.name} aria-labelledby="set-${set.id}">
      <h2 id="set-${set.id}">${a.name}</h2>
      ${a.description ? html`<p>${a.description}</p>` : nothing}
      <p>Applies to ${scope}.</p>
      ${
        v
          ? html`<p>
              Version <strong>${v.version}</strong>, published <time datetime=${v.created_at}>${absoluteUtc(v.created_at)}</time>. Digest
              <span class="mono digest">${v.digest}</span>
            </p>
            <table>
              <caption class="visually-hidden">Policies of ${a.name}</caption>
              <thead><tr><th scope="col">Policy</th><th scope="col">Enforcement</th><th scope="col">Package</th></tr></thead>
              <tbody>
                ${v.policies.map((p) => html`<tr><td>${p.name}</td><td>${LEVELS[p.enforcement_level] ?? p.enforcement_level}</td><td class="mono">${p.package}</td></tr>`)}
              </tbody>
            </table>`
          : html`<p class="muted">No version yet.</p>`
      }
      ${
        admin
          ? this.editing === set.id
            ? html`<form class="new-version" @submit=${(e: SubmitEvent) => this.publish(e, set)}>
                <label>Policies of the new version (.rego files, one policy each, or a .tar.gz of them) <input type="file" name="files" accept=".rego,.tar.gz,.tgz" multiple /></label>
                ${this.levelSelect()}
                <div class="row">
                  <button class="primary" type="submit" ?disabled=${this.busy}>Publish version</button>
                  <button type="button" @click=${() => (this.editing = null)}>Cancel</button>
                </div>
              </form>`
            : html`<button @click=${() => (this.editing = set.id)} aria-label="New version of ${a.name}">New version</button>`
          : nothing
      }
    </article>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-policy-sets-page": SsPolicySetsPage;
  }
}
