import { join } from "node:path";
import { canonicalize, sha256Hex } from "../domain/canonical-json.ts";
import type { InputSnapshotDocument } from "../domain/input-snapshot.ts";
import type { ExecutionPhase, Run, RunAttempt } from "../domain/records.ts";
import type { RunEvent, SandboxLimitReason } from "../domain/run-lifecycle.ts";
import { applyRunEvent, releaseRun } from "../commands/run-decisions.ts";
import { mintRunToken, revokeRunTokens } from "../commands/run-tokens.ts";
import { confirmStatePublication, listPendingStateVersions } from "../commands/state-versions.ts";
import { lockWorkspaceForRun, unlockWorkspaceForRun } from "../commands/workspace-locks.ts";
import { isDomainError } from "../domain/errors.ts";
import { currentStateEvidence } from "../commands/state-evidence.ts";
import { REPO_ROOT } from "../config.ts";
import type { Services } from "../services.ts";
import { inTransaction, type Stores } from "../store/index.ts";
import type { ApiTarget } from "./api-channel.ts";
import { LogSanitizer, stripAnsi } from "./log-sanitizer.ts";
import { evaluateRunPolicies, sanitizeText, type PolicyStageResult } from "./policy-stage.ts";
import { storePlanJson } from "./plan-json.ts";
import { policyResultDigest } from "../domain/policy/index.ts";
import { dependencyBundleDigest, summarizePlan } from "./plan-analysis.ts";
import { newSandboxId, type SandboxLimitKind, type SandboxLimits, SANDBOX_BASE_PROFILE, SANDBOX_TOOLS_DIR, SANDBOX_WORK_DIR, startSandbox, type Sandbox, type SandboxResult, type SandboxShape, type SandboxTimings } from "./sandbox.ts";
import { CLOUD_OVERRIDE_FILE, STAGED_DIR, TFVARS_FILE, cliConfig, cloudOverride, phaseScript, planDiffBinds, planDiffRequest, SANDBOX_PLAN_DIFF_BUILDER, tfvars, type MaterializedVariable } from "./tofu-files.ts";
import type { WarmSandboxPool } from "./warm-sandboxes.ts";
import { isPlanDiffArtifactOf } from "../domain/plan-diff/index.ts";
import { sensitiveValueSet, ValueMatcher } from "../domain/redaction/index.ts";
import { readStateBytes } from "../commands/state-versions.ts";
import { readPlanJson } from "./plan-json.ts";
import { endRunWithoutPlanCredentials } from "../commands/phase-credentials.ts";
import { addWorkloadIdentity } from "./workload-identity-files.ts";

/** Everything a phase execution needs besides the run. */
export interface ExecutionContext {
  services: Services;
  runnerId: string;
  /** Where the sandbox's API channel connects to (this deployment's HTTP listener). */
  api: ApiTarget;
  /** Wall-clock limit of one phase attempt. */
  phaseTimeoutMs: number;
  /** What one plan or apply sandbox may use; unset entries take DEFAULT_SANDBOX_LIMITS. */
  sandboxLimits?: Partial<SandboxLimits>;
  /** The `.tools` directory with tofu and the provider mirror. */
  toolsDir?: string;
  /** Pre-started plan sandboxes (see warm-sandboxes.ts); without one each plan starts its own. */
  warmPlanSandboxes?: WarmSandboxPool;
  /** Called with where the time of each plan attempt that produced a plan went (benchmarks, diagnostics). */
  onAttemptTimings?: (timings: AttemptTimings) => void;
}

/** Where one plan attempt's time went, as wall-clock milliseconds. */
export interface AttemptTimings {
  runId: string;
  phase: ExecutionPhase;
  /** The sandbox was pre-started (warm) rather than started for this attempt. */
  warm: boolean;
  /** The phase began executing (job claimed). */
  phaseStartedAt: number;
  /** The attempt was recorded. */
  attemptStartedAt: number;
  sandbox: SandboxTimings;
  /** The plan, its JSON and the plan-diff were stored. */
  storedAt: number;
  /** The run moved on (plan finished, after the policy stage). */
  finishedAt: number;
}

const now = () => performance.timeOrigin + performance.now();

/** What every plan sandbox is made of: tofu and the provider mirror, the plan-diff builder, the API channel. */
export function planSandboxShape(ctx: Pick<ExecutionContext, "api" | "toolsDir" | "sandboxLimits">): SandboxShape {
  return {
    api: ctx.api,
    limits: ctx.sandboxLimits,
    readOnlyBinds: [{ source: ctx.toolsDir ?? join(REPO_ROOT, ".tools"), target: SANDBOX_TOOLS_DIR }, ...planDiffBinds()],
    planDiffBuilder: SANDBOX_PLAN_DIFF_BUILDER,
  };
}

/** What a phase execution asks of the job queue afterwards. */
export type PhaseOutcome = "done" | "retry_later";

/** The run's workspace lock and its fence, or null while someone else holds the workspace. */
async function lockForRun(services: Services, run: Run): Promise<number | null> {
  try {
    return await lockWorkspaceForRun(services, run.workspaceId, run.id);
  } catch (error) {
    if (isDomainError(error, "WORKSPACE_LOCKED")) return null;
    throw error;
  }
}

/** The OPA-less policy stage result used while no policy set applies. */
function skippedPolicyDigest(): string {
  return sha256Hex(canonicalize({ format: "stackship.policy-result/v1", outcome: "skipped", policy_set_versions: [], findings: [] }));
}

/**
 * Appends sanitized phase output to the run's log in batches. A held log (the plan's) keeps its
 * text in memory until `release` names the phase's whole set of sensitive values: the values the
 * plan itself marks are only known once the plan exists, and nothing is stored (or streamed)
 * before they are redacted too.
 */
class PhaseLog {
  private buffer = "";
  private writes: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private sanitizer: LogSanitizer | null = null;
  private held: string[] = [];

  constructor(
    private readonly stores: Stores,
    private readonly runId: string,
    private readonly phase: "plan" | "policy" | "apply",
    private readonly clock: () => Date,
    private readonly secrets: readonly string[] | ValueMatcher,
    options: { hold?: boolean } = {},
  ) {
    if (!options.hold) this.sanitizer = new LogSanitizer(secrets);
  }

  write(text: string): void {
    if (this.sanitizer === null) {
      this.held.push(stripAnsi(text));
      return;
    }
    this.buffer += this.sanitizer.push(stripAnsi(text));
    if (this.buffer.length >= 16 * 1024) this.flush(false);
    else if (!this.timer) this.timer = setTimeout(() => this.flush(false), 200);
  }

  /** A held log: sanitizes what was held with these values (and everything after), and starts storing. */
  release(secrets: readonly string[] | ValueMatcher): void {
    if (this.sanitizer !== null) return;
    this.sanitizer = new LogSanitizer(secrets);
    const held = this.held.join("");
    this.held = [];
    // In pieces, so the stored chunks (and live messages) stay the size they are while streaming.
    for (let at = 0; at < held.length; ) {
      let end = Math.min(held.length, at + 16 * 1024);
      const last = held.charCodeAt(end - 1);
      if (end < held.length && last >= 0xd800 && last <= 0xdbff) end--; // never split a surrogate pair
      this.write(held.slice(at, end));
      at = end;
    }
  }

  private flush(final: boolean): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.sanitizer === null) this.release(this.secrets);
    const text = this.buffer + (final ? this.sanitizer!.flush() : "");
    this.buffer = "";
    if (text.length === 0 && !final) return;
    this.writes = this.writes.then(() => this.stores.logs.append(this.runId, this.phase, text, final, this.clock()));
  }

  /** Writes what is left and marks the phase's log complete (a held log not released yet: with the values it was created with). */
  async close(): Promise<void> {
    if (this.sanitizer === null) this.release(this.secrets);
    this.flush(true);
    await this.writes;
  }
}

interface Materialized {
  terraform: MaterializedVariable[];
  env: Record<string, string>;
  secrets: string[];
  /** Workload identity token files (workload-identity-files.ts), relative to /work. */
  files?: Record<string, string>;
}

/** The run's variables from its input snapshot; sensitive handles are unsealed for the sandbox only. */
async function materializeInputs(services: Services, run: Run): Promise<Materialized> {
  const snapshot = await services.stores.snapshots.getById(run.inputSnapshotId);
  if (!snapshot) throw new Error(`input snapshot ${run.inputSnapshotId} is missing`);
  const document: InputSnapshotDocument = snapshot.document;
  const out: Materialized = { terraform: [], env: {}, secrets: [] };
  for (const variable of document.variables) {
    let value: string;
    if (variable.sensitive) {
      const sealed = await services.stores.snapshots.getSecret(variable.value_handle);
      if (sealed === undefined) throw new Error(`secret ${variable.value_handle} of run ${run.id} is missing`);
      value = services.keys.secrets.openText(sealed);
      out.secrets.push(value);
    } else {
      value = variable.value;
    }
    if (variable.category === "env") out.env[variable.key] = value;
    // A sensitive value never touches a file: it reaches tofu as TF_VAR_ over the launcher's
    // control channel, which keeps it off the disk and out of the host's process list.
    else if (variable.sensitive) out.env[`TF_VAR_${variable.key}`] = value;
    else out.terraform.push({ key: variable.key, value, hcl: variable.hcl });
  }
  return out;
}

/** The parsed state of a state version (a phase's prior state), or undefined when there is none. */
async function readPriorState(services: Services, stateVersionId: string | null | undefined): Promise<unknown> {
  if (!stateVersionId) return undefined;
  const version = await services.stores.stateVersions.getById(stateVersionId);
  if (!version) throw new Error(`state version ${stateVersionId} is missing`);
  return JSON.parse((await readStateBytes(services, version)).toString("utf8"));
}

async function sandboxFiles(services: Services, run: Run, token: string, inputs: Materialized): Promise<Record<string, string | Uint8Array>> {
  const configurationVersion = await services.stores.configurationVersions.getById(run.configurationVersionId);
  const workspace = await services.stores.workspaces.getById(run.workspaceId);
  const organization = workspace && (await services.stores.organizations.getById(workspace.organizationId));
  if (!configurationVersion?.artifactKey || configurationVersion.sizeBytes === null || !configurationVersion.configDigest || !workspace || !organization) {
    throw new Error(`run ${run.id}: its configuration or workspace is missing`);
  }
  if (configurationVersion.configDigest !== run.configDigest) throw new Error(`run ${run.id}: configuration digest changed`);
  const tarball = await services.artifacts.get(configurationVersion.artifactKey, { sizeBytes: configurationVersion.sizeBytes, sha256: configurationVersion.configDigest });
  return {
    "config.tar.gz": tarball,
    "cli.tfrc": cliConfig(token),
    [`${STAGED_DIR}/${CLOUD_OVERRIDE_FILE}`]: cloudOverride(organization.name, workspace.name),
    [`${STAGED_DIR}/${TFVARS_FILE}`]: tfvars(inputs.terraform),
    ...inputs.files,
  };
}

/** The attempt classification (and run reason) of each sandbox limit. */
const LIMIT_REASONS: Readonly<Record<SandboxLimitKind, SandboxLimitReason>> = {
  memory: "sandbox_memory_limit",
  processes: "sandbox_process_limit",
  file_size: "sandbox_file_size_limit",
  disk: "sandbox_disk_limit",
  cpu: "sandbox_cpu_limit",
};

/** What the log says when a limit stopped the attempt (the review says it too, by its reason). */
const LIMIT_LOG_LINES: Readonly<Record<SandboxLimitKind, string>> = {
  memory: "StackShip stopped this attempt: its sandbox used more memory than allowed (STACKSHIP_SANDBOX_MEMORY_MB).",
  processes: "StackShip stopped this attempt: its sandbox reached its limit on processes and threads (STACKSHIP_SANDBOX_PROCESSES).",
  file_size: "This attempt failed on a file larger than its sandbox allows (STACKSHIP_SANDBOX_FILE_SIZE_MB).",
  disk: "This attempt failed: its sandbox's work directory is full (STACKSHIP_SANDBOX_DISK_MB).",
  cpu: "StackShip stopped this attempt: its sandbox used more CPU time than allowed (STACKSHIP_SANDBOX_CPU_SECONDS).",
};

function limitReason(result: SandboxResult): SandboxLimitReason | undefined {
  return result.limit === null ? undefined : LIMIT_REASONS[result.limit];
}

function classify(result: SandboxResult): string {
  if (result.limit !== null) return LIMIT_REASONS[result.limit];
  if (result.error && !result.started) return "sandbox_failed";
  if (result.timedOut) return "timeout";
  if (result.interrupted) return "interrupted";
  if (result.killed || result.signal) return "killed";
  return result.exitCode === 0 ? "exit_zero" : "exit_nonzero";
}

async function runPhaseSandbox(
  ctx: ExecutionContext,
  run: Run,
  attempt: RunAttempt,
  phase: ExecutionPhase,
  files: Promise<Record<string, string | Uint8Array>>,
  inputs: Materialized,
  log: PhaseLog,
  signal: AbortSignal,
  collect: string[],
): Promise<{ result: SandboxResult; warm: boolean }> {
  const workspace = await ctx.services.stores.workspaces.getById(run.workspaceId);
  // A pre-started plan sandbox when one is ready; its name is its id (fixed before the run was known).
  let sandbox: Sandbox | undefined = phase === "plan" ? await ctx.warmPlanSandboxes?.take() : undefined;
  const warm = sandbox !== undefined;
  try {
    if (sandbox === undefined) {
      const name = `${run.id}-${phase}-${attempt.attemptNumber}`.slice(0, 63);
      // Recorded before the sandbox starts, so a runner that dies mid-phase leaves its identity behind.
      const sandboxId = newSandboxId();
      await ctx.services.stores.attempts.recordSandbox(attempt.id, sandboxId, name);
      const shape: SandboxShape =
        phase === "plan"
          ? planSandboxShape(ctx)
          : { api: ctx.api, limits: ctx.sandboxLimits, readOnlyBinds: [{ source: ctx.toolsDir ?? join(REPO_ROOT, ".tools"), target: SANDBOX_TOOLS_DIR }] };
      sandbox = await startSandbox({ ...shape, sandboxId, name });
    } else {
      // Recorded before the handoff: nothing of the run is in the sandbox yet.
      await ctx.services.stores.attempts.recordSandbox(attempt.id, sandbox.sandboxId, sandbox.name);
    }
  } catch (error) {
    await sandbox?.destroy();
    throw error;
  }
  let handedOver: Record<string, string | Uint8Array>;
  try {
    handedOver = await files;
  } catch (error) {
    await sandbox.destroy();
    throw error;
  }
  const result = await sandbox.run(
    {
      argv: ["sh", "-c", phaseScript({ phase, workingDirectory: run.sourceWorkingDirectory ?? workspace?.workingDirectory ?? "", speculative: run.kind === "speculative" })],
      files: handedOver,
      env: {
        ...inputs.env,
        PATH: `${SANDBOX_TOOLS_DIR}/bin:/usr/local/bin:/usr/bin:/bin`,
        HOME: SANDBOX_WORK_DIR,
        TF_CLI_CONFIG_FILE: `${SANDBOX_WORK_DIR}/cli.tfrc`,
        TF_FORCE_LOCAL_BACKEND: "1",
        TFE_RUN_ID: run.id,
        TF_IN_AUTOMATION: "1",
        TF_INPUT: "0",
        CHECKPOINT_DISABLE: "1",
      },
      // The redacted plan changes, built by the launcher inside the sandbox after the script; the
      // sensitive variables' values stay redacted even where the plan's masks miss them.
      planDiff:
        phase === "plan"
          ? planDiffRequest(run.id, Object.keys(inputs.env).filter((name) => inputs.secrets.includes(inputs.env[name])))
          : undefined,
      timeoutMs: ctx.phaseTimeoutMs,
      signal,
      collect,
      onOutput: (chunk) => log.write(chunk.toString("utf8")),
    },
    { startedForThisRun: !warm },
  );
  return { result, warm };
}

async function moveRun(services: Services, run: Run, event: RunEvent, extra: Parameters<typeof applyRunEvent>[4] = {}): Promise<Run | undefined> {
  try {
    return await inTransaction(services.db, async (stores) => {
      const current = await stores.runs.getById(run.id);
      if (!current) return undefined;
      return applyRunEvent(stores, current, event, services.clock(), extra);
    });
  } catch (error) {
    // The run moved on concurrently (canceled, discarded): this event no longer applies.
    if ((error as { code?: string }).code === "RUN_TRANSITION_INVALID") return undefined;
    throw error;
  }
}

/**
 * The plan phase: lock (plan_and_apply runs only), plan in a fresh sandbox, store the plan and
 * its JSON encrypted, record counts and digests, then the policy stage, then either finish or
 * wait for a human decision.
 */
export async function executePlan(ctx: ExecutionContext, runId: string, signal: AbortSignal): Promise<PhaseOutcome> {
  const phaseStartedAt = now();
  const { services } = ctx;
  let run = await services.stores.runs.getById(runId);
  if (!run || run.status !== "pending") return "done";
  // Before any lock, token or sandbox: a run that may not have the credential its plan needs ends here.
  if (await endRunWithoutPlanCredentials(services, run)) return "done";

  let fence: number | null = null;
  if (run.kind === "plan_and_apply") {
    fence = await lockForRun(services, run);
    if (fence === null) return "retry_later";
  }
  const state = await currentStateEvidence(services.stores, run.workspaceId);
  const started = await moveRun(services, run, { type: "plan_started" }, {
    planStatus: "running",
    workspaceLockFence: fence,
    predecessorStateVersionId: state?.stateVersionId ?? null,
    predecessorStateDigest: state?.digest ?? null,
  });
  if (!started) {
    if (run.kind === "plan_and_apply") await unlockWorkspaceForRun(services, run.workspaceId, run.id);
    return "done";
  }
  run = started;

  const inputs = await materializeInputs(services, run);
  await addWorkloadIdentity(ctx, run, "plan", inputs);
  // The sensitive values known before the plan: the snapshot's and the prior state's. The plan's
  // own are added once it exists; the log is held until then (PhaseLog).
  let priorState: unknown;
  try {
    priorState = await readPriorState(services, state?.stateVersionId);
  } catch (error) {
    const log = new PhaseLog(services.stores, run.id, "plan", services.clock, inputs.secrets);
    log.write("StackShip could not read the workspace's current state, so it cannot tell which of its values are sensitive; the plan did not run.\n");
    await log.close();
    services.logger.warn({ runId: run.id, err: error }, "the prior state could not be read for redaction");
    await failPlan(services, run);
    return "done";
  }
  const knownBeforePlan = sensitiveValueSet({ variables: inputs.secrets, priorState });
  const log = new PhaseLog(services.stores, run.id, "plan", services.clock, knownBeforePlan, { hold: true });
  const attempt = await services.stores.attempts.start({ runId: run.id, phase: "plan", runnerId: ctx.runnerId, region: run.executionRegion, baseProfile: SANDBOX_BASE_PROFILE, now: services.clock() });
  const attemptStartedAt = now();
  const { secret } = await mintRunToken(services, run, "plan", ctx.phaseTimeoutMs + 60_000);
  let result: SandboxResult;
  let warm: boolean;
  try {
    // Read while the sandbox is taken (or starts).
    const files = sandboxFiles(services, run, secret, inputs);
    files.catch(() => {});
    ({ result, warm } = await runPhaseSandbox(ctx, run, attempt, "plan", files, inputs, log, signal, ["plan.tfplan", "plan.json", "lock.hcl", "modules.json", "plan-diff.json"]));
  } catch (error) {
    log.write(`\nStackShip could not run the plan: ${(error as Error).message}\n`);
    await log.close();
    await services.stores.attempts.finish(attempt.id, "failed", "runner_error", services.clock());
    await failPlan(services, run);
    return "done";
  }
  const classification = classify(result);
  const planFile = result.files["plan.tfplan"];
  const planJsonBytes = result.files["plan.json"];
  // The phase's whole set of sensitive values, now that the plan exists; the held log goes out
  // redacted with it (without a plan: with the values known before it).
  let planJson: unknown;
  try {
    planJson = planJsonBytes ? JSON.parse(planJsonBytes.toString("utf8")) : undefined;
  } catch {
    planJson = undefined;
  }
  const secrets = planJson === undefined ? knownBeforePlan : sensitiveValueSet({ variables: inputs.secrets, priorState, plan: planJson });
  const matcher = new ValueMatcher(secrets);
  log.release(matcher);
  if (classification !== "exit_zero" || !planFile || !planJsonBytes || planJson === undefined) {
    if (result.error) log.write(`\n${result.error}\n`);
    if (result.limit !== null) log.write(`\n${LIMIT_LOG_LINES[result.limit]}\n`);
    await log.close();
    await services.stores.attempts.finish(attempt.id, result.interrupted ? "interrupted" : "failed", classification, services.clock());
    await failPlan(services, run, limitReason(result));
    return "done";
  }
  const summary = summarizePlan(planJson as Parameters<typeof summarizePlan>[0]);
  if (summary.errored) {
    log.write("\nOpenTofu reported the plan as errored; it cannot be applied.\n");
    await log.close();
    await services.stores.attempts.finish(attempt.id, "failed", "plan_errored", services.clock());
    await failPlan(services, run);
    return "done";
  }
  // The redacted plan changes, built in the sandbox; without a valid one they stay unavailable.
  const planDiffBytes = result.files["plan-diff.json"];
  // Checked against the whole set: the builder in the sandbox could not know the values only the
  // stored prior state marks.
  const planDiffValid = planDiffBytes !== null && isPlanDiffArtifactOf(planDiffBytes, run.id, matcher);
  if (planDiffBytes && !planDiffValid) services.logger.warn({ runId: run.id }, "the plan's redacted plan changes were refused (not this run's, too large, or holding a sensitive value); they are unavailable");
  // Independent objects: written concurrently.
  const [planArtifact, planJsonArtifact, planDiffArtifact] = await Promise.all([
    services.artifacts.put(`runs/${run.id}/plan.tfplan`, planFile),
    storePlanJson(services, run, planJsonBytes),
    planDiffValid ? services.artifacts.put(`runs/${run.id}/plan-diff.json`, planDiffBytes!) : null,
    log.close(),
  ]);
  const storedAt = now();
  await services.stores.attempts.finish(attempt.id, "succeeded", classification, services.clock());

  const planned = await moveRun(services, run, { type: "plan_finished", hasChanges: summary.hasChanges }, {
    planStatus: "finished",
    hasChanges: summary.hasChanges,
    planCounts: summary.counts,
    planDigest: planArtifact.sha256,
    planSizeBytes: planArtifact.sizeBytes,
    planArtifactKey: planArtifact.key,
    planJsonDigest: planJsonArtifact.sha256,
    planJsonSizeBytes: planJsonArtifact.sizeBytes,
    planJsonArtifactKey: planJsonArtifact.key,
    planDiffDigest: planDiffArtifact?.sha256 ?? null,
    planDiffSizeBytes: planDiffArtifact?.sizeBytes ?? null,
    planDiffArtifactKey: planDiffArtifact?.key ?? null,
    dependencyBundleDigest: dependencyBundleDigest(result.files["lock.hcl"], result.files["modules.json"]),
    // The lock file travels with the plan: the apply must use exactly these providers.
    dependencyLockFile: result.files["lock.hcl"]?.toString("utf8") ?? null,
  });
  if (!planned) {
    await releaseRun(services, run);
    return "done";
  }
  await policyStage(ctx, planned, planJsonBytes, matcher);
  ctx.onAttemptTimings?.({ runId: run.id, phase: "plan", warm, phaseStartedAt, attemptStartedAt, sandbox: result.timings, storedAt, finishedAt: now() });
  return "done";
}

async function failPlan(services: Services, run: Run, limit?: SandboxLimitReason): Promise<void> {
  const failed = await moveRun(services, run, { type: "plan_failed", ...(limit ? { limit } : {}) }, { planStatus: "errored", finishedAt: services.clock().toISOString() });
  await releaseRun(services, failed ?? run);
}

/**
 * The policy stage (policy-stage.ts): the applicable policies evaluated by OPA in a fresh
 * sandbox against the plan JSON, or `skipped` when no policy set applies. The result, its
 * sanitized findings and the run's move happen in one transaction.
 */
async function policyStage(ctx: ExecutionContext, run: Run, storedPlanJson: Buffer, secrets: ValueMatcher): Promise<void> {
  const { services } = ctx;
  const log = new PhaseLog(services.stores, run.id, "policy", services.clock, secrets);
  let result: PolicyStageResult | null;
  try {
    // The plan JSON exactly as stored (its digest is the run's), without reading it back.
    const planJson = storedPlanJson;
    result = await evaluateRunPolicies({ stores: services.stores, run, planJson, secrets, log: (text) => log.write(text), toolsDir: ctx.toolsDir, timeoutMs: ctx.phaseTimeoutMs, limits: ctx.sandboxLimits });
  } catch (error) {
    const message = sanitizeText(secrets, `the policy stage could not run: ${(error as Error).message}`);
    log.write(`\n${message}\n`);
    const failed = { outcome: "errored" as const, policySetVersions: [], findings: [], opaVersion: null };
    result = { ...failed, resultDigest: policyResultDigest(failed), opaBuildCommit: null, error: message };
  }
  if (result === null) log.write("No policy set applies to this workspace; the policy stage is skipped.\n");
  await log.close();
  const outcome = result?.outcome ?? "skipped";
  const digest = result?.resultDigest ?? skippedPolicyDigest();
  const workspace = await services.stores.workspaces.getById(run.workspaceId);
  const ttlSeconds = workspace?.approvalTtlSeconds ?? 86_400;
  const now = services.clock();
  const blocked = outcome === "hard_failed" || outcome === "errored";
  let next: Run | undefined;
  try {
    next = await inTransaction(services.db, async (stores) => {
      const current = await stores.runs.getById(run.id);
      if (!current) return undefined;
      await stores.policyResults.record(
        {
          runId: run.id,
          outcome,
          resultDigest: digest,
          opaVersion: result?.opaVersion ?? null,
          opaBuildCommit: result?.opaBuildCommit ?? null,
          policySetVersions: result?.policySetVersions ?? [],
          error: result?.error ?? null,
          evaluatedAt: now.toISOString(),
        },
        result?.findings ?? [],
      );
      return applyRunEvent(stores, current, { type: "policy_evaluated", outcome }, now, {
        policyOutcome: outcome,
        policyResultDigest: digest,
        approvalExpiresAt: blocked ? undefined : new Date(now.getTime() + ttlSeconds * 1000).toISOString(),
        finishedAt: blocked ? now.toISOString() : undefined,
      });
    });
  } catch (error) {
    // The run moved on concurrently (canceled, discarded): this result no longer applies.
    if ((error as { code?: string }).code === "RUN_TRANSITION_INVALID") return;
    throw error;
  }
  if (next && next.status === "planned_and_finished") {
    await services.stores.runs.update(next.id, next.status, { approvalExpiresAt: null, finishedAt: now.toISOString(), updatedAt: now });
    await releaseRun(services, next);
  } else if (next && next.status === "errored") {
    await releaseRun(services, next);
  }
}

/**
 * The apply phase: re-check that the approval's evidence is still current and that the run
 * still holds the workspace lock at its fence, apply exactly the saved plan in a fresh sandbox,
 * and publish the state version tofu uploaded only after confirming its metadata. Anything
 * uncertain ends in needs_recovery with the lock kept.
 */
export async function executeApply(ctx: ExecutionContext, runId: string, signal: AbortSignal): Promise<PhaseOutcome> {
  const { services } = ctx;
  const run = await services.stores.runs.getById(runId);
  if (!run || run.status !== "applying" || run.execution.applyStatus !== "pending") return "done";
  const review = await services.stores.reviews.getByRun(run.id);
  const x = run.execution;
  const fence = await lockForRun(services, run);
  const state = await currentStateEvidence(services.stores, run.workspaceId);
  // A soft policy failure is applied only while an override of exactly this result is unexpired.
  const policyHolds =
    x.policyOutcome === "skipped" ||
    x.policyOutcome === "passed" ||
    (x.policyOutcome === "soft_failed" && x.policyResultDigest !== null && (await services.stores.policyResults.findActiveOverride(run.id, x.policyResultDigest, services.clock())) !== undefined);
  const stale =
    !policyHolds ||
    !review ||
    review.decision !== "approved" ||
    review.planDigest !== x.planDigest ||
    review.policyResultDigest !== x.policyResultDigest ||
    review.predecessorStateDigest !== (state?.digest ?? null) ||
    review.dependencyBundleDigest !== x.dependencyBundleDigest ||
    fence === null ||
    fence !== x.workspaceLockFence;
  const log = new PhaseLog(services.stores, run.id, "apply", services.clock, []);
  if (stale) {
    log.write(
      policyHolds
        ? "The approval no longer matches the workspace (its lock, state or evidence changed); nothing was applied.\n"
        : "The policy result no longer allows an apply (the override of its soft failure expired, or the result is not passing); nothing was applied.\n",
    );
    await log.close();
    const failed = await moveRun(services, run, { type: "apply_failed" }, { applyStatus: "errored", finishedAt: services.clock().toISOString() });
    await releaseRun(services, failed ?? run);
    return "done";
  }

  const inputs = await materializeInputs(services, run);
  await addWorkloadIdentity(ctx, run, "apply", inputs);
  // The apply's sensitive values: the snapshot's, the prior state's and everything the plan marks.
  let secrets: ValueMatcher;
  try {
    const [priorState, planJson] = await Promise.all([readPriorState(services, state?.stateVersionId), readPlanJson(services, run)]);
    secrets = new ValueMatcher(sensitiveValueSet({ variables: inputs.secrets, priorState, plan: JSON.parse(planJson.toString("utf8")) }));
  } catch (error) {
    services.logger.warn({ runId: run.id, err: error }, "the apply's sensitive values could not be determined");
    log.write("StackShip could not read the plan or the workspace's current state, so it cannot tell which values are sensitive; nothing was applied.\n");
    await log.close();
    const failed = await moveRun(services, run, { type: "apply_failed" }, { applyStatus: "errored", finishedAt: services.clock().toISOString() });
    await releaseRun(services, failed ?? run);
    return "done";
  }
  const sanitizedLog = new PhaseLog(services.stores, run.id, "apply", services.clock, secrets);
  const attempt = await services.stores.attempts.start({ runId: run.id, phase: "apply", runnerId: ctx.runnerId, region: run.executionRegion, baseProfile: SANDBOX_BASE_PROFILE, now: services.clock() });
  const started = await services.stores.runs.update(run.id, "applying", { applyStatus: "running", updatedAt: services.clock() });
  if (!started) return "done";
  const { secret } = await mintRunToken(services, run, "apply", ctx.phaseTimeoutMs + 60_000);
  let result: SandboxResult;
  try {
    const files = (async () => {
      const files = await sandboxFiles(services, run, secret, inputs);
      files["plan.tfplan"] = await services.artifacts.get(x.planArtifactKey!, { sizeBytes: x.planSizeBytes!, sha256: x.planDigest! });
      if (x.dependencyLockFile !== null) files["lock.hcl"] = x.dependencyLockFile;
      return files;
    })();
    files.catch(() => {});
    ({ result } = await runPhaseSandbox(ctx, run, attempt, "apply", files, inputs, sanitizedLog, signal, []));
  } catch (error) {
    sanitizedLog.write(`\nStackShip could not start the apply: ${(error as Error).message}\n`);
    await sanitizedLog.close();
    await services.stores.attempts.finish(attempt.id, "failed", "runner_error", services.clock());
    return endApply(services, run, { type: "apply_uncertain", interrupted: false }, "errored");
  }
  if (result.limit !== null) sanitizedLog.write(`\n${LIMIT_LOG_LINES[result.limit]}\n`);
  await sanitizedLog.close();
  const classification = classify(result);
  const limit = limitReason(result);
  const pending = await listPendingStateVersions(services, run.id);
  const now = services.clock();
  if (classification === "exit_zero" && pending.length === 1) {
    await services.stores.attempts.finish(attempt.id, "succeeded", classification, now);
    const [version] = pending;
    try {
      await confirmStatePublication(services, { runId: run.id, stateVersionId: version.id, serial: version.serial, lineage: version.lineage, sha256: version.sha256!, fence: fence! });
    } catch {
      return endApply(services, run, { type: "apply_uncertain", interrupted: false }, "errored");
    }
    return endApply(services, run, { type: "apply_finished" }, "finished");
  }
  // A limit the watcher enforced killed tofu mid-apply, like an interruption; one tofu ran into
  // (a full disk, a file too large) made it fail on its own.
  const killed = result.killed || result.signal !== null;
  const interrupted = classification === "interrupted" || classification === "timeout" || classification === "killed" || (limit !== undefined && killed);
  await services.stores.attempts.finish(attempt.id, interrupted ? "interrupted" : "failed", classification, now);
  if ((classification === "exit_nonzero" || (limit !== undefined && !killed)) && pending.length === 0) {
    // tofu failed and published nothing: no state was written, so nothing changed that StackShip knows of.
    return endApply(services, run, { type: "apply_failed", ...(limit ? { limit } : {}) }, "errored");
  }
  return endApply(services, run, { type: "apply_uncertain", interrupted, ...(limit ? { limit } : {}) }, interrupted ? "interrupted" : "errored");
}

async function endApply(services: Services, run: Run, event: RunEvent, applyStatus: "finished" | "errored" | "interrupted"): Promise<PhaseOutcome> {
  const current = (await services.stores.runs.getById(run.id)) ?? run;
  const terminal = event.type !== "apply_uncertain";
  const ended = await moveRun(services, current, event, { applyStatus, finishedAt: terminal ? services.clock().toISOString() : undefined });
  // needs_recovery keeps the workspace locked until an operator resolves it.
  if (terminal) await releaseRun(services, ended ?? current);
  else await revokeRunTokens(services, run.id);
  return "done";
}
