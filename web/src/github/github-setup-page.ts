// /github/setup — the GitHub App's Setup URL. GitHub sends the browser here after an installation
// with `installation_id`, `setup_action` and the `state` StackShip issued to an organization
// administrator's session (the source page's "Install the GitHub App"). The session cookie is
// SameSite=Strict, so GitHub's redirect itself carries no session: this page, loaded, sends the
// three values with the session (bindGithubInstallation), and StackShip confirms the installation
// with GitHub before binding it to the organization the state was issued for.
import { consume } from "@lit/context";
import { bindGithubInstallation, type Client } from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, state } from "lit/decorators.js";
import { dataOf } from "../app/api.ts";
import { apiContext } from "../app/context.ts";
import { failureText, workspaceStyles } from "../workspaces/workspace-common.ts";

type Outcome =
  | { state: "binding" }
  | { state: "bound"; installationId: number; organization: string; account: string | null }
  | { state: "failed"; error: unknown }
  | { state: "invalid" };

@customElement("ss-github-setup-page")
export class SsGithubSetupPage extends LitElement {
  static override styles = [workspaceStyles];

  @consume({ context: apiContext }) accessor api!: Client;
  @state() private accessor outcome: Outcome = { state: "binding" };

  override connectedCallback(): void {
    super.connectedCallback();
    void this.bind();
  }

  private async bind(): Promise<void> {
    const query = new URLSearchParams(location.search);
    const installation = query.get("installation_id") ?? "";
    const setupState = query.get("state") ?? "";
    if (!/^[1-9][0-9]{0,15}$/.test(installation) || setupState === "") {
      this.outcome = { state: "invalid" };
      return;
    }
    const setupAction = query.get("setup_action");
    try {
      const bound = await dataOf(
        bindGithubInstallation({
          client: this.api,
          body: {
            data: {
              type: "github-installations",
              attributes: {
                installation_id: Number(installation),
                state: setupState,
                ...(setupAction ? { setup_action: setupAction.slice(0, 50) } : {}),
              },
            },
          },
        }),
      );
      const a = bound.data.attributes;
      this.outcome = {
        state: "bound",
        installationId: a.installation_id,
        organization: a.organization,
        account: a.account,
      };
    } catch (error) {
      this.outcome = { state: "failed", error };
    }
  }

  override render(): TemplateResult {
    const o = this.outcome;
    return html`<h1>Installing the GitHub App</h1>
      ${o.state === "binding" ? html`<p role="status" id="setup-binding">Confirming the installation with GitHub…</p>` : nothing}
      ${
        o.state === "invalid"
          ? html`<div class="notice danger" role="alert" id="setup-invalid">
            <p>This page is where GitHub returns after the StackShip GitHub App is installed; the address lacks the installation id or the setup state. Start again from a workspace's Source page.</p>
          </div>`
          : nothing
      }
      ${
        o.state === "failed"
          ? html`<div class="notice danger" role="alert" id="setup-failed">
            <p><strong>The installation was not bound.</strong> ${failureText(o.error)}</p>
          </div>`
          : nothing
      }
      ${
        o.state === "bound"
          ? html`<div class="notice info" id="setup-bound">
            <p>
              Installation <span class="mono" id="setup-installation">${o.installationId}</span>${o.account ? html` (GitHub account <span class="mono">${o.account}</span>)` : nothing} now
              belongs to the organization <strong id="setup-organization">${o.organization}</strong>. Connect a workspace to one of its repositories from the workspace's Source page.
            </p>
          </div>`
          : nothing
      }`;
  }
}
