// The app shell: provides the API client and the session through @lit/context, routes real URLs
// to pages, keeps the person signed in (or sends them to sign-in and back), and shows the
// organization switcher when they belong to several organizations.
import { provide } from "@lit/context";
import {
  getCurrentSession,
  listOrganizations,
  listOrganizationTokens,
  deleteCurrentSession,
  type Client,
  type SessionDocument,
} from "@stackship/client";
import { LitElement, css, html, nothing, type TemplateResult } from "lit";
import { customElement, state } from "lit/decorators.js";
import { tokens, base } from "../ui/tokens.ts";
import { createApiClient } from "./api.ts";
import { apiContext, sessionContext } from "./context.ts";
import { interceptLinks, matchRoute, navigate, NAVIGATE_EVENT, safeNext, type Route } from "./router.ts";
import { chooseOrganization, rememberOrganization, type Session, type SignedInDetail } from "./session.ts";
import "../auth/sign-in-page.ts";
import "../setup/setup-page.ts";
import "../runs/runs-page.ts";
import "../runs/attention-count.ts";
import "../run/run-page.ts";
import "../workspaces/workspace-page.ts";
import "../workspaces/workspace-state-page.ts";
import "../workspaces/workspace-cloud-access-page.ts";
import "../workspaces/workspace-source-page.ts";
import "../github/github-setup-page.ts";
import "../admin/tokens-page.ts";
import "../admin/members-page.ts";
import "../admin/audit-page.ts";
import "../workspaces/workspaces-page.ts";
import "../admin/policy-sets-page.ts";
import "../admin/organizations-page.ts";
import "../workspaces/workspace-variables-page.ts";

type Status = "loading" | "signed-in" | "signed-out" | "unavailable";

@customElement("ss-app")
export class SsApp extends LitElement {
  static override styles = [
    tokens,
    base,
    css`
      :host {
        display: block;
        min-height: 100vh;
        background: var(--ss-bg);
      }
      header {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: var(--ss-space-4);
        padding: var(--ss-space-2) var(--ss-space-6);
        border-bottom: 1px solid var(--ss-border);
        background: var(--ss-surface);
      }
      header .brand {
        font-weight: 700;
        text-decoration: none;
        color: var(--ss-text);
      }
      header nav {
        display: flex;
        flex-wrap: wrap;
        gap: var(--ss-space-1) var(--ss-space-4);
        flex: 1;
      }
      header .who {
        display: flex;
        align-items: center;
        gap: var(--ss-space-3);
      }
      header .menu {
        display: none;
      }
      /* A phone: the navigation folds behind a Menu button; the page gets the width. */
      @media (max-width: 600px) {
        header {
          padding: var(--ss-space-2) var(--ss-space-3);
        }
        header .menu {
          display: inline-block;
          margin-left: auto;
        }
        header nav,
        header .who,
        header .switcher {
          display: none;
          flex: 1 1 100%;
        }
        header.open nav {
          display: flex;
          flex-direction: column;
        }
        header.open .who,
        header.open .switcher {
          display: flex;
        }
        main {
          padding: var(--ss-space-3);
        }
      }
      main {
        padding: var(--ss-space-6);
        max-width: 1200px;
        margin: 0 auto;
      }
    `,
  ];

  @provide({ context: apiContext })
  accessor api: Client = createApiClient({
    csrfToken: () => this.session?.csrfToken ?? null,
    onUnauthenticated: () => this.sessionExpired(),
  });

  @provide({ context: sessionContext })
  @state()
  accessor session: Session | null = null;

  @state() accessor status: Status = "loading";
  @state() accessor route: Route = matchRoute(location.pathname);
  @state() accessor notice: string | null = null;
  /** The folded navigation is open (phones only; wider screens always show it). */
  @state() accessor menuOpen = false;

  private readonly onLocation = () => this.routeChanged();

  override connectedCallback(): void {
    super.connectedCallback();
    interceptLinks(document);
    window.addEventListener("popstate", this.onLocation);
    window.addEventListener(NAVIGATE_EVENT, this.onLocation);
    this.addEventListener("ss-signed-in", (event) => void this.signedIn(event.detail));
    this.addEventListener("ss-organizations-changed", () => void this.loadSession());
    this.addEventListener("ss-organization-change", (event) => this.switchOrganization(event.detail));
    void this.loadSession();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener("popstate", this.onLocation);
    window.removeEventListener(NAVIGATE_EVENT, this.onLocation);
  }

  private routeChanged(): void {
    this.route = matchRoute(location.pathname);
    this.menuOpen = false;
    this.guard();
  }

  /** Signed out on a page that needs a session: to sign-in, remembering where they were. */
  private guard(): void {
    if (this.route.name === "home") {
      navigate("/runs", { replace: true });
      return;
    }
    // The setup page is reached signed out (its link's token is the credential) and stays after sign-in (its next steps).
    if (
      this.status === "signed-out" &&
      this.route.name !== "sign-in" &&
      this.route.name !== "setup" &&
      this.route.name !== "not-found"
    ) {
      navigate(`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
    }
    if (this.status === "signed-in" && this.route.name === "sign-in") {
      navigate(safeNext(new URLSearchParams(location.search).get("next")), { replace: true });
    }
  }

  private async loadSession(): Promise<void> {
    const result = await getCurrentSession({ client: this.api });
    if (result.response?.status === 401) {
      this.status = "signed-out";
      this.guard();
      return;
    }
    if (!result.data) {
      this.status = "unavailable";
      return;
    }
    await this.adopt(result.data);
  }

  private async adopt(document: SessionDocument): Promise<void> {
    const attributes = document.data.attributes;
    const draft: Session = {
      id: document.data.id,
      csrfToken: attributes.csrf_token,
      expiresAt: attributes.expires_at,
      stepUpFreshUntil: attributes.step_up_fresh_until,
      user: attributes.user,
      organizations: [],
      organization: null,
      organizationAdmin: false,
    };
    // The session is known before its organizations: the client sends its CSRF token from here.
    this.session = draft;
    const organizations = await listOrganizations({ client: this.api });
    if (!organizations.data) {
      if (organizations.response?.status === 401) return;
      this.status = "unavailable";
      return;
    }
    const list = organizations.data.data.map((o) => ({ id: o.id, name: o.attributes.name }));
    const organization = chooseOrganization(list);
    this.session = {
      ...draft,
      organizations: list,
      organization,
      organizationAdmin: await this.administers(organization),
    };
    this.status = "signed-in";
    this.notice = null;
    this.guard();
  }

  private async signedIn(document: SessionDocument): Promise<void> {
    await this.adopt(document);
  }

  /** Any 401 after sign-in: the session ended (expired, signed out elsewhere). */
  private sessionExpired(): void {
    if (this.status !== "signed-in") return;
    this.session = null;
    this.status = "signed-out";
    this.notice = "Your session has ended. Sign in again to continue where you were.";
    if (this.route.name !== "sign-in")
      navigate(`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
  }

  private switchOrganization(name: string): void {
    if (!this.session || !this.session.organizations.some((o) => o.name === name)) return;
    rememberOrganization(name);
    this.session = { ...this.session, organization: name, organizationAdmin: false };
    void this.administers(name).then((admin) => {
      if (this.session?.organization === name) this.session = { ...this.session, organizationAdmin: admin };
    });
  }

  /** Whether the signed-in person administers `organization`: its token list (org:admin) answers them. */
  private async administers(organization: string | null): Promise<boolean> {
    if (!organization) return false;
    try {
      const result = await listOrganizationTokens({ client: this.api, path: { organization_name: organization } });
      return result.response?.ok === true;
    } catch {
      return false;
    }
  }

  private async signOut(): Promise<void> {
    await deleteCurrentSession({ client: this.api });
    this.session = null;
    this.status = "signed-out";
    this.notice = "You are signed out.";
    navigate("/sign-in", { replace: true });
  }

  protected override updated(): void {
    document.title = `${pageTitle(this.route)} · StackShip`;
  }

  override render(): TemplateResult {
    return html`${this.renderHeader()}
      <main id="main">${this.renderPage()}</main>`;
  }

  private renderHeader(): TemplateResult | typeof nothing {
    if (this.status !== "signed-in" || !this.session) {
      return html`<header><a class="brand" href="/runs">StackShip</a></header>`;
    }
    const session = this.session;
    return html`<header class=${this.menuOpen ? "open" : ""}>
      <a class="brand" href="/runs">StackShip</a>
      <button type="button" class="menu" aria-expanded=${this.menuOpen ? "true" : "false"} aria-controls="main-nav" @click=${() => (this.menuOpen = !this.menuOpen)}>
        Menu
      </button>
      <nav aria-label="Main" id="main-nav">
        <a href="/runs" aria-current=${this.route.name === "runs" ? "page" : nothing}>Runs</a>
        <ss-attention-count></ss-attention-count>
        <a href="/workspaces" aria-current=${this.route.name === "workspaces" ? "page" : nothing}>Workspaces</a>
        <a href="/policy-sets" aria-current=${this.route.name === "policy-sets" ? "page" : nothing}>Policy sets</a>
        ${
          session.organizationAdmin
            ? html`<a href="/members" aria-current=${this.route.name === "members" ? "page" : nothing}>Members</a>
                <a href="/tokens" aria-current=${this.route.name === "tokens" ? "page" : nothing}>API tokens</a>
                <a href="/audit" aria-current=${this.route.name === "audit" ? "page" : nothing}>Audit</a>`
            : nothing
        }
        ${session.user.site_admin ? html`<a href="/organizations" aria-current=${this.route.name === "organizations" ? "page" : nothing}>Organizations</a>` : nothing}
        <a href="/docs">API reference</a>
      </nav>
      ${
        session.organizations.length > 1
          ? html`<label class="switcher">
            <span class="visually-hidden">Organization</span>
            <select
              id="organization-switcher"
              aria-label="Organization"
              .value=${session.organization ?? ""}
              @change=${(e: Event) => this.switchOrganization((e.target as HTMLSelectElement).value)}
            >
              ${session.organizations.map((o) => html`<option value=${o.name} ?selected=${o.name === session.organization}>${o.name}</option>`)}
            </select>
          </label>`
          : session.organization
            ? html`<span class="muted switcher" id="organization-name">${session.organization}</span>`
            : nothing
      }
      <div class="who">
        <span id="user-name">${session.user.display_name || session.user.email}</span>
        <button id="sign-out" @click=${() => void this.signOut()}>Sign out</button>
      </div>
    </header>`;
  }

  private renderPage(): TemplateResult {
    const route = this.route;
    if (route.name === "sign-in") return html`<ss-sign-in-page .notice=${this.notice}></ss-sign-in-page>`;
    if (route.name === "setup") return html`<ss-setup-page></ss-setup-page>`;
    if (route.name === "not-found") {
      return html`<h1>Page not found</h1>
        <p>There is no dashboard page at <code>${route.path}</code>. <a href="/runs">Go to the runs page</a>.</p>`;
    }
    if (this.status === "loading") return html`<p role="status">Loading your session…</p>`;
    if (this.status === "unavailable") {
      return html`<div class="notice danger" role="alert">
        <h1>StackShip is unavailable</h1>
        <p>The session could not be read. Reload the page to try again.</p>
      </div>`;
    }
    if (this.status !== "signed-in") return html`<p role="status">Redirecting to sign in…</p>`;
    switch (route.name) {
      case "home":
      case "runs":
        return html`<ss-runs-page></ss-runs-page>`;
      case "run":
        return html`<ss-run-page run-id=${route.runId}></ss-run-page>`;
      case "workspace":
        return html`<ss-workspace-page workspace-id=${route.workspaceId}></ss-workspace-page>`;
      case "workspace-state":
        return html`<ss-workspace-state-page workspace-id=${route.workspaceId}></ss-workspace-state-page>`;
      case "workspace-cloud-access":
        return html`<ss-workspace-cloud-access-page workspace-id=${route.workspaceId}></ss-workspace-cloud-access-page>`;
      case "workspace-source":
        return html`<ss-workspace-source-page workspace-id=${route.workspaceId}></ss-workspace-source-page>`;
      case "workspace-variables":
        return html`<ss-workspace-variables-page workspace-id=${route.workspaceId}></ss-workspace-variables-page>`;
      case "github-setup":
        return html`<ss-github-setup-page></ss-github-setup-page>`;
      case "tokens":
        return html`<ss-tokens-page></ss-tokens-page>`;
      case "members":
        return html`<ss-members-page></ss-members-page>`;
      case "audit":
        return html`<ss-audit-page></ss-audit-page>`;
      case "workspaces":
        return html`<ss-workspaces-page></ss-workspaces-page>`;
      case "policy-sets":
        return html`<ss-policy-sets-page></ss-policy-sets-page>`;
      case "organizations":
        return html`<ss-organizations-page></ss-organizations-page>`;
    }
  }
}

/** The document title of each route (the page's own heading says more, e.g. the run's message). */
export function pageTitle(route: Route): string {
  switch (route.name) {
    case "sign-in":
      return "Sign in";
    case "setup":
      return "Set up";
    case "home":
    case "runs":
      return "Runs";
    case "run":
      return `Run ${route.runId}`;
    case "workspace":
      return "Workspace";
    case "workspace-state":
      return "Workspace state";
    case "workspace-cloud-access":
      return "Cloud access";
    case "workspace-source":
      return "Source";
    case "workspace-variables":
      return "Variables";
    case "github-setup":
      return "GitHub App";
    case "tokens":
      return "API tokens";
    case "members":
      return "Members";
    case "audit":
      return "Audit history";
    case "workspaces":
      return "Workspaces";
    case "policy-sets":
      return "Policy sets";
    case "organizations":
      return "Organizations";
    case "not-found":
      return "Page not found";
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-app": SsApp;
  }
  interface HTMLElementEventMap {
    "ss-signed-in": CustomEvent<SignedInDetail>;
    "ss-organization-change": CustomEvent<string>;
  }
}
