import { LitElement, html, nothing, type PropertyValues } from "lit";
import { customElement, property, state } from "lit/decorators.js";
import { base } from "../ui/tokens.ts";
import type { StageToggleDetail } from "./events.ts";
import {
  approvalHeadline,
  countsSentence,
  formatDuration,
  spanMs,
  type Action,
  type Header,
  type Stages,
} from "./review-model.ts";
import { stageTimelineStyles } from "./stage-timeline.styles.ts";
import "./apply-evidence.ts";
import "./approval-evidence.ts";
import "./phase-badge.ts";
import "./plan-stage-body.ts";
import "./policy-evidence.ts";
import "./run-console.ts";
import "./run-stage.ts";

type StageName = StageToggleDetail["stage"];
const ORDER: readonly StageName[] = ["plan", "policy", "approval", "apply"];

/**
 * The ordered stage timeline: plan, policy, approval and apply, each with its status, duration
 * and summary (the plan's sanitized counts; "Plan not finished yet" while it runs; the attention
 * badge only for a finished plan whose change result was not recorded). Expanding a stage the
 * first time creates its console (read then) and evidence. A running or failed stage starts
 * expanded, and the policy stage whenever its outcome is not pass; a terminal applied run starts with its last succeeded stage
 * expanded, so the published state is visible without a click.
 *
 * @summary The run's stages.
 */
@customElement("ss-stage-timeline")
export class SsStageTimeline extends LitElement {
  static override styles = [base, stageTimelineStyles];

  @property({ attribute: "run-id" }) accessor runId = "";
  @property({ attribute: false }) accessor stages: Stages | undefined;
  @property({ attribute: false }) accessor header: Header | undefined;
  @property({ attribute: false }) accessor actions: readonly Action[] = [];
  @property({ type: Number }) accessor now = Date.now();

  @state() accessor expanded = new Set<StageName>();
  /** Stages expanded at least once: their content exists from then on. */
  @state() accessor opened = new Set<StageName>();
  /** Default expansions already applied, so a person's collapse is not undone by the next read. */
  private defaultsApplied = new Set<string>();

  protected override willUpdate(changed: PropertyValues<this>) {
    if (changed.has("runId")) {
      this.expanded = new Set();
      this.opened = new Set();
      this.defaultsApplied = new Set();
    }
    const s = this.stages;
    if (!s) return;
    const policyNotPass = s.policy.outcome !== null && s.policy.outcome !== "passed" && s.policy.status !== "skipped";
    if (policyNotPass) this.expandByDefault("policy", `policy:${s.policy.outcome}`);
    // The running stage opens by itself (its console follows), and so does a failed one (its console opens at the error).
    for (const name of ORDER)
      if (s[name].status === "running" || (s[name].status === "failed" && !decidedAgainst(s, name)))
        this.expandByDefault(name, `${s[name].status}:${name}`);
    if (this.header?.status === "applied") {
      const lastSucceeded = [...ORDER].reverse().find((name) => s[name].status === "succeeded");
      if (lastSucceeded) this.expandByDefault(lastSucceeded, "applied");
    }
  }

  private expandByDefault(stage: StageName, reason: string) {
    if (this.defaultsApplied.has(reason)) return;
    this.defaultsApplied.add(reason);
    this.expanded = new Set([...this.expanded, stage]);
    this.opened = new Set([...this.opened, stage]);
  }

  private onToggle(event: CustomEvent<StageToggleDetail>) {
    const { stage, expanded } = event.detail;
    const next = new Set(this.expanded);
    if (expanded) next.add(stage);
    else next.delete(stage);
    this.expanded = next;
    if (expanded && !this.opened.has(stage)) this.opened = new Set([...this.opened, stage]);
  }

  private duration(start: string | null, end: string | null, running: boolean, status = ""): string {
    if (status === "skipped") return "";
    if (start === null) return end === null ? "" : "duration not recorded";
    const ms = spanMs(start, running ? null : end, this.now);
    return ms === null ? "" : formatDuration(ms);
  }

  override render() {
    const s = this.stages;
    if (!s) return nothing;
    return html`<section aria-labelledby="timeline-heading" @ss-stage-toggle=${this.onToggle}>
      <h2 id="timeline-heading">Stages</h2>
      <ol>
        <li>${this.renderPlan(s)}</li>
        <li>${this.renderPolicy(s)}</li>
        <li>${this.renderApproval(s)}</li>
        <li>${this.renderApply(s)}</li>
      </ol>
    </section>`;
  }

  private renderPlan(s: Stages) {
    const p = s.plan;
    const summary = p.summary;
    let text;
    switch (summary.state) {
      case "not_finished":
        text = html`<span class="quiet" data-testid="plan-summary">Plan not finished yet</span>`;
        break;
      case "recorded":
        text = html`<span data-testid="plan-summary">${summary.has_changes === false ? "No changes" : countsSentence(summary.counts)}</span>`;
        break;
      case "change_result_not_recorded":
        text = html`<span class="attention-badge" data-testid="plan-summary">Change result not recorded</span>`;
        break;
      case "not_produced":
        text = html`<span class="quiet" data-testid="plan-summary">No plan was produced</span>`;
        break;
      default:
        text = html`<span class="error" data-testid="plan-summary">Unknown plan summary “${(summary as { state: string }).state}”</span>`;
    }
    return html`<ss-run-stage
      stage="plan"
      status=${p.status}
      outcome=${decidedAgainst(s, "plan")}
      duration=${this.duration(p.started_at, p.finished_at, p.status === "running", p.status)}
      ?expanded=${this.expanded.has("plan")}
      data-testid="stage-plan"
    >
      <span slot="summary" class="summary"><ss-phase-badge phase="plan" status=${p.phase_status}></ss-phase-badge>${text}</span>
      ${this.opened.has("plan") ? html`<ss-plan-stage-body run-id=${this.runId} ?plan-finished=${p.phase_status === "finished"} ?plan-running=${p.phase_status === "running" || p.phase_status === "pending"}></ss-plan-stage-body>` : nothing}
    </ss-run-stage>`;
  }

  private renderPolicy(s: Stages) {
    const p = s.policy;
    const words: Record<string, string> = {
      skipped: "No policy applies",
      passed: "Passed",
      soft_failed: "Soft-mandatory failure",
      hard_failed: "Hard-mandatory failure",
      errored: "Errored",
    };
    return html`<ss-run-stage
      stage="policy"
      status=${p.status}
      duration=${this.duration(p.started_at, p.finished_at, p.status === "running", p.status)}
      ?expanded=${this.expanded.has("policy")}
      data-testid="stage-policy"
    >
      <span slot="summary" class="summary" data-testid="policy-summary"
        >${p.outcome === null ? html`<span class="quiet">${p.status === "skipped" ? "Not reached" : "No result yet"}</span>` : (words[p.outcome] ?? `Unknown outcome “${p.outcome}”`)}${
          p.findings.length
            ? html` · ${p.findings.length} ${p.findings.length === 1 ? "finding" : "findings"}`
            : nothing
        }</span
      >
      ${
        this.opened.has("policy")
          ? html`<ss-run-console run-id=${this.runId} phase="policy"></ss-run-console>
            <ss-policy-evidence run-id=${this.runId} .policy=${p} .actions=${this.actions}></ss-policy-evidence>`
          : nothing
      }
    </ss-run-stage>`;
  }

  private renderApproval(s: Stages) {
    const a = s.approval;
    const headline = approvalHeadline(a);
    const who = headline?.who ? ` ${headline.who.name ?? headline.who.id}` : "";
    return html`<ss-run-stage
      stage="approval"
      status=${a.status}
      outcome=${decidedAgainst(s, "approval")}
      duration=${this.duration(a.started_at, a.finished_at, a.status === "waiting", a.status)}
      ?expanded=${this.expanded.has("approval")}
      data-testid="stage-approval"
    >
      <span slot="summary" class="summary">${headline ? `${headline.verb}${who}` : `Unknown approval state “${a.state}”`}</span>
      ${this.opened.has("approval") ? html`<ss-approval-evidence run-id=${this.runId} .approval=${a}></ss-approval-evidence>` : nothing}
    </ss-run-stage>`;
  }

  private renderApply(s: Stages) {
    const a = s.apply;
    const v = a.state_version;
    return html`<ss-run-stage
      stage="apply"
      status=${a.status}
      outcome=${decidedAgainst(s, "apply")}
      duration=${this.duration(a.started_at, a.finished_at, a.status === "running", a.status)}
      ?expanded=${this.expanded.has("apply")}
      data-testid="stage-apply"
    >
      <span slot="summary" class="summary"
        >${
          a.status === "skipped"
            ? html`<span>Not applied</span>`
            : html`<ss-phase-badge phase="apply" status=${a.phase_status}></ss-phase-badge>`
        }${v.state === "committed" ? html`<span>State serial ${v.serial}</span>` : nothing}</span
      >
      ${this.opened.has("apply") ? html`<ss-run-console run-id=${this.runId} phase="apply"></ss-run-console><ss-apply-evidence .apply=${a}></ss-apply-evidence>` : nothing}
    </ss-run-stage>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "ss-stage-timeline": SsStageTimeline;
  }
}

const APPROVAL_ENDINGS: Record<string, string> = { discarded: "Discarded", expired: "Expired", canceled: "Canceled" };

/**
 * The word for a stage that "failed" without anything going wrong (a discarded, expired or
 * canceled approval; a canceled plan or apply), or "" for any other stage.
 */
export function decidedAgainst(s: Stages, stage: StageName): string {
  if (s[stage].status !== "failed") return "";
  if (stage === "approval") return APPROVAL_ENDINGS[s.approval.state] ?? "";
  if (stage === "plan" || stage === "apply") return s[stage].phase_status === "canceled" ? "Canceled" : "";
  return "";
}
