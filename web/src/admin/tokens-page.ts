// /tokens — the current organization's API tokens (organization admins): the list (never a
// secret), create with a role, a description and an optional expiry (the secret shown once, with
// a copy button and a warning), and revoke after a confirmation.
import { consume } from "@lit/context";
import { Task } from "@lit/task";
import {
  createOrganizationToken,
  deleteOrganizationToken,
  listOrganizationTokens,
  type Client,
  type Token,
} from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, state } from "lit/decorators.js";
import { dataOf, RequestFailed } from "../app/api.ts";
import { apiContext, sessionContext } from "../app/context.ts";
import { absoluteUtc, relativeTime } from "../app/format.ts";
import type { Session } from "../app/session.ts";
import { tableHead } from "../ui/table-head.ts";
import { adminFrame } from "./admin-frame.ts";
import { tokensPageStyles } from "./tokens-page.styles.ts";
import { takeSubmit } from "../ui/form-data.ts";

type Role = Token["attributes"]["role"];

const ROLE_WORDS: Record<Role, string> = {
  viewer: "viewer — reads workspaces and runs",
  operator: "operator — also starts runs and writes workspaces",
  admin: "admin — everything in the organization",
};

@customElement("ss-tokens-page")
export class SsTokensPage extends LitElement {
  static override styles = tokensPageStyles;

  @consume({ context: apiContext }) accessor api!: Client;
  @consume({ context: sessionContext, subscribe: true }) @state() accessor session: Session | null = null;

  /** The secret of the token just created: shown until the page is left, never again. */
  @state() accessor created: { id: string; secret: string } | null = null;
  @state() accessor error: string | null = null;
  @state() accessor busy = false;
  /** The token whose revocation waits for its confirmation. */
  @state() accessor revoking: string | null = null;
  @state() accessor copied = "";

  private readonly tokens = new Task(this, {
    args: () => [this.session?.organization ?? null] as const,
    task: async ([organization], { signal }) => {
      if (!organization) return null;
      const list = await dataOf(
        listOrganizationTokens({ client: this.api, path: { organization_name: organization }, signal }),
      );
      return list.data;
    },
  });

  private async create(event: SubmitEvent): Promise<void> {
    const { form, trimmed } = takeSubmit(event);
    const organization = this.session?.organization;
    if (!organization) return;
    const expires = trimmed("expires");
    this.busy = true;
    this.error = null;
    try {
      const attributes: { role: Role; description?: string; expires_at?: string } = { role: trimmed("role") as Role };
      if (trimmed("description")) attributes.description = trimmed("description");
      if (expires) attributes.expires_at = new Date(`${expires}T23:59:59Z`).toISOString();
      const token = await dataOf(
        createOrganizationToken({
          client: this.api,
          path: { organization_name: organization },
          body: { data: { type: "tokens", attributes } },
        }),
      );
      this.created = { id: token.data.id, secret: token.data.attributes.secret };
      this.copied = "";
      form.reset();
      void this.tokens.run();
    } catch (error) {
      this.error = error instanceof RequestFailed ? error.message : "The token could not be created.";
    } finally {
      this.busy = false;
    }
  }

  private async revoke(id: string): Promise<void> {
    const organization = this.session?.organization;
    if (!organization) return;
    this.busy = true;
    this.error = null;
    try {
      // 204 has no body: a null stands for it so dataOf only has to judge the status.
      await dataOf(
        deleteOrganizationToken({ client: this.api, path: { organization_name: organization, token_id: id } }).then(
          (r) => ({ ...r, data: r.data ?? null }),
        ),
      );
      this.revoking = null;
      if (this.created?.id === id) this.created = null;
      void this.tokens.run();
    } catch (error) {
      this.error = error instanceof RequestFailed ? error.message : "The token could not be revoked.";
    } finally {
      this.busy = false;
    }
  }

  private async copy(secret: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(secret);
      this.copied = "Copied";
    } catch {
      this.copied = "Could not copy: select the token instead";
    }
  }

  override render(): TemplateResult {
    return adminFrame(this.session?.organization ?? null, {
      title: "API tokens",
      intro: (organization) =>
        html`Tokens of <strong>${organization}</strong> for the <code>tofu</code> CLI and automation. StackShip stores only their hashes.`,
      noun: "tokens",
      administers: "manages its API tokens",
      task: this.tokens,
      body: (list) => this.renderTokens(list),
    });
  }

  private renderTokens(list: Token[]): TemplateResult {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    return html`
      <h2>New token</h2>
      <form class="inline" @submit=${(e: SubmitEvent) => void this.create(e)}>
        <label
          >Role
          <select name="role" id="token-role">
            ${(Object.keys(ROLE_WORDS) as Role[]).map((role) => html`<option value=${role} ?selected=${role === "operator"}>${ROLE_WORDS[role]}</option>`)}
          </select>
        </label>
        <label>Description <input name="description" id="token-description" maxlength="200" placeholder="e.g. CI pipeline" /></label>
        <label>Expires (optional) <input name="expires" id="token-expires" type="date" min=${tomorrow} /></label>
        <button class="primary" type="submit" ?disabled=${this.busy}>Create token</button>
      </form>
      ${this.error ? html`<p class="notice danger" role="alert" id="tokens-error">${this.error}</p>` : nothing}
      ${
        this.created
          ? html`<div class="notice attention" role="status" id="token-created">
            <p><strong>Copy the new token now.</strong> StackShip stores only its hash and will never show it again.</p>
            <div class="secret">
              <code id="token-secret">${this.created.secret}</code>
              <button type="button" @click=${() => void this.copy(this.created!.secret)}>Copy token</button>
              <span role="status" id="token-copied">${this.copied}</span>
            </div>
          </div>`
          : nothing
      }
      <h2>Tokens</h2>
      ${list.length === 0 ? html`<p id="tokens-empty">No tokens yet.</p>` : this.renderTable(list)}
    `;
  }

  private renderTable(list: Token[]): TemplateResult {
    return html`<div class="table-wrap">
      <table id="tokens-table">
        <caption class="visually-hidden">API tokens</caption>
        ${tableHead(["Token", "Role", "Created", "Last used", "Expires", ""])}
        <tbody>
          ${list.map((token) => this.renderRow(token))}
        </tbody>
      </table>
    </div>`;
  }

  private renderRow(token: Token): TemplateResult {
    const a = token.attributes;
    const confirming = this.revoking === token.id;
    return html`<tr data-token-id=${token.id}>
      <td>${a.description ?? html`<span class="muted">(no description)</span>`}<div class="mono muted">${token.id}</div></td>
      <td>${a.role}</td>
      <td><time datetime=${a.created_at} title=${absoluteUtc(a.created_at)}>${relativeTime(a.created_at)}</time></td>
      <td>${a.last_used_at ? html`<time datetime=${a.last_used_at} title=${absoluteUtc(a.last_used_at)}>${relativeTime(a.last_used_at)}</time>` : html`<span class="muted">never</span>`}</td>
      <td>${a.expires_at ? html`${a.expired ? html`<strong>expired</strong> ` : nothing}<time datetime=${a.expires_at}>${absoluteUtc(a.expires_at)}</time>` : html`<span class="muted">never</span>`}</td>
      <td>
        ${
          confirming
            ? html`<span class="row">
              <span>Revoke? Anything using it gets 401 at once.</span>
              <button class="danger" ?disabled=${this.busy} @click=${() => void this.revoke(token.id)}>Revoke token</button>
              <button @click=${() => (this.revoking = null)}>Keep it</button>
            </span>`
            : html`<button @click=${() => (this.revoking = token.id)} aria-label="Revoke ${a.description ?? token.id}">Revoke</button>`
        }
      </td>
    </tr>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-tokens-page": SsTokensPage;
  }
}
