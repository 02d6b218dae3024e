import type { RunArtifactKind } from './artifacts.ts';
import type { components } from '../../../generated/v1/types.gen.ts';
import type { Permission, PrincipalLike } from './authorization.ts';
import { OVERRIDE_DEFAULT_SECONDS, OVERRIDE_MAX_SECONDS, type EnforcementLevel } from './policy/index.ts';
import type { RunAttempt, RunJob, RunReview as ReviewDecision, Run, RunSource } from './records.ts';
import { awaitsDecision, isCancelable, type PolicyOutcome, type RunReason } from './run-lifecycle.ts';
import { isTerminalRunStatus } from './run.ts';

/**
 * The run review document (GET /v1/runs/{run_id}/review), derived purely from persisted records.
 * Nothing here reads a clock, a store or a sandbox: the handler loads the records and passes
 * them in with `now` and what the caller may do. A fact that was not recorded comes out as null
 * beside an explicit state; nothing is inferred from the top-level status that a record should
 * have said (ARCHITECTURE.md, invariant 7).
 */

type S = components['schemas'];
/** The review resource as the spec defines it. */
export type RunReviewResource = S['RunReview'];
type Recorded = S['RunReviewRecordedString'];
type StageStatus = S['RunReviewStageStatus'];
type Action = S['RunReviewAction'];

/** The terminal reason codes the review explains: every lifecycle reason plus the pipeline's plan_credentials_required. */
export type TerminalReasonCode = RunReason | 'plan_credentials_required';

/** One human sentence per terminal reason code: the only place these sentences live. */
export const TERMINAL_REASON_SENTENCES: Readonly<Record<TerminalReasonCode, string>> = {
  plan_failed: 'The plan failed, so there is nothing to review or apply.',
  plan_canceled: 'The run was canceled while it was planning.',
  no_changes: 'The plan found no changes and passed policy, so there was nothing to apply.',
  speculative: 'This speculative plan finished; speculative runs are never applied.',
  policy_hard_failed: 'A hard-mandatory policy failed, so this plan cannot be applied.',
  policy_errored: 'The policy check could not be completed, which blocks the run like a hard failure.',
  discarded: 'A reviewer discarded the plan; nothing was applied.',
  canceled: 'The run was canceled before anything was applied.',
  approval_expired: 'No decision was made before the approval window closed, so the run expired without applying.',
  applied: 'The plan was applied and its state was published.',
  apply_failed: 'The apply failed and published no state.',
  apply_interrupted: 'The apply was interrupted; an operator must decide whether the infrastructure changed.',
  apply_uncertain: 'The apply ended uncertainly; an operator must decide whether the infrastructure changed.',
  recovered: "An operator resolved this run's interrupted or uncertain apply.",
  sandbox_memory_limit: 'The plan or apply used more memory than its sandbox allows, so StackShip stopped it (STACKSHIP_SANDBOX_MEMORY_MB).',
  sandbox_process_limit: 'The plan or apply started more processes and threads than its sandbox allows, so StackShip stopped it (STACKSHIP_SANDBOX_PROCESSES).',
  sandbox_file_size_limit: 'The plan or apply wrote a file larger than its sandbox allows, so it failed (STACKSHIP_SANDBOX_FILE_SIZE_MB).',
  sandbox_disk_limit: 'The plan or apply wrote more to its work directory than its sandbox allows, so it failed (STACKSHIP_SANDBOX_DISK_MB).',
  sandbox_cpu_limit: 'The plan or apply used more CPU time than its sandbox allows, so StackShip stopped it (STACKSHIP_SANDBOX_CPU_SECONDS).',
  plan_credentials_required: 'The plan could not start because the workspace has no cloud credentials it may use for this run.',
};

/** Guidance for the two blocked terminal states, shown where the approval bar would be. */
export const TERMINAL_GUIDANCE = {
  plan_credentials_required: {
    sentence: "Set up the workspace's cloud access, then start a new run.",
    target: 'workspace_cloud_access',
  },
  expired: {
    sentence: 'A new run starts from a push to the tracked branch or from the CLI.',
    target: 'workspace_source_settings',
  },
} as const;

/** The most log lines a failed run's terminal panel shows. */
export const TERMINAL_LOG_TAIL_LINES = 8;

/** The permissions that hand out a download; a caller holding none of them anywhere never sees a downloads section. */
const DOWNLOAD_PERMISSIONS = ['artifact:read', 'artifact:read_sensitive', 'state:recover', 'org:admin'] as const;

/** A persisted policy result as the review reads it. */
export interface ReviewPolicyEvaluation {
  outcome: PolicyOutcome;
  resultDigest: string;
  opaVersion: string | null;
  opaBuildCommit: string | null;
  evaluatedAt: string;
}

/** A persisted finding as the review reads it (only its text leaves). */
export interface ReviewPolicyFinding {
  title: string;
  message: string;
  address: string | null;
  enforcementLevel: EnforcementLevel;
}

/** A persisted policy override as the review reads it. */
export interface ReviewPolicyOverride {
  id: string;
  resultDigest: string;
  reason: string;
  actorId: string | null;
  createdAt: string;
  expiresAt: string;
}

/** A state version this run created, as the review reads it. */
export interface ReviewStateVersion {
  id: string;
  serial: number;
  sha256: string | null;
  status: 'pending' | 'finalized' | 'discarded';
  publishedAt: string | null;
  /** Whether its bytes arrived (stored object, digest and size recorded). */
  uploaded: boolean;
}

/** The commit facts of a run, when its source recorded them (GitHub runs). */
export interface ReviewCommit {
  sha: string | null;
  ref: string | null;
  message: string | null;
  author: string | null;
  /** The commit's web page, when the repository and SHA were recorded (see `commitWebUrl`). */
  url: string | null;
}

/** Everything the review is derived from. */
export interface ReviewRecords {
  run: Run;
  /** The run's workspace; null when its record could not be found. */
  workspace: { id: string; name: string; workingDirectory: string } | null;
  commit: ReviewCommit | null;
  attempts: readonly RunAttempt[];
  jobs: readonly RunJob[];
  decision: ReviewDecision | null;
  evaluation: ReviewPolicyEvaluation | null;
  findings: readonly ReviewPolicyFinding[];
  overrides: readonly ReviewPolicyOverride[];
  overridesTruncated: boolean;
  /** The state versions whose run is this run (any status). */
  stateVersions: readonly ReviewStateVersion[];
  /** Display names of the actors named by the decision and overrides, by actor id. */
  displayNames: ReadonlyMap<string, string>;
  /** The failed phase's last log lines, read only when `failedPhase(run)` named a phase. */
  logTail: { phase: 'plan' | 'apply'; lines: readonly string[] } | null;
  /** Recovery evidence, read only while the run needs recovery. */
  recovery: S['RunRecovery'] | null;
  /** The artifacts the run has published (commands/run-artifacts.ts publishedRunArtifacts). */
  artifacts: readonly RunArtifactKind[];
}

/** Who is asking, as far as the review needs it. */
export interface ReviewCaller {
  /** Whether the caller holds `permission` on this run. */
  may(permission: Permission): boolean;
  /** Whether the caller holds any download permission at all (anywhere). */
  mayDownloadSomewhere: boolean;
}

const recorded = (value: string | null | undefined): Recorded => (value === null || value === undefined ? { state: 'not_recorded', value: null } : { state: 'recorded', value });

/** Whether a principal holds any permission that could ever hand it a download. */
export function holdsAnyDownloadPermission(principal: PrincipalLike): boolean {
  if (principal.siteAdmin) return true;
  return principal.grants.some((grant) => (DOWNLOAD_PERMISSIONS as readonly string[]).includes(grant.permission));
}

/**
 * The phase whose log tail a terminal run's panel shows: only for a run that ended errored
 * because its plan or its apply failed. Null otherwise (and then no log is read at all).
 */
export function failedPhase(run: Run): 'plan' | 'apply' | null {
  if (run.status !== 'errored') return null;
  if (run.execution.planStatus === 'errored') return 'plan';
  if (run.execution.applyStatus === 'errored' || run.execution.applyStatus === 'interrupted') return 'apply';
  return null;
}

/**
 * The run's title: its own message, or a server-generated one for a trigger that recorded none.
 * A GitHub run's message is the one the pipeline generated (`GitHub <commit-sha>`), so it counts as generated.
 */
export function reviewTitle(run: Pick<Run, 'message' | 'source'>, commitSha: string | null): { title: string; generated: boolean } {
  const github = run.source === 'github_push' || run.source === 'github_pull_request';
  if (run.message.trim() !== '') return { title: run.message, generated: github && commitSha !== null && run.message === `GitHub ${commitSha}` };
  switch (run.source) {
    case 'github_push':
    case 'github_pull_request':
      return { title: commitSha ? `GitHub ${commitSha}` : 'GitHub', generated: true };
    case 'cli':
      return { title: 'OpenTofu CLI run', generated: true };
    default:
      return { title: 'API run', generated: true };
  }
}

function first<T>(items: readonly T[]): T | undefined {
  return items[0];
}

function last<T>(items: readonly T[]): T | undefined {
  return items[items.length - 1];
}

function earliest(times: readonly (string | null)[]): string | null {
  const known = times.filter((t): t is string => t !== null).sort();
  return first(known) ?? null;
}

function activeOverride(records: ReviewRecords, now: Date): ReviewPolicyOverride | undefined {
  const digest = records.run.execution.policyResultDigest;
  if (digest === null) return undefined;
  return records.overrides
    .filter((o) => o.resultDigest === digest && Date.parse(o.expiresAt) > now.getTime())
    .sort((a, b) => (a.expiresAt < b.expiresAt ? 1 : a.expiresAt > b.expiresAt ? -1 : 0))[0];
}

function waitsOnSoftFailure(run: Run): boolean {
  return run.execution.policyOutcome === 'soft_failed' && (run.status === 'policy_soft_failed' || run.status === 'awaiting_approval');
}

/** The actions this caller may take now: the caller's permissions intersected with the run's state. */
export function availableActions(records: ReviewRecords, caller: ReviewCaller, now: Date): Action[] {
  const { run } = records;
  const x = run.execution;
  const actions: Action[] = [];
  const windowOpen = x.approvalExpiresAt === null || Date.parse(x.approvalExpiresAt) > now.getTime();
  const policyAllows = x.policyOutcome === 'skipped' || x.policyOutcome === 'passed' || (x.policyOutcome === 'soft_failed' && activeOverride(records, now) !== undefined);
  if (caller.may('run:approve') && run.status === 'awaiting_approval' && windowOpen && policyAllows && x.planDigest !== null) actions.push('approve');
  if (caller.may('run:approve') && awaitsDecision(run.status)) actions.push('discard');
  if (caller.may('run:cancel') && (isCancelable(run.status) || (run.status === 'applying' && x.cancelRequestedAt === null))) actions.push('cancel');
  if (caller.may('policy:override_soft') && waitsOnSoftFailure(run) && x.policyResultDigest !== null) actions.push('override');
  if (caller.may('run:recover') && run.status === 'needs_recovery') actions.push('recover');
  return actions;
}

function planStage(records: ReviewRecords): S['RunReviewPlanStage'] {
  const x = records.run.execution;
  const attempts = records.attempts.filter((a) => a.phase === 'plan');
  const status: StageStatus = (() => {
    switch (x.planStatus) {
      case 'pending':
        return 'pending';
      case 'running':
        return 'running';
      case 'finished':
        return 'succeeded';
      case 'errored':
        return 'failed';
      case 'canceled':
        // Stopped mid-plan is a failure of the stage; canceled before any attempt, it never ran.
        return attempts.length > 0 ? 'failed' : 'skipped';
    }
  })();
  let summary: S['RunReviewPlanStage']['summary'];
  if (x.planStatus === 'finished') summary = x.planCounts ? { state: 'recorded', counts: { ...x.planCounts }, has_changes: x.hasChanges } : { state: 'change_result_not_recorded' };
  else if (x.planStatus === 'pending' || x.planStatus === 'running') summary = { state: 'not_finished' };
  else summary = { state: 'not_produced' };
  return {
    status,
    phase_status: x.planStatus,
    started_at: first(attempts)?.startedAt ?? null,
    finished_at: last(attempts)?.finishedAt ?? null,
    summary,
  };
}

function policyStage(records: ReviewRecords, caller: ReviewCaller, now: Date): S['RunReviewPolicyStage'] {
  const { run, evaluation } = records;
  const x = run.execution;
  const outcome = x.policyOutcome ?? evaluation?.outcome ?? null;
  let status: StageStatus;
  switch (outcome) {
    case null:
      if (x.planStatus === 'pending' || x.planStatus === 'running') status = 'pending';
      else if (x.planStatus === 'finished' && run.status === 'policy_checking') status = 'running';
      else status = 'skipped';
      break;
    case 'skipped':
      status = 'skipped';
      break;
    case 'passed':
      status = 'succeeded';
      break;
    case 'soft_failed':
      // Waiting on an override; once one was recorded the stage let the run through.
      status = run.status === 'policy_soft_failed' ? 'waiting' : records.overrides.length > 0 ? 'succeeded' : 'failed';
      break;
    case 'hard_failed':
    case 'errored':
      status = 'failed';
      break;
  }
  const digest = x.policyResultDigest;
  const control =
    caller.may('policy:override_soft') && waitsOnSoftFailure(run) && digest !== null
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
    findings: records.findings.map((f) => ({ title: f.title, message: f.message, address: f.address, enforcement_level: f.enforcementLevel })),
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

function approvalStage(records: ReviewRecords): S['RunReviewApprovalStage'] {
  const { run, decision } = records;
  const x = run.execution;
  const terminal = isTerminalRunStatus(run.status);
  // The approval window is opened (recorded) exactly when a plan became approvable.
  const reached = x.approvalExpiresAt !== null || decision?.decision === 'approved';
  let state: S['RunReviewApprovalStage']['state'];
  if (decision) state = decision.decision;
  else if (awaitsDecision(run.status)) state = 'awaiting';
  else if (run.kind === 'speculative' || run.status === 'planned_and_finished') state = 'not_required';
  else if (reached || run.status === 'discarded' || run.status === 'expired' || run.status === 'applying' || run.status === 'applied' || run.status === 'needs_recovery') state = 'not_recorded';
  else state = 'not_reached';
  let status: StageStatus;
  switch (state) {
    case 'awaiting':
      status = run.status === 'awaiting_approval' ? 'waiting' : 'pending';
      break;
    case 'approved':
      status = 'succeeded';
      break;
    case 'discarded':
    case 'expired':
      status = 'failed';
      break;
    case 'canceled':
      status = reached ? 'failed' : 'skipped';
      break;
    case 'not_required':
      status = 'skipped';
      break;
    case 'not_reached':
    case 'not_recorded':
      status = terminal ? 'skipped' : 'pending';
      break;
  }
  const actorId = decision?.actorId ?? null;
  return {
    status,
    state,
    decided_by: actorId === null ? null : { actor_id: actorId, display_name: records.displayNames.get(actorId) ?? null },
    decided_at: decision?.decidedAt ?? null,
    reason: decision?.reason ?? null,
    approval_expires_at: x.approvalExpiresAt,
    plan_digest: decision ? decision.planDigest : state === 'awaiting' ? x.planDigest : null,
    destroy_confirmation_required: (x.planCounts?.destroy ?? 0) > 0,
    started_at: reached ? (records.evaluation?.evaluatedAt ?? null) : null,
    finished_at: decision?.decidedAt ?? null,
  };
}

function applyStage(records: ReviewRecords): S['RunReviewApplyStage'] {
  const { run } = records;
  const x = run.execution;
  const attempts = records.attempts.filter((a) => a.phase === 'apply');
  let status: StageStatus;
  switch (x.applyStatus) {
    case 'pending':
      status = run.kind === 'speculative' || isTerminalRunStatus(run.status) ? 'skipped' : 'pending';
      break;
    case 'running':
      status = 'running';
      break;
    case 'finished':
      status = 'succeeded';
      break;
    case 'errored':
    case 'interrupted':
    case 'canceled':
      status = 'failed';
      break;
  }
  const committed = records.stateVersions.find((v) => v.status === 'finalized');
  let stateVersion: S['RunReviewApplyStage']['state_version'];
  if (committed && committed.publishedAt !== null) {
    stateVersion = { state: 'committed', id: committed.id, serial: committed.serial, published_at: committed.publishedAt, digest: committed.sha256 };
  } else if (committed || x.applyStatus === 'finished') {
    // The apply says it finished (or a version says it is committed) but its record does not resolve.
    stateVersion = { state: 'unavailable' };
  } else {
    stateVersion = { state: 'not_recorded' };
  }
  return {
    status,
    phase_status: x.applyStatus,
    started_at: first(attempts)?.startedAt ?? null,
    finished_at: last(attempts)?.finishedAt ?? null,
    state_version: stateVersion,
  };
}

function terminalReason(records: ReviewRecords): S['RunReviewTerminalReason'] | null {
  const { run } = records;
  if (!isTerminalRunStatus(run.status) && run.status !== 'needs_recovery') return null;
  const code: TerminalReasonCode | null = run.execution.statusReason ?? (run.status === 'plan_credentials_required' ? 'plan_credentials_required' : null);
  if (code === null) return { state: 'not_recorded' };
  const guidanceCode = run.status === 'plan_credentials_required' ? 'plan_credentials_required' : run.status === 'expired' ? 'expired' : null;
  const tail = records.logTail && records.logTail.lines.length > 0 ? records.logTail : null;
  return {
    state: 'recorded',
    code,
    sentence: TERMINAL_REASON_SENTENCES[code],
    guidance: guidanceCode === null || records.workspace === null ? null : { code: guidanceCode, ...TERMINAL_GUIDANCE[guidanceCode], workspace_id: records.workspace.id },
    log_tail: tail
      ? { phase: tail.phase, caption: `The last lines of the ${tail.phase} log`, lines: tail.lines.slice(-TERMINAL_LOG_TAIL_LINES) }
      : null,
  };
}

function evidence(records: ReviewRecords): S['RunReviewEvidence'] {
  const { run, evaluation } = records;
  return {
    jobs: records.jobs.map((job) => ({ id: job.id, phase: job.phase })),
    // Nothing records the job definition, the StackShip build, the runner release, the sandbox
    // protocol or the job engine's build per run yet: they stay explicitly not recorded.
    definition_sha: recorded(null),
    build_sha: recorded(null),
    opentofu_version: recorded(run.opentofuVersion),
    runner_release: recorded(null),
    sandbox_base_profile: recorded(last(records.attempts.filter((a) => a.baseProfile !== ''))?.baseProfile),
    protocol: recorded(null),
    opa_version: recorded(evaluation?.opaVersion),
    opa_build_commit: recorded(evaluation?.opaBuildCommit),
    job_engine_build: recorded(null),
    attempts: records.attempts.map((a) => ({
      id: a.id,
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

function downloads(records: ReviewRecords, caller: ReviewCaller): S['RunReviewDownloads'] {
  const { run } = records;
  const items: Extract<S['RunReviewDownloads'], { state: 'permitted' }>['items'] = [];
  if (caller.may('artifact:read')) {
    const available = records.artifacts.includes('plan_diff');
    items.push({ kind: 'redacted_plan', method: 'GET', href: `/v1/runs/${run.id}/downloads/redacted-plan`, requires_reason: false, requires_step_up: false, available });
  }
  if (caller.may('artifact:read_sensitive')) {
    const available = records.artifacts.includes('plan_json');
    items.push({ kind: 'raw_plan', method: 'POST', href: `/v1/runs/${run.id}/downloads/raw-plan`, requires_reason: true, requires_step_up: true, available });
  }
  // Emergency state needs state:recover itself; run:recover alone never hands out state bytes.
  if (caller.may('state:recover')) {
    // What the endpoint serves: any state version this run uploaded bytes for (pending first,
    // then committed, then one a recovery discarded).
    const uploaded = records.stateVersions.some((v) => v.uploaded);
    items.push({ kind: 'emergency_state', method: 'POST', href: `/v1/runs/${run.id}/downloads/emergency-state`, requires_reason: true, requires_step_up: true, available: uploaded });
  }
  if (items.length > 0) return { state: 'permitted', items };
  if (caller.mayDownloadSomewhere) return { state: 'not_permitted', note: "You don't have permission to download this run's plan or state." };
  return null;
}

/** The review document of a run for one caller at `now`. */
export function deriveRunReview(records: ReviewRecords, caller: ReviewCaller, now: Date): RunReviewResource {
  const { run } = records;
  const x = run.execution;
  const commit = records.commit;
  const { title, generated } = reviewTitle(run, commit?.sha ?? null);
  return {
    type: 'run-reviews',
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
        finished_at: x.finishedAt,
        run_id: run.id,
        workspace: { id: run.workspaceId, name: records.workspace?.name ?? run.workspaceId, href: `/v1/workspaces/${run.workspaceId}` },
      },
      available_actions: availableActions(records, caller, now),
      stages: {
        plan: planStage(records),
        policy: policyStage(records, caller, now),
        approval: approvalStage(records),
        apply: applyStage(records),
      },
      terminal_reason: terminalReason(records),
      recovery: run.status === 'needs_recovery' ? records.recovery : null,
      evidence: evidence(records),
      downloads: downloads(records, caller),
    },
    relationships: {
      organization: { data: { type: 'organizations', id: run.organizationId } },
      workspace: { data: { type: 'workspaces', id: run.workspaceId } },
      run: { data: { type: 'runs', id: run.id } },
    },
    links: { self: `/v1/runs/${run.id}/review` },
  };
}
