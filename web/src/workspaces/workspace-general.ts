// The workspace's general settings on its overview (workspace:write): rename, description and
// working directory, sent as one PATCH /v1/workspaces/{id} through client/. A refusal (a taken
// name, a working directory outside the configuration) reads as the server says it; success is
// announced with `ss-workspace-changed` so the page reads the workspace again.
import { consume } from "@lit/context";
import { listProjects, updateWorkspace, type Client, type Workspace } from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { dataOf } from "../app/api.ts";
import { apiContext } from "../app/context.ts";
import { WORKSPACE_NAME_PATTERN } from "../ui/patterns.ts";
import { formControls, settingsForm } from "../ui/shared-styles.ts";
import { base } from "../ui/tokens.ts";
import { perform } from "./workspace-action.ts";
import { failureText } from "./workspace-common.ts";
import { formText } from "../ui/form-data.ts";

/** The attributes that differ from the workspace's (nothing to send when none do). */
export function generalChanges(
  workspace: Workspace,
  form: { name: string; description: string; workingDirectory: string; projectId?: string },
): Record<string, string | null> {
  const a = workspace.attributes;
  const changes: Record<string, string | null> = {};
  if (form.name.trim() !== a.name) changes.name = form.name.trim();
  const description = form.description.trim() === "" ? null : form.description.trim();
  if (description !== (a.description ?? null)) changes.description = description;
  const directory = form.workingDirectory.trim().replace(/^\.\/?/, "");
  if (directory !== a.working_directory) changes.working_directory = directory;
  if (form.projectId && form.projectId !== workspace.relationships.project.data.id) changes.project_id = form.projectId;
  return changes;
}

@customElement("ss-workspace-general")
export class SsWorkspaceGeneral extends LitElement {
  static override styles = [base, formControls, settingsForm];

  @consume({ context: apiContext }) accessor api!: Client;
  @property({ attribute: false }) accessor workspace: Workspace | null = null;
  /** The organization's name, and whether the caller administers it (only then the workspace can move to another project). */
  @property() accessor organization: string | null = null;
  @property({ type: Boolean, attribute: "can-move" }) accessor canMove = false;

  @state() accessor projects: Array<{ id: string; name: string }> | null = null;

  @state() accessor busy = false;
  @state() accessor error: unknown = null;
  @state() accessor notice: string | null = null;

  protected override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (
      (changed.has("canMove") || changed.has("organization")) &&
      this.canMove &&
      this.organization &&
      this.projects === null
    )
      void this.loadProjects(this.organization);
  }

  private async loadProjects(organization: string): Promise<void> {
    try {
      const page = await dataOf(listProjects({ client: this.api, path: { organization_name: organization } }));
      this.projects = page.data.map((p) => ({ id: p.id, name: p.attributes.name }));
    } catch {
      this.projects = []; // no list: the workspace keeps its project, the select is not shown
    }
  }

  override render(): TemplateResult | typeof nothing {
    const w = this.workspace;
    if (!w) return nothing;
    const current = w.relationships.project.data.id;
    return html`<form id="general-form" @submit=${(e: SubmitEvent) => void this.save(e)}>
      <label>Name <input name="name" id="general-name" required autocomplete="off" pattern=${WORKSPACE_NAME_PATTERN} maxlength="90" .value=${w.attributes.name} /></label>
      <label>Description <input name="description" id="general-description" autocomplete="off" maxlength="1000" .value=${w.attributes.description ?? ""} /></label>
      <label
        >Working directory (relative to the configuration's root; empty for the root)
        <input name="working_directory" id="general-working-directory" autocomplete="off" maxlength="1000" .value=${w.attributes.working_directory}
      /></label>
      ${
        this.canMove && this.projects && this.projects.length > 1
          ? html`<label
              >Project (who reaches the workspace through project roles changes with it)
              <select name="project_id" id="general-project">
                ${this.projects.map((p) => html`<option value=${p.id} ?selected=${p.id === current}>${p.name}</option>`)}
              </select></label
            >`
          : nothing
      }
      <p class="muted">Renaming changes the name a <code>cloud</code> block must use to find this workspace.</p>
      <div><button type="submit" ?disabled=${this.busy}>Save settings</button></div>
      ${this.notice ? html`<p role="status" id="general-notice">${this.notice}</p>` : nothing}
      ${this.error ? html`<p class="error" role="alert" id="general-error">${failureText(this.error)}</p>` : nothing}
    </form>`;
  }

  private async save(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const w = this.workspace;
    if (!w) return;
    const data = new FormData(event.target as HTMLFormElement);
    const changes = generalChanges(w, {
      name: formText(data, "name"),
      description: formText(data, "description"),
      workingDirectory: formText(data, "working_directory"),
      projectId: data.has("project_id") ? formText(data, "project_id") : undefined,
    });
    this.error = null;
    this.notice = null;
    if (Object.keys(changes).length === 0) {
      this.notice = "Nothing changed.";
      return;
    }
    await perform(
      this,
      () =>
        dataOf(
          updateWorkspace({
            client: this.api,
            path: { workspace_id: w.id },
            body: { data: { type: "workspaces", attributes: changes } },
          }),
        ),
      () => {
        this.notice = "Saved.";
        this.dispatchEvent(new CustomEvent("ss-workspace-changed", { bubbles: true, composed: true }));
      },
    );
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-general": SsWorkspaceGeneral;
  }
}
