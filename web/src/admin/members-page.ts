// /members — the current organization's memberships (organization admins): who, with which
// role, on the whole organization or one workspace; add an existing user by email, change a role,
// remove (after a confirmation; the member loses access on their next request). Deployment
// administrators can also create a user with a password.
import { consume } from "@lit/context";
import { Task } from "@lit/task";
import {
  createMembership,
  createUser,
  deleteMembership,
  listMemberships,
  listWorkspaces,
  updateMembership,
  type Client,
  type Membership,
} from "@stackship/client";
import { LitElement, html, nothing, type TemplateResult } from "lit";
import { customElement, state } from "lit/decorators.js";
import { dataOf, RequestFailed } from "../app/api.ts";
import { apiContext, sessionContext } from "../app/context.ts";
import type { Session } from "../app/session.ts";
import { tableHead } from "../ui/table-head.ts";
import { adminFrame } from "./admin-frame.ts";
import { membersPageStyles } from "./members-page.styles.ts";
import { formText, takeSubmit } from "../ui/form-data.ts";

type Role = Membership["attributes"]["role"];
const ROLES: readonly Role[] = ["viewer", "operator", "admin"];

interface Loaded {
  memberships: Membership[];
  /** Workspace names by id, for workspace-scoped memberships and the scope choice. */
  workspaces: Map<string, string>;
}

@customElement("ss-members-page")
export class SsMembersPage extends LitElement {
  static override styles = membersPageStyles;

  @consume({ context: apiContext }) accessor api!: Client;
  @consume({ context: sessionContext, subscribe: true }) @state() accessor session: Session | null = null;

  @state() accessor error: string | null = null;
  @state() accessor notice: string | null = null;
  @state() accessor busy = false;
  /** The membership whose removal waits for its confirmation. */
  @state() accessor removing: string | null = null;

  private readonly members = new Task(this, {
    args: () => [this.session?.organization ?? null] as const,
    task: async ([organization], { signal }): Promise<Loaded | null> => {
      if (!organization) return null;
      const path = { organization_name: organization };
      const [memberships, workspaces] = await Promise.all([
        dataOf(listMemberships({ client: this.api, path, signal })),
        dataOf(listWorkspaces({ client: this.api, path, signal })).catch(() => null),
      ]);
      return {
        memberships: memberships.data,
        workspaces: new Map((workspaces?.data ?? []).map((w) => [w.id, w.attributes.name])),
      };
    },
  });

  /** Runs a change, then re-reads the list; a refusal shows the server's own sentence. */
  private async change(what: string, call: () => Promise<unknown>, done?: string): Promise<boolean> {
    this.busy = true;
    this.error = null;
    this.notice = null;
    try {
      await call();
      if (done) this.notice = done;
      void this.members.run();
      return true;
    } catch (error) {
      this.error = error instanceof RequestFailed ? `${what}: ${error.message}` : `${what} failed.`;
      return false;
    } finally {
      this.busy = false;
    }
  }

  private async add(event: SubmitEvent): Promise<void> {
    const { form, trimmed } = takeSubmit(event);
    const organization = this.session?.organization;
    if (!organization) return;
    const email = trimmed("email");
    const scope = trimmed("scope");
    const attributes = { email, role: trimmed("role") as Role, ...(scope ? { workspace_id: scope } : {}) };
    const ok = await this.change(
      "Adding the member",
      () =>
        dataOf(
          createMembership({
            client: this.api,
            path: { organization_name: organization },
            body: { data: { type: "memberships", attributes } },
          }),
        ),
      `${email} is now a member.`,
    );
    if (ok) form.reset();
  }

  private async createAccount(event: SubmitEvent): Promise<void> {
    const { form, data, trimmed } = takeSubmit(event);
    const field = (name: string) => formText(data, name);
    const email = trimmed("email");
    if (field("password").length < 12) {
      this.error = "Creating the user: the password needs at least 12 characters.";
      return;
    }
    const ok = await this.change(
      "Creating the user",
      () =>
        dataOf(
          createUser({
            client: this.api,
            body: {
              data: {
                type: "users",
                attributes: { email, display_name: field("display_name").trim() || email, password: field("password") },
              },
            },
          }),
        ),
      `The user ${email} exists; add them to the organization below.`,
    );
    if (ok) form.reset();
  }

  private setRole(membership: Membership, role: Role): void {
    const organization = this.session?.organization;
    if (!organization) return;
    void this.change(
      "Changing the role",
      () =>
        dataOf(
          updateMembership({
            client: this.api,
            path: { organization_name: organization, membership_id: membership.id },
            body: { data: { type: "memberships", attributes: { role } } },
          }),
        ),
      `${membership.attributes.email ?? membership.attributes.user_id} is now ${role}.`,
    );
  }

  private removeMember(membership: Membership): void {
    const organization = this.session?.organization;
    if (!organization) return;
    void this.change(
      "Removing the member",
      // 204 has no body: a null stands for it so dataOf only has to judge the status.
      () =>
        dataOf(
          deleteMembership({
            client: this.api,
            path: { organization_name: organization, membership_id: membership.id },
          }).then((r) => ({ ...r, data: r.data ?? null })),
        ),
      `${membership.attributes.email ?? membership.attributes.user_id} was removed.`,
    ).then(() => (this.removing = null));
  }

  override render(): TemplateResult {
    return adminFrame(this.session?.organization ?? null, {
      title: "Members",
      intro: (organization) => html`Who can use <strong>${organization}</strong>, and with which role.`,
      noun: "members",
      administers: "manages its members",
      task: this.members,
      body: (loaded) => this.renderMembers(loaded),
    });
  }

  private renderMembers(loaded: Loaded): TemplateResult {
    return html`
      ${this.error ? html`<p class="notice danger" role="alert" id="members-error">${this.error}</p>` : nothing}
      ${this.notice ? html`<p class="notice info" role="status" id="members-notice">${this.notice}</p>` : nothing}
      <h2>Add a member</h2>
      <form class="inline" id="add-member" @submit=${(e: SubmitEvent) => void this.add(e)}>
        <label>Email <input name="email" type="email" required autocomplete="off" /></label>
        <label
          >Role
          <select name="role">
            ${ROLES.map((role) => html`<option value=${role} ?selected=${role === "viewer"}>${role}</option>`)}
          </select>
        </label>
        <label
          >Scope
          <select name="scope">
            <option value="">the whole organization</option>
            ${[...loaded.workspaces].map(([id, name]) => html`<option value=${id}>workspace ${name}</option>`)}
          </select>
        </label>
        <button class="primary" type="submit" ?disabled=${this.busy}>Add member</button>
      </form>
      ${this.session?.user.site_admin ? this.renderCreateUser() : nothing}
      <h2>Members</h2>
      <div class="table-wrap">
        <table id="members-table">
          <caption class="visually-hidden">Members</caption>
          ${tableHead(["Person", "Role", "Scope", ""])}
          <tbody>
            ${loaded.memberships.map((m) => this.renderRow(m, loaded))}
          </tbody>
        </table>
      </div>
    `;
  }

  private renderCreateUser(): TemplateResult {
    return html`<details>
      <summary>Create a user (deployment administrators)</summary>
      <form class="inline" id="create-user" novalidate @submit=${(e: SubmitEvent) => void this.createAccount(e)}>
        <label>Email <input name="email" type="email" required autocomplete="off" /></label>
        <label>Display name <input name="display_name" autocomplete="off" /></label>
        <label>Password (12 or more characters) <input name="password" type="password" minlength="12" required autocomplete="new-password" /></label>
        <button type="submit" ?disabled=${this.busy}>Create user</button>
      </form>
    </details>`;
  }

  private renderRow(membership: Membership, loaded: Loaded): TemplateResult {
    const a = membership.attributes;
    const who = a.display_name && a.email ? `${a.display_name} (${a.email})` : (a.email ?? a.user_id);
    const scope =
      a.scope_kind === "organization"
        ? "whole organization"
        : a.scope_kind === "workspace"
          ? `workspace ${loaded.workspaces.get(a.scope_id) ?? a.scope_id}`
          : `project ${a.scope_id}`;
    const confirming = this.removing === membership.id;
    return html`<tr data-membership-id=${membership.id}>
      <td>${who}</td>
      <td>
        <select aria-label="Role of ${a.email ?? a.user_id}" ?disabled=${this.busy} @change=${(e: Event) => this.setRole(membership, (e.target as HTMLSelectElement).value as Role)}>
          ${ROLES.map((role) => html`<option value=${role} ?selected=${role === a.role}>${role}</option>`)}
        </select>
      </td>
      <td>${scope}</td>
      <td>
        ${
          confirming
            ? html`<span class="row">
              <span>Remove? They lose access on their next request.</span>
              <button class="danger" ?disabled=${this.busy} @click=${() => this.removeMember(membership)}>Remove member</button>
              <button @click=${() => (this.removing = null)}>Keep</button>
            </span>`
            : html`<button @click=${() => (this.removing = membership.id)} aria-label="Remove ${a.email ?? a.user_id}">Remove</button>`
        }
      </td>
    </tr>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-members-page": SsMembersPage;
  }
}
