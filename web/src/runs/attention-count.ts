// "Needs attention (N)" in the top navigation: how many of the organization's runs wait on a
// person (awaiting approval, policy soft-failed, needs recovery), read through the run list's
// status filter (one page of up to 100; more reads "100+"), again on every navigation and every
// `refreshMs` while the page is open. A caller who may not list the organization's runs (a role
// scoped to a project or workspace) sees no link rather than a wrong number.
import { consume } from "@lit/context";
import { listOrganizationRuns, type Client } from "@stackship/client";
import { LitElement, css, html, nothing, type TemplateResult } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { ATTENTION_STATUSES } from "../app/closed-sets.ts";
import { apiContext, sessionContext } from "../app/context.ts";
import { NAVIGATE_EVENT } from "../app/router.ts";
import type { Session } from "../app/session.ts";
import { base } from "../ui/tokens.ts";

/** The most runs one read counts; beyond it the link reads "100+". */
export const ATTENTION_LIMIT = 100;

@customElement("ss-attention-count")
export class SsAttentionCount extends LitElement {
  static override styles = [
    base,
    css`
      .count {
        display: inline-block;
        min-width: 1.5em;
        padding: 0 var(--ss-space-1);
        border-radius: 999px;
        text-align: center;
        font-variant-numeric: tabular-nums;
        font-weight: 600;
      }
      .count.some {
        background: var(--ss-attention-bg);
        color: var(--ss-attention);
      }
    `,
  ];

  @consume({ context: apiContext }) accessor api!: Client;
  @consume({ context: sessionContext, subscribe: true }) @state() accessor session: Session | null = null;

  /** How often the count is read again while the page stays open (ms). */
  @property({ type: Number, attribute: "refresh-ms" }) accessor refreshMs = 30_000;

  /** null: not known (yet, or not readable by this caller). */
  @state() accessor count: { organization: string; n: number; more: boolean } | null = null;

  private timer: ReturnType<typeof setInterval> | null = null;
  private reading: string | null = null;
  private readonly onNavigate = () => void this.read();

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener(NAVIGATE_EVENT, this.onNavigate);
    window.addEventListener("popstate", this.onNavigate);
    this.timer = setInterval(this.onNavigate, this.refreshMs);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener(NAVIGATE_EVENT, this.onNavigate);
    window.removeEventListener("popstate", this.onNavigate);
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  protected override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has("session") && this.session?.organization !== this.count?.organization) {
      this.count = null;
      void this.read();
    }
  }

  /** Reads the count for the current organization (one read at a time per organization). */
  async read(): Promise<void> {
    const organization = this.session?.organization ?? null;
    if (!organization || this.reading === organization) return;
    this.reading = organization;
    try {
      const result = await listOrganizationRuns({
        client: this.api,
        path: { organization_name: organization },
        query: { status: ATTENTION_STATUSES.join(","), limit: ATTENTION_LIMIT },
      });
      if (this.session?.organization !== organization) return;
      const page = result.data;
      if (!page || !Array.isArray(page.data)) {
        // Not allowed, or unavailable: keep a known count through a passing failure, show none otherwise.
        if (result.response?.status === 403 || result.response?.status === 404) this.count = null;
        return;
      }
      this.count = { organization, n: page.data.length, more: page.meta.page.next_cursor !== null };
    } catch {
      // A network failure keeps what was shown.
    } finally {
      if (this.reading === organization) this.reading = null;
    }
  }

  override render(): TemplateResult | typeof nothing {
    const count = this.count;
    if (!count || count.organization !== this.session?.organization) return nothing;
    const shown = count.more ? `${ATTENTION_LIMIT}+` : String(count.n);
    const label =
      count.n === 0 ? "no run waits on a person" : `${shown} run${shown === "1" ? "" : "s"} wait on a person`;
    return html`<a href="/runs?status=needs_attention" id="needs-attention"
      >Needs attention <span class="count ${count.n > 0 ? "some" : ""}" aria-hidden="true">${shown}</span><span class="visually-hidden">: ${label}</span></a
    >`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-attention-count": SsAttentionCount;
  }
}
