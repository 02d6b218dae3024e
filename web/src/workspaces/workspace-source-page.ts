// /workspaces/{id}/source — where runs of this workspace come from: the GitHub App pipeline's
// state on this deployment (off: the variables it misses; on: the webhook URL to configure), the
// workspace's repository connection (or plainly none, and what to do), the last webhook deliveries
// about that repository, and for organization administrators a form to connect, change or
// disconnect it (organization administrators, who alone also see the App id and API URL).
// Everything through the generated SDK.
import {
  createGithubInstallationState,
  deleteWorkspaceSource,
  getWorkspaceSource,
  putWorkspaceSource,
  type GitHubDelivery,
  type SourceConnection,
  type SourceConnectionDocument,
  type Workspace,
} from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { dataOf } from "../app/api.ts";
import { ContractError } from "../app/closed-sets.ts";
import {
  failureText,
  pointerOf,
  refusalOf,
  timeCell,
  workspaceStyles,
  type LoadedWorkspace,
} from "./workspace-common.ts";
import { workspaceFrame } from "./workspace-frame.ts";
import { WorkspaceLoader } from "./workspace-loader.ts";
import { takeSubmit } from "../ui/form-data.ts";

type DeliveryStatus = GitHubDelivery["attributes"]["status"];
type RepositoryAccess = SourceConnection["attributes"]["repository_access"];
type PipelineState = SourceConnectionDocument["meta"]["pipeline"]["state"];

// Closed sets: a Record over the generated union fails the type check when the spec adds or drops
// a value; a value outside it in a response is a ContractError.
export const DELIVERY_STATUS_LABELS: Record<DeliveryStatus, string> = {
  queued: "Queued",
  processing: "Processing",
  processed: "Processed",
  ignored: "Ignored",
  refused: "Refused",
  failed: "Failed",
};
export const REPOSITORY_ACCESS_LABELS: Record<RepositoryAccess, string> = {
  granted: "Granted: the installation can see the repository.",
  not_granted:
    "Not granted: the installation cannot see this repository. Add it to the GitHub App installation's repositories.",
  unknown: "Unknown: no installation event has arrived from GitHub yet.",
};
const PIPELINE_STATES: Record<PipelineState, true> = { on: true, off: true };

export function checkSourceDocument(document: SourceConnectionDocument): SourceConnectionDocument {
  if (!(document.meta.pipeline.state in PIPELINE_STATES))
    throw new ContractError(
      `The pipeline state “${String(document.meta.pipeline.state)}” is not one StackShip defines.`,
    );
  if (document.data && !(document.data.attributes.repository_access in REPOSITORY_ACCESS_LABELS)) {
    throw new ContractError(
      `The repository access “${String(document.data.attributes.repository_access)}” is not one StackShip defines.`,
    );
  }
  for (const delivery of document.meta.deliveries) {
    if (!(delivery.attributes.status in DELIVERY_STATUS_LABELS))
      throw new ContractError(
        `Delivery ${delivery.id} has the status “${String(delivery.attributes.status)}”, which StackShip does not define.`,
      );
  }
  return document;
}

/**
 * Whether the caller connects, changes and disconnects the repository: organization
 * administrators only (the API's rule; `verify_federation_profiles` is the same organization-level
 * `org:admin` check).
 */
function managesSource(loaded: LoadedWorkspace): boolean {
  return loaded.permissions.verify_federation_profiles;
}

/** The variable names a pipeline-off sentence names ("set STACKSHIP_GITHUB_APP_ID, …"). */
export function missingVariables(detail: string): string[] {
  return [...new Set(detail.match(/STACKSHIP_[A-Z0-9_]+(?: \(or _FILE\))?/g) ?? [])];
}

const FIELDS = ["installation_id", "repository", "tracked_branch", "working_directory", "trigger_paths"] as const;
type Field = (typeof FIELDS)[number];

@customElement("ss-workspace-source-page")
export class SsWorkspaceSourcePage extends LitElement {
  static override styles = workspaceStyles;

  @property({ attribute: "workspace-id" }) accessor workspaceId = "";

  @state() private accessor fieldErrors: Partial<Record<Field, string>> = {};
  @state() private accessor formError: TemplateResult | null = null;
  @state() private accessor saving = false;
  @state() private accessor confirmingDisconnect = false;
  @state() private accessor announcement = "";
  @state() private accessor installState: { state: string; install_url: string | null; expires_at: string } | null =
    null;

  private readonly page = new WorkspaceLoader(this, async (api, id, signal) => ({
    source: checkSourceDocument(await dataOf(getWorkspaceSource({ client: api, path: { workspace_id: id }, signal }))),
  }));

  override render(): TemplateResult {
    return workspaceFrame(this.page, {
      tab: "source",
      loading: "Loading the source settings…",
      unavailable: "The source settings are unavailable",
      heading: (workspace) => `Source settings for ${workspace.attributes.name}`,
      body: (loaded) => {
        const { workspace, source } = loaded;
        return html`${this.renderPipeline(source.meta.pipeline)}
          <section aria-labelledby="connection-heading">
            <h2 id="connection-heading">Repository connection</h2>
            ${source.data ? this.renderConnection(source.data, loaded) : this.renderNotConnected(loaded)}
          </section>
          ${managesSource(loaded) && source.meta.pipeline.state === "on" && loaded.organization ? this.renderInstall(loaded.organization) : nothing}
          ${managesSource(loaded) ? this.renderForm(workspace, source.data) : nothing}
          <section aria-labelledby="deliveries-heading">
            <h2 id="deliveries-heading">Last deliveries</h2>
            ${this.renderDeliveries(source)}
          </section>`;
      },
      announcement: { id: "source-announcement", text: this.announcement },
    });
  }

  private renderPipeline(pipeline: SourceConnectionDocument["meta"]["pipeline"]): TemplateResult {
    if (pipeline.state === "off") {
      const missing = missingVariables(pipeline.detail);
      return html`<div class="notice attention" id="pipeline-off">
        <p><strong>The GitHub App pipeline is off on this deployment.</strong> Pushes and pull requests do not start runs, whatever is connected here.</p>
        <p>${pipeline.detail}</p>
        ${
          missing.length > 0
            ? html`<p>Missing:</p>
              <ul id="pipeline-missing">
                ${missing.map((name) => html`<li><code>${name}</code></li>`)}
              </ul>`
            : nothing
        }
        <p>The deployment's operator sets them and restarts StackShip. Runs still start from the CLI and the API.</p>
      </div>`;
    }
    return html`<div class="notice info" id="pipeline-on">
      <p><strong>The GitHub App pipeline is on.</strong> ${pipeline.detail}</p>
      ${pipeline.app_id !== null && pipeline.api_url !== null ? html`<p id="pipeline-app">App id <code>${pipeline.app_id}</code>, API <code>${pipeline.api_url}</code> (shown to administrators only).</p>` : nothing}
      <p>The GitHub App's webhook URL: <code id="webhook-url">${pipeline.webhook_url}</code></p>
    </div>`;
  }

  /** Installing the App for the organization: a one-time setup state, then GitHub's install page with it. */
  private renderInstall(organization: string): TemplateResult {
    const issued = this.installState;
    return html`<section aria-labelledby="install-heading" id="install-app">
      <h2 id="install-heading">Install the GitHub App</h2>
      <p>
        An installation serves this workspace only once it belongs to ${organization}: install the App from here, and GitHub returns to StackShip (the App's Setup URL,
        <code>/github/setup</code>), which binds the installation to ${organization}.
      </p>
      ${
        issued
          ? issued.install_url
            ? html`<p><a id="install-link" href=${issued.install_url}>Install the GitHub App on GitHub</a> (valid once, until ${timeCell(issued.expires_at)}).</p>`
            : html`<p id="install-state">Open the App's page on GitHub and add <code>?state=${issued.state}</code> (valid once, until ${timeCell(issued.expires_at)}).</p>`
          : html`<p><button type="button" id="install-start" ?disabled=${this.saving} @click=${() => this.startInstall(organization)}>Install the GitHub App for ${organization}…</button></p>`
      }
    </section>`;
  }

  private async startInstall(organization: string): Promise<void> {
    this.saving = true;
    this.formError = null;
    try {
      this.installState = (
        await dataOf(
          createGithubInstallationState({ client: this.page.api, path: { organization_name: organization } }),
        )
      ).data.attributes;
    } catch (error) {
      this.formError = failureText(error);
    } finally {
      this.saving = false;
    }
  }

  private renderConnection(connection: SourceConnection, loaded: LoadedWorkspace): TemplateResult {
    const a = connection.attributes;
    return html`<dl class="facts" id="source-connection">
        <dt>Repository</dt><dd class="mono" id="source-repository">${a.repository}</dd>
        <dt>Installation id</dt><dd class="mono" id="source-installation">${a.installation_id}</dd>
        <dt>Tracked branch</dt><dd class="mono" id="tracked-branch">${a.tracked_branch}</dd>
        <dt>Working directory</dt><dd class="mono" id="working-directory">${a.working_directory || "/ (the repository root)"}</dd>
        <dt>Trigger paths</dt>
        <dd id="source-trigger-paths">${a.trigger_paths.length > 0 ? html`<ul>${a.trigger_paths.map((p) => html`<li class="mono">${p}</li>`)}</ul>` : html`<span class="muted">none: only changes under the working directory start runs</span>`}</dd>
        <dt>Repository access</dt><dd id="source-access">${REPOSITORY_ACCESS_LABELS[a.repository_access]}</dd>
        <dt>Connected</dt><dd>${timeCell(a.created_at)}${a.updated_at !== a.created_at ? html`, changed ${timeCell(a.updated_at)}` : nothing}</dd>
      </dl>
      <p class="muted">A push to <span class="mono">${a.tracked_branch}</span> that changes the working directory or a trigger path starts a plan-and-apply run; a pull request targeting it starts a speculative plan.</p>
      ${managesSource(loaded) ? this.renderDisconnect(loaded.workspace, connection) : nothing}`;
  }

  private renderNotConnected(loaded: LoadedWorkspace): TemplateResult {
    const a = loaded.workspace.attributes;
    return html`<div class="notice info" id="source-not-connected">
        <p><strong>No Git repository is connected to this workspace.</strong></p>
        <p>
          Pushes do not start runs. New runs start from the CLI (<code>tofu plan</code> / <code>tofu apply</code> with a <code>cloud</code> block naming this workspace) or from the API (upload a configuration
          version, then create a run).
        </p>
        <p>
          ${
            managesSource(loaded)
              ? "To connect one: install the StackShip GitHub App on the repository through StackShip's setup (which binds the installation to this organization), then give its installation id and the repository below."
              : "An organization administrator can connect one."
          }
        </p>
      </div>
      <dl class="facts">
        <dt>Tracked branch</dt><dd class="mono" id="tracked-branch">${a.tracked_branch}</dd>
        <dt>Working directory</dt><dd class="mono" id="working-directory">${a.working_directory || "/"}</dd>
      </dl>`;
  }

  private renderDisconnect(workspace: Workspace, connection: SourceConnection): TemplateResult {
    if (!this.confirmingDisconnect) {
      return html`<p><button type="button" id="disconnect" @click=${() => (this.confirmingDisconnect = true)}>Disconnect the repository…</button></p>`;
    }
    return html`<div class="notice attention" role="group" aria-labelledby="disconnect-question" id="disconnect-confirmation">
      <p id="disconnect-question">
        Disconnect <span class="mono">${connection.attributes.repository}</span> from ${workspace.attributes.name}? Pushes and pull requests will no longer start runs here. Runs already created are kept.
      </p>
      <div class="actions">
        <button type="button" class="danger" id="disconnect-confirm" ?disabled=${this.saving} @click=${() => this.disconnect(workspace)}>Disconnect</button>
        <button type="button" id="disconnect-cancel" @click=${() => (this.confirmingDisconnect = false)}>Keep the connection</button>
      </div>
    </div>`;
  }

  private renderForm(workspace: Workspace, connection: SourceConnection | null): TemplateResult {
    const a = connection?.attributes;
    const field = (name: Field, label: string, input: TemplateResult, hint?: string) => {
      const error = this.fieldErrors[name];
      return html`<div class="field">
        <label for="field-${name}">${label}</label> ${hint ? html`<span class="hint" id="hint-${name}">${hint}</span>` : nothing} ${input}
        ${error ? html`<p class="field-error" id="error-${name}">${error}</p>` : nothing}
      </div>`;
    };
    const described = (name: Field, hint = false) =>
      [hint ? `hint-${name}` : "", this.fieldErrors[name] ? `error-${name}` : ""].filter(Boolean).join(" ") || nothing;
    return html`<section aria-labelledby="connect-heading">
      <h2 id="connect-heading">${connection ? "Change the connection" : "Connect a repository"}</h2>
      <form class="settings" id="source-form" novalidate @submit=${(event: SubmitEvent) => this.save(event, workspace)}>
        ${field(
          "installation_id",
          "Installation id",
          html`<input id="field-installation_id" name="installation_id" inputmode="numeric" required value=${a?.installation_id ?? ""} aria-invalid=${this.fieldErrors.installation_id ? "true" : "false"} aria-describedby=${described("installation_id", true)} />`,
          "The number at the end of the installation's settings URL on GitHub.",
        )}
        ${field(
          "repository",
          "Repository",
          html`<input id="field-repository" name="repository" required placeholder="owner/name" value=${a?.repository ?? ""} aria-invalid=${this.fieldErrors.repository ? "true" : "false"} aria-describedby=${described("repository", true)} />`,
          "owner/name",
        )}
        ${field(
          "tracked_branch",
          "Tracked branch",
          html`<input id="field-tracked_branch" name="tracked_branch" value=${a?.tracked_branch ?? workspace.attributes.tracked_branch} aria-invalid=${this.fieldErrors.tracked_branch ? "true" : "false"} aria-describedby=${described("tracked_branch")} />`,
        )}
        ${field(
          "working_directory",
          "Working directory",
          html`<input id="field-working_directory" name="working_directory" value=${a?.working_directory ?? workspace.attributes.working_directory} aria-invalid=${this.fieldErrors.working_directory ? "true" : "false"} aria-describedby=${described("working_directory", true)} />`,
          "The configuration's folder inside the repository; empty for the root.",
        )}
        ${field(
          "trigger_paths",
          "Trigger paths",
          html`<textarea id="field-trigger_paths" name="trigger_paths" rows="3" aria-invalid=${this.fieldErrors.trigger_paths ? "true" : "false"} aria-describedby=${described("trigger_paths", true)}>${a?.trigger_paths.join("\n") ?? ""}</textarea>`,
          "One glob per line (modules/**, *.tfvars). A push also starts a run when it changes a matching file.",
        )}
        ${this.formError ? html`<p class="notice danger" role="alert" id="source-form-error">${this.formError}</p>` : nothing}
        <div class="actions">
          <button class="primary" type="submit" ?disabled=${this.saving}>${connection ? "Save the connection" : "Connect"}</button>
        </div>
      </form>
    </section>`;
  }

  private renderDeliveries(source: SourceConnectionDocument): TemplateResult {
    if (!source.data)
      return html`<p class="muted" id="deliveries-none">Deliveries are listed once a repository is connected.</p>`;
    if (source.meta.deliveries.length === 0)
      return html`<p id="deliveries-empty">No webhook delivery about <span class="mono">${source.data.attributes.repository}</span> has arrived yet.</p>`;
    return html`<table id="deliveries">
        <caption class="visually-hidden">Webhook deliveries about the connected repository, newest first</caption>
        <thead>
          <tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Outcome</th><th scope="col">Attempts</th><th scope="col">Runs</th><th scope="col">Received</th><th scope="col">Processed</th></tr>
        </thead>
        <tbody>
          ${source.meta.deliveries.map((d) => {
            const a = d.attributes;
            return html`<tr data-delivery-id=${d.id}>
              <td><span class="mono">${a.event}${a.action ? ` · ${a.action}` : ""}</span><div class="mono muted">${d.id}</div></td>
              <td>${DELIVERY_STATUS_LABELS[a.status]}</td>
              <td>${a.outcome ? html`<span class="mono">${a.outcome}</span>` : html`<span class="muted">none yet</span>`}${a.detail ? html`<div>${a.detail}</div>` : nothing}</td>
              <td>${a.attempts}</td>
              <td>${a.run_ids.length > 0 ? a.run_ids.map((id) => html`<a class="mono" href="/runs/${id}">${id}</a> `) : html`<span class="muted">none</span>`}</td>
              <td>${timeCell(a.received_at)}</td>
              <td>${timeCell(a.processed_at)}</td>
            </tr>`;
          })}
        </tbody>
      </table>
      <p class="muted">The last ${source.meta.deliveries.length} deliver${source.meta.deliveries.length === 1 ? "y" : "ies"} (at most 20).</p>`;
  }

  private async save(event: SubmitEvent, workspace: Workspace): Promise<void> {
    const text: (name: Field) => string = takeSubmit(event).trimmed;
    const errors: Partial<Record<Field, string>> = {};
    const installation = text("installation_id");
    if (!/^[1-9][0-9]*$/.test(installation)) errors.installation_id = "Give the installation's number (digits only).";
    if (text("repository") === "") errors.repository = "Give the repository as owner/name.";
    this.fieldErrors = errors;
    this.formError = null;
    if (Object.keys(errors).length > 0) return;
    this.saving = true;
    try {
      const result = await putWorkspaceSource({
        client: this.page.api,
        path: { workspace_id: workspace.id },
        body: {
          data: {
            type: "source-connections",
            attributes: {
              installation_id: Number(installation),
              repository: text("repository"),
              tracked_branch: text("tracked_branch") || undefined,
              working_directory: text("working_directory"),
              trigger_paths: text("trigger_paths")
                .split("\n")
                .map((line) => line.trim())
                .filter(Boolean),
            },
          },
        },
      });
      if (result.response?.ok) {
        this.announcement = `Connected ${text("repository")}.`;
        this.page.reload();
        return;
      }
      this.showError(result.error, result.response?.status ?? 0);
    } catch {
      this.formError = html`The server could not be reached; nothing was saved.`;
    } finally {
      this.saving = false;
    }
  }

  private showError(error: unknown, status: number): void {
    const failure = refusalOf(error, status);
    const field = pointerOf(error)
      ?.replace(/^\/data\/attributes\//, "")
      .split("/")[0] as Field | undefined;
    if (field && (FIELDS as readonly string[]).includes(field)) this.fieldErrors = { [field]: failure.message };
    else this.formError = failureText(failure);
  }

  private async disconnect(workspace: Workspace): Promise<void> {
    this.saving = true;
    try {
      const result = await deleteWorkspaceSource({ client: this.page.api, path: { workspace_id: workspace.id } });
      if (result.response?.ok) {
        this.confirmingDisconnect = false;
        this.announcement = "The repository was disconnected.";
        this.page.reload();
        return;
      }
      this.confirmingDisconnect = false;
      this.showError(result.error, result.response?.status ?? 0);
    } catch {
      this.formError = html`The server could not be reached; the repository is still connected.`;
    } finally {
      this.saving = false;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-workspace-source-page": SsWorkspaceSourcePage;
  }
}
