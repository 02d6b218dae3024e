import { OVERRIDE_DEFAULT_SECONDS, OVERRIDE_MAX_SECONDS } from "../../domain/policy/index.ts";
import type { RunSource } from "../../domain/records.ts";
import {
  activeOverride,
  applyStageStatus,
  approvalStageStatus,
  availableActions,
  committedStateVersion,
  earliest,
  first,
  last,
  planStageStatus,
  policyStageStatus,
  reviewDownloads,
  reviewTitle,
  terminalReasonOf,
  waitsOnSoftFailure,
  TERMINAL_GUIDANCE,
  TERMINAL_LOG_TAIL_LINES,
  TERMINAL_REASON_SENTENCES,
  type ReviewCaller,
  type ReviewDownloadKind,
  type ReviewRecords,
} from "../../domain/review.ts";
import type { S } from "./types.ts";

/**
 * The run review document (GET /v1/runs/{run_id}/review) in its wire shape: the facts
 * domain/review.ts derives from the records, with hrefs, captions and the spec's field names.
 */

/** The review resource as the spec defines it. */
export type RunReviewResource = S["RunReview"];
type Recorded = S["RunReviewRecordedString"];

/** What the document is built from: the records, plus the recovery evidence while the run needs recovery. */
export interface ReviewDocumentInput extends ReviewRecords {
  recovery: S["RunRecovery"] | null;
  /** The phases whose stored log passed its cap (runner/phase-log.ts); none when absent. */
  truncatedLogs?: ReadonlyArray<"plan" | "policy" | "apply">;
  /** The run's issued attestations (commands/attestations.ts), named by their envelopes' digests; none when absent. */
  attestations?: ReadonlyArray<{
    id: string;
    stage: "decision" | "outcome";
    envelopeDigest: string;
    keyId: string;
    createdAt: string;
  }>;
}

const recorded = (value: string | null | undefined): Recorded =>
  value === null || value === undefined ? { state: "not_recorded", value: null } : { state: "recorded", value };

function attemptWindow(
  records: ReviewRecords,
  phase: "plan" | "apply",
): { started_at: string | null; finished_at: string | null } {
  const attempts = records.attempts.filter((a) => a.phase === phase);
  return { started_at: first(attempts)?.startedAt ?? null, finished_at: last(attempts)?.finishedAt ?? null };
}

function planStage(records: ReviewRecords): S["RunReviewPlanStage"] {
  const x = records.run.execution;
  let summary: S["RunReviewPlanStage"]["summary"];
  if (x.planStatus === "finished")
    summary = x.planCounts
      ? { state: "recorded", counts: { ...x.planCounts }, has_changes: x.hasChanges }
      : { state: "change_result_not_recorded" };
  else if (x.planStatus === "pending" || x.planStatus === "running") summary = { state: "not_finished" };
  else summary = { state: "not_produced" };
  const { started_at, finished_at } = attemptWindow(records, "plan");
  return { status: planStageStatus(records), phase_status: x.planStatus, started_at, finished_at, summary };
}

function policyStage(records: ReviewRecords, caller: ReviewCaller, now: Date): S["RunReviewPolicyStage"] {
  const { run, evaluation } = records;
  const x = run.execution;
  const { outcome, status } = policyStageStatus(records);
  const digest = x.policyResultDigest;
  const control =
    caller.may("policy:override_soft") && waitsOnSoftFailure(run) && digest !== null
      ? {
          result_digest: digest,
          href: `/v1/runs/${run.id}/policy-overrides`,
          default_duration_seconds: OVERRIDE_DEFAULT_SECONDS,
          max_duration_seconds: OVERRIDE_MAX_SECONDS,
          active_override_expires_at: activeOverride(records, now)?.expiresAt ?? null,
          expires_at: x.approvalExpiresAt,
        }
      : null;
  return {
    status,
    outcome,
    started_at: null,
    finished_at: evaluation?.evaluatedAt ?? null,
    findings: records.findings.map((f) => ({
      title: f.title,
      message: f.message,
      address: f.address,
      enforcement_level: f.enforcementLevel,
    })),
    override_control: control,
    overrides: records.overrides.map((o) => ({
      id: o.id,
      actor_id: o.actorId,
      actor_display_name: o.actorId === null ? null : (records.displayNames.get(o.actorId) ?? null),
      reason: o.reason,
      created_at: o.createdAt,
      expires_at: o.expiresAt,
    })),
    overrides_truncated: records.overridesTruncated,
  };
}

function approvalStage(records: ReviewDocumentInput): S["RunReviewApprovalStage"] {
  const { run, decision } = records;
  const x = run.execution;
  const { state, status, reached } = approvalStageStatus(records);
  const actorId = decision?.actorId ?? null;
  return {
    status,
    state,
    decided_by:
      actorId === null ? null : { actor_id: actorId, display_name: records.displayNames.get(actorId) ?? null },
    decided_at: decision?.decidedAt ?? null,
    reason: decision?.reason ?? null,
    approval_expires_at: x.approvalExpiresAt,
    plan_digest: decision ? decision.planDigest : state === "awaiting" ? x.planDigest : null,
    destroy_confirmation_required: (x.planCounts?.destroy ?? 0) > 0,
    started_at: reached ? (records.evaluation?.evaluatedAt ?? null) : null,
    finished_at: decision?.decidedAt ?? null,
    attestations: (records.attestations ?? []).map((a) => ({
      id: a.id,
      stage: a.stage,
      envelope_sha256: a.envelopeDigest,
      key_id: a.keyId,
      created_at: a.createdAt,
    })),
  };
}

function applyStage(records: ReviewRecords): S["RunReviewApplyStage"] {
  const committed = committedStateVersion(records);
  const stateVersion: S["RunReviewApplyStage"]["state_version"] =
    committed.state === "committed"
      ? {
          state: "committed",
          id: committed.version.id,
          serial: committed.version.serial,
          published_at: committed.version.publishedAt,
          digest: committed.version.sha256,
        }
      : { state: committed.state };
  const { started_at, finished_at } = attemptWindow(records, "apply");
  return {
    status: applyStageStatus(records),
    phase_status: records.run.execution.applyStatus,
    started_at,
    finished_at,
    state_version: stateVersion,
  };
}

function terminalReason(records: ReviewRecords): S["RunReviewTerminalReason"] | null {
  const reason = terminalReasonOf(records);
  if (reason === null || reason.state === "not_recorded") return reason;
  const tail = records.logTail && records.logTail.lines.length > 0 ? records.logTail : null;
  return {
    state: "recorded",
    code: reason.code,
    sentence: TERMINAL_REASON_SENTENCES[reason.code],
    guidance:
      reason.guidance === null || records.workspace === null
        ? null
        : { code: reason.guidance, ...TERMINAL_GUIDANCE[reason.guidance], workspace_id: records.workspace.id },
    log_tail: tail
      ? {
          phase: tail.phase,
          caption: `The last lines of the ${tail.phase} log`,
          lines: tail.lines.slice(-TERMINAL_LOG_TAIL_LINES),
        }
      : null,
  };
}

function evidence(records: ReviewRecords): S["RunReviewEvidence"] {
  const { run, evaluation } = records;
  // Recorded by each attempt when it started (runner/provenance.ts); the latest attempt's stands.
  const provenance = last(records.attempts.filter((a) => a.provenance))?.provenance ?? null;
  return {
    jobs: records.jobs.map((job) => ({ id: job.id, phase: job.phase })),
    // StackShip has no workflow definition apart from its build, and no versioned runner
    // protocol: those two stay explicitly not recorded.
    definition_sha: recorded(null),
    build_sha: recorded(provenance?.buildSha),
    opentofu_version: recorded(run.opentofuVersion),
    opentofu_build: recorded(provenance?.opentofuBinaryDigest),
    runner_release: recorded(provenance?.runnerRelease),
    sandbox_base_profile: recorded(last(records.attempts.filter((a) => a.baseProfile !== ""))?.baseProfile),
    sandbox_profile_digest: recorded(provenance?.sandboxProfileDigest),
    protocol: recorded(null),
    opa_version: recorded(evaluation?.opaVersion),
    opa_build_commit: recorded(evaluation?.opaBuildCommit),
    job_engine_build: recorded(provenance?.jobEngineBuild),
    attempts: records.attempts.map((a) => ({
      id: a.id,
      workflow_id: a.provenance?.jobId ?? null,
      phase: a.phase,
      attempt_number: a.attemptNumber,
      sandbox_id: a.sandboxId,
      sandbox_name: a.sandboxName,
      region: a.region,
      status: a.status,
      terminal_classification: a.terminalClassification,
      started_at: a.startedAt,
      finished_at: a.finishedAt,
    })),
  };
}

const DOWNLOAD_LINKS: Record<ReviewDownloadKind, { path: string; method: "GET" | "POST"; sensitive: boolean }> = {
  redacted_plan: { path: "redacted-plan", method: "GET", sensitive: false },
  raw_plan: { path: "raw-plan", method: "POST", sensitive: true },
  emergency_state: { path: "emergency-state", method: "POST", sensitive: true },
};

function downloads(records: ReviewRecords, caller: ReviewCaller): S["RunReviewDownloads"] {
  const offered = reviewDownloads(records, caller);
  if (offered.state === "hidden") return null;
  if (offered.state !== "permitted")
    return { state: "not_permitted", note: "You don't have permission to download this run's plan or state." };
  const items = offered.items.map(({ kind, available }) => {
    const link = DOWNLOAD_LINKS[kind];
    return {
      kind,
      method: link.method,
      href: `/v1/runs/${records.run.id}/downloads/${link.path}`,
      requires_reason: link.sensitive,
      requires_step_up: link.sensitive,
      available,
    };
  });
  return { state: "permitted", items };
}

/** The review document of a run for one caller at `now`. */
export function deriveRunReview(records: ReviewDocumentInput, caller: ReviewCaller, now: Date): RunReviewResource {
  const { run } = records;
  const commit = records.commit;
  const { title, generated } = reviewTitle(run, commit?.sha ?? null);
  return {
    type: "run-reviews",
    id: run.id,
    attributes: {
      header: {
        title,
        title_generated: generated,
        commit_message: recorded(commit?.message),
        status: run.status,
        kind: run.kind,
        source: run.source as RunSource,
        commit_sha: recorded(commit?.sha),
        commit_url: recorded(commit?.url),
        source_ref: recorded(commit?.ref),
        working_directory: recorded(run.sourceWorkingDirectory ?? records.workspace?.workingDirectory),
        commit_author: recorded(commit?.author),
        created_at: run.createdAt,
        started_at: earliest(records.attempts.map((a) => a.startedAt)),
        finished_at: run.execution.finishedAt,
        run_id: run.id,
        workspace: {
          id: run.workspaceId,
          name: records.workspace?.name ?? run.workspaceId,
          href: `/v1/workspaces/${run.workspaceId}`,
        },
      },
      available_actions: availableActions(records, caller, now),
      stages: {
        plan: planStage(records),
        policy: policyStage(records, caller, now),
        approval: approvalStage(records),
        apply: applyStage(records),
      },
      terminal_reason: terminalReason(records),
      recovery: run.status === "needs_recovery" ? records.recovery : null,
      evidence: evidence(records),
      downloads: downloads(records, caller),
      ...(records.truncatedLogs && records.truncatedLogs.length > 0
        ? { truncated_logs: [...records.truncatedLogs] }
        : {}),
    },
    relationships: {
      organization: { data: { type: "organizations", id: run.organizationId } },
      workspace: { data: { type: "workspaces", id: run.workspaceId } },
      run: { data: { type: "runs", id: run.id } },
    },
    links: { self: `/v1/runs/${run.id}/review` },
  };
}
