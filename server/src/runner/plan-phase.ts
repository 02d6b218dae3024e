import type { Run } from "../domain/records.ts";
import type { SandboxLimitReason } from "../domain/run-lifecycle.ts";
import { moveRun, releaseRun } from "../commands/run-transitions.ts";
import { mintRunToken } from "../commands/run-tokens.ts";
import { unlockWorkspaceForRun } from "../commands/workspace-locks.ts";
import { currentStateEvidence } from "../commands/state-evidence.ts";
import type { Services } from "../commands/services.ts";
import { storePlanJson } from "./plan-json.ts";
import { dependencyBundleDigest, summarizePlan } from "./plan-analysis.ts";
import { SANDBOX_BASE_PROFILE, type SandboxResult } from "./sandbox.ts";
import { attemptProvenance } from "./provenance.ts";
import { isPlanDiffArtifactOf } from "../domain/plan-diff/index.ts";
import { sensitiveValueSet, ValueMatcher } from "../domain/redaction/index.ts";
import { endRunWithoutPlanCredentials } from "../commands/phase-credentials.ts";
import { workspaceSecretValues } from "../commands/secret-values.ts";
import { hostPlanDiff, hostRedactedPlan } from "./host-plan-diff.ts";
import { addWorkloadIdentity } from "./workload-identity-files.ts";
import {
  type ExecutionContext,
  type PhaseOutcome,
  lockForRun,
  materializeInputs,
  readRunConfiguration,
  sandboxFiles,
  LIMIT_LOG_LINES,
  limitReason,
  classify,
  runPhaseSandbox,
} from "./execution.ts";
import { PhaseLog } from "./phase-log.ts";
import { policyStage } from "./policy-stage.ts";
import { writeRunArtifact } from "../commands/run-artifacts.ts";
import { loadPlanState, localBackendOverride, planForApply, type PlanState } from "./plan-state.ts";
import { CLOUD_OVERRIDE_FILE, STAGED_DIR } from "./tofu-files.ts";
import {
  EVIDENCE_PLAN,
  EVIDENCE_PLAN_DIFF,
  EVIDENCE_PLAN_HUMAN,
  EVIDENCE_PLAN_JSON,
  EVIDENCE_PLAN_REDACTED,
} from "./plan-evidence.ts";
import type { ArtifactRef } from "../domain/artifacts.ts";

const now = () => performance.timeOrigin + performance.now();

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

  // Read while the phase starts and its inputs are prepared (awaited only when the sandbox takes it).
  const configuration = readRunConfiguration(services, run);
  configuration.catch(() => undefined);

  let fence: number | null = null;
  if (run.kind === "plan_and_apply") {
    fence = await lockForRun(services, run);
    if (fence === null) return "retry_later";
  }
  const state = await currentStateEvidence(services.stores, run.workspaceId);
  const started = await moveRun(
    services,
    run.id,
    { type: "plan_started" },
    {
      facts: {
        workspaceLockFence: fence,
        predecessorStateVersionId: state?.stateVersionId ?? null,
        predecessorStateDigest: state?.digest ?? null,
      },
    },
  );
  if (!started) {
    if (run.kind === "plan_and_apply") await unlockWorkspaceForRun(services, run.workspaceId, run.id);
    return "done";
  }
  run = started;

  const inputs = await materializeInputs(services, run);
  await addWorkloadIdentity(ctx, run, "plan", inputs);
  // Secret whatever the masks say: the snapshot's, the workspace's sensitive variables (read here
  // on the host; a speculative snapshot leaves them out) and, once minted, the run's own token.
  const secretValues = [...inputs.secrets, ...(await workspaceSecretValues(services, run.workspaceId))];
  // The sensitive values known before the plan: the snapshot's and the prior state's. The plan's
  // own are added once it exists; the log is held until then (PhaseLog).
  let planState: PlanState;
  try {
    planState = await loadPlanState(services, run);
  } catch (error) {
    const log = new PhaseLog(services.stores, run.id, "plan", services.clock, secretValues, {
      maxBytes: services.config.phaseLogMaxBytes,
      json: run.structuredRunOutput,
    });
    log.write(
      `StackShip could not verify the workspace's current state (${(error as Error).message}); the plan did not run.\n`,
    );
    await log.close();
    services.logger.warn({ runId: run.id, err: error }, "the prior state could not be read for redaction");
    await failPlan(services, run);
    return "done";
  }
  const priorState = planState.priorState;
  const knownBeforePlan = sensitiveValueSet({ variables: secretValues, priorState });
  const log = new PhaseLog(services.stores, run.id, "plan", services.clock, knownBeforePlan, {
    hold: true,
    maxBytes: services.config.phaseLogMaxBytes,
    json: run.structuredRunOutput,
  });
  const attempt = await services.stores.attempts.start({
    runId: run.id,
    phase: "plan",
    runnerId: ctx.runnerId,
    region: run.executionRegion,
    baseProfile: SANDBOX_BASE_PROFILE,
    now: services.clock(),
    provenance: attemptProvenance(ctx),
  });
  const attemptStartedAt = now();
  const { secret } = await mintRunToken(services, run, "plan", ctx.phaseTimeoutMs + 60_000);
  secretValues.push(secret);
  knownBeforePlan.push(secret);
  let result: SandboxResult;
  let warm: boolean;
  // Stored while the launcher builds the plan changes and the sandbox ends (storePlanEarly).
  let early: Promise<StoredPlan | undefined> | undefined;
  const arrived: Record<string, Buffer> = {};
  try {
    // Read while the sandbox is taken (or starts).
    // The plan's backend is the read-only local state (plan-state.ts), not the apply's `cloud` block.
    const files = configuration.then((configuration) => ({
      ...sandboxFiles(configuration, secret, inputs),
      [`${STAGED_DIR}/${CLOUD_OVERRIDE_FILE}`]: localBackendOverride(),
    }));
    files.catch(() => {});
    ({ result, warm } = await runPhaseSandbox(
      ctx,
      run,
      attempt,
      "plan",
      files,
      inputs,
      log,
      signal,
      [],
      planState,
      (name, bytes) => {
        // The saved plan, then its JSON: stored while the launcher builds the plan changes.
        arrived[name] = bytes;
        if (name === EVIDENCE_PLAN_JSON && arrived[EVIDENCE_PLAN] && early === undefined)
          early = storePlanEarly(services, run, planState, arrived[EVIDENCE_PLAN], bytes);
      },
    ));
  } catch (error) {
    log.write(`\nStackShip could not run the plan: ${(error as Error).message}\n`);
    await log.close();
    await services.stores.attempts.finish(attempt.id, "failed", "runner_error", services.clock());
    await failPlan(services, run);
    return "done";
  }
  const classification = classify(result);
  // The plan's evidence comes only over the launcher's channel (plan-evidence.ts), never from /work.
  let planFile = result.artifacts[EVIDENCE_PLAN];
  const planJsonBytes = result.artifacts[EVIDENCE_PLAN_JSON];
  // What was stored early counts only if the evidence of the exit report is exactly that.
  const stored = await early;
  const reused =
    stored && planFile?.equals(stored.planFile) && planJsonBytes?.equals(stored.planJsonBytes) ? stored : undefined;
  // The phase's whole set of sensitive values, now that the plan exists; the held log goes out
  // redacted with it (without a plan: with the values known before it).
  let planJson: unknown = reused?.planJson;
  try {
    planJson ??= planJsonBytes ? JSON.parse(planJsonBytes.toString("utf8")) : undefined;
  } catch {
    planJson = undefined;
  }
  const secrets =
    planJson === undefined
      ? knownBeforePlan
      : sensitiveValueSet({ variables: secretValues, priorState, plan: planJson });
  const matcher = new ValueMatcher(secrets);
  // With structured output, tofu's own rendering of the saved plan (never evidence: only log text, redacted).
  log.release(matcher, result.artifacts[EVIDENCE_PLAN_HUMAN]?.toString("utf8"));
  if (classification !== "exit_zero" || !planFile || !planJsonBytes || planJson === undefined) {
    if (result.error) log.write(`\n${result.error}\n`);
    if (result.limit !== null) log.write(`\n${LIMIT_LOG_LINES[result.limit]}\n`);
    await log.close();
    await services.stores.attempts.finish(
      attempt.id,
      result.interrupted ? "interrupted" : "failed",
      classification,
      services.clock(),
    );
    await failPlan(services, run, limitReason(result));
    return "done";
  }
  try {
    planFile = reused ? reused.forApply : await planForApply(services, run, planFile, planState);
  } catch (error) {
    log.write(`\nStackShip could not prepare the saved plan for its apply: ${(error as Error).message}\n`);
    await log.close();
    await services.stores.attempts.finish(attempt.id, "failed", "runner_error", services.clock());
    await failPlan(services, run);
    return "done";
  }
  const summary = reused?.summary ?? summarizePlan(planJson);
  if (summary.errored) {
    log.write("\nOpenTofu reported the plan as errored; it cannot be applied.\n");
    await log.close();
    await services.stores.attempts.finish(attempt.id, "failed", "plan_errored", services.clock());
    await failPlan(services, run);
    return "done";
  }
  // The redacted plan changes, built in the sandbox; without a valid one they stay unavailable.
  // Built by the launcher from exactly the plan JSON it sent (in memory, with nothing else of the
  // sandbox alive), and checked against the whole set of sensitive values: the builder in the
  // sandbox could not know the values only the stored prior state marks.
  const planDiffBytes = result.artifacts[EVIDENCE_PLAN_DIFF];
  const planDiffValid = planDiffBytes !== undefined && isPlanDiffArtifactOf(planDiffBytes, run.id, matcher);
  if (planDiffBytes && !planDiffValid)
    services.logger.warn(
      { runId: run.id },
      "the plan's redacted plan changes were refused (built from another plan JSON than the one stored, not this run's, too large, or holding a sensitive value); they are unavailable",
    );
  // Then the host builds them itself from the plan JSON it stores, with the whole set of values.
  const planDiffStored =
    planDiffValid && planDiffBytes ? planDiffBytes : hostPlanDiff(planJson, run.id, secrets, matcher);
  // The redacted plan the CLI renders (json-output-redacted), built by the launcher when the run
  // has structured output or the plan imports; re-checked against the whole set (host-plan-diff.ts).
  const redactedBytes = result.artifacts[EVIDENCE_PLAN_REDACTED];
  const redactedStored = redactedBytes ? hostRedactedPlan(redactedBytes, matcher) : null;
  if (redactedBytes && !redactedStored)
    services.logger.warn(
      { runId: run.id },
      "the plan's redacted plan for the CLI was refused (not such a document, or too large); it is unavailable",
    );
  // Independent objects: written concurrently.
  const [planArtifact, planJsonArtifact, planDiffArtifact] = await Promise.all([
    reused ? reused.planArtifact : writeRunArtifact(services, run, "plan", planFile),
    reused ? reused.planJsonArtifact : storePlanJson(services, run, planJsonBytes),
    planDiffStored ? writeRunArtifact(services, run, "plan_diff", planDiffStored) : null,
    redactedStored ? writeRunArtifact(services, run, "plan_json_redacted", redactedStored) : null,
    log.close(),
  ]);
  const storedAt = now();
  if (!(await services.stores.attempts.finish(attempt.id, "succeeded", classification, services.clock()))) {
    // A sweep declared this attempt lost meanwhile (this runner stopped heartbeating) and the run
    // was planned again or failed: this attempt's plan is never bound, and the run is not ours to release.
    services.logger.warn(
      { runId: run.id, attempt: attempt.id },
      "the plan finished after its attempt was declared lost; its result is not recorded",
    );
    return "done";
  }

  const planned = await moveRun(
    services,
    run.id,
    { type: "plan_finished", hasChanges: summary.hasChanges },
    {
      facts: {
        hasChanges: summary.hasChanges,
        planCounts: summary.counts,
        planImports: summary.imports,
        planGeneratedConfiguration: summary.generatedConfiguration,
        planDigest: planArtifact.sha256,
        // Recorded with the saved plan's: the approval binds all three (run-decisions.ts).
        planJsonDigest: planJsonArtifact.sha256,
        planDiffDigest: planDiffArtifact?.sha256 ?? null,
        dependencyBundleDigest: dependencyBundleDigest(
          result.artifacts["lock.hcl"] ?? null,
          result.artifacts["modules.json"] ?? null,
        ),
        // The lock file travels with the plan: the apply must use exactly these providers.
        dependencyLockFile: result.artifacts["lock.hcl"]?.toString("utf8") ?? null,
      },
    },
  );
  if (!planned) {
    await releaseRun(services, run);
    return "done";
  }
  await policyStage(ctx, planned, planJsonBytes, matcher);
  ctx.onAttemptTimings?.({
    runId: run.id,
    phase: "plan",
    warm,
    phaseStartedAt,
    attemptStartedAt,
    sandbox: result.timings,
    storedAt,
    finishedAt: now(),
  });
  return "done";
}

/** A plan stored before its attempt's result (storePlanEarly). */
interface StoredPlan {
  /** The files as the sandbox wrote them. */
  planFile: Buffer;
  planJsonBytes: Buffer;
  planJson: unknown;
  summary: ReturnType<typeof summarizePlan>;
  /** The saved plan as stored: its backend the apply's (planForApply). */
  forApply: Buffer;
  planArtifact: ArtifactRef;
  planJsonArtifact: ArtifactRef;
}

/**
 * Once the launcher sent the saved plan and its JSON (its evidence, plan-evidence.ts), they are
 * checked and stored while it builds the plan changes and the sandbox ends. Nothing of it is
 * published before the phase's result (a run's artifacts count only once its plan finished), and
 * executePlan uses it only when the evidence of the exit report is byte for byte this; otherwise
 * (or on any error here) it does all of this again itself.
 */
async function storePlanEarly(
  services: Services,
  run: Run,
  planState: PlanState,
  planFile: Buffer,
  planJsonBytes: Buffer,
): Promise<StoredPlan | undefined> {
  try {
    const planJson: unknown = JSON.parse(planJsonBytes.toString("utf8"));
    const summary = summarizePlan(planJson);
    if (summary.errored) return undefined;
    const forApply = await planForApply(services, run, planFile, planState);
    const [planArtifact, planJsonArtifact] = await Promise.all([
      writeRunArtifact(services, run, "plan", forApply),
      storePlanJson(services, run, planJsonBytes),
    ]);
    return { planFile, planJsonBytes, planJson, summary, forApply, planArtifact, planJsonArtifact };
  } catch {
    return undefined;
  }
}

async function failPlan(services: Services, run: Run, limit?: SandboxLimitReason): Promise<void> {
  const failed = await moveRun(services, run.id, { type: "plan_failed", ...(limit ? { limit } : {}) });
  await releaseRun(services, failed ?? run);
}
