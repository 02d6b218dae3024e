import { LitElement, html, nothing } from "lit";
import { customElement, property } from "lit/decorators.js";
import { base } from "../ui/tokens.ts";
import { guidanceStripStyles } from "./guidance-strip.styles.ts";
import type { TerminalReason } from "./review-model.ts";

type Guidance = NonNullable<Extract<TerminalReason, { state: "recorded" }>["guidance"]>;

/**
 * The guidance strip of the two blocked terminal states, in the approval bar's position: a
 * plan_credentials_required run links to the workspace's cloud access page; an expired run says a
 * new run starts from a push to the tracked branch or from the CLI and links to the workspace's
 * source settings.
 *
 * @summary What to do after a blocked run.
 */
@customElement("ss-guidance-strip")
export class SsGuidanceStrip extends LitElement {
  static override styles = [base, guidanceStripStyles];

  @property({ attribute: false }) accessor guidance: Guidance | null = null;

  override render() {
    const g = this.guidance;
    if (!g) return nothing;
    switch (g.target) {
      case "workspace_cloud_access":
        return html`<section class="notice attention" data-testid="guidance-strip" aria-label="What to do next">
          <p>${g.sentence}</p>
          <p><a href="/workspaces/${g.workspace_id}/cloud-access">Open the workspace's cloud access</a></p>
        </section>`;
      case "workspace_source_settings":
        return html`<section class="notice attention" data-testid="guidance-strip" aria-label="What to do next">
          <p>${g.sentence}</p>
          <p><a href="/workspaces/${g.workspace_id}/source">Open the workspace's source settings</a></p>
        </section>`;
      default:
        return html`<section class="notice danger" data-testid="guidance-strip">
          <p>This run carries guidance this dashboard does not know (<code>${String((g as { target: unknown }).target)}</code>).</p>
        </section>`;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-guidance-strip": SsGuidanceStrip;
  }
}
