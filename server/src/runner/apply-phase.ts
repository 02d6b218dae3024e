import type { Run } from "../domain/records.ts";
import type { RunEvent } from "../domain/run-lifecycle.ts";
import { moveRun, releaseRun } from "../commands/run-transitions.ts";
import { mintRunToken, revokeRunTokens } from "../commands/run-tokens.ts";
import { confirmStatePublication, listPendingStateVersions, publicationOf } from "../commands/state-versions.ts";
import { currentStateEvidence } from "../commands/state-evidence.ts";
import type { Services } from "../commands/services.ts";
import { SANDBOX_BASE_PROFILE, type SandboxResult } from "./sandbox.ts";
import { attemptProvenance } from "./provenance.ts";
import { sensitiveValueSet, ValueMatcher } from "../domain/redaction/index.ts";
import { readPlanJson } from "./plan-json.ts";
import { addWorkloadIdentity } from "./workload-identity-files.ts";
import {
  type ExecutionContext,
  type PhaseOutcome,
  lockForRun,
  materializeInputs,
  readPriorState,
  sandboxFiles,
  readRunConfiguration,
  LIMIT_LOG_LINES,
  limitReason,
  classify,
  runPhaseSandbox,
  RUNNER_SHUTDOWN_CLASSIFICATION,
} from "./execution.ts";
import { PhaseLog } from "./phase-log.ts";
import { runArtifact } from "../commands/run-artifacts.ts";
import { workspaceSecretValues } from "../commands/secret-values.ts";
import { planEvidenceAgrees } from "../commands/plan-evidence-digests.ts";
import { attestAfterDecision } from "../commands/attestations.ts";

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
    (x.policyOutcome === "soft_failed" &&
      x.policyResultDigest !== null &&
      (await services.stores.policyResults.findActiveOverride(run.id, x.policyResultDigest, services.clock())) !==
        undefined);
  const stale =
    !policyHolds ||
    !review ||
    review.decision !== "approved" ||
    review.planDigest !== x.planDigest ||
    review.planJsonDigest !== x.planJsonDigest ||
    review.planDiffDigest !== x.planDiffDigest ||
    !(await planEvidenceAgrees(services.stores, run)) ||
    review.policyResultDigest !== x.policyResultDigest ||
    review.predecessorStateDigest !== (state?.digest ?? null) ||
    review.dependencyBundleDigest !== x.dependencyBundleDigest ||
    fence === null ||
    fence !== x.workspaceLockFence;
  const log = new PhaseLog(services.stores, run.id, "apply", services.clock, [], {
    maxBytes: services.config.phaseLogMaxBytes,
    json: run.structuredRunOutput,
  });
  if (stale) {
    log.write(
      policyHolds
        ? "The approval no longer matches the workspace (its lock, state or evidence changed); nothing was applied.\n"
        : "The policy result no longer allows an apply (the override of its soft failure expired, or the result is not passing); nothing was applied.\n",
    );
    await log.close();
    const failed = await moveRun(services, run.id, { type: "apply_failed" });
    await releaseRun(services, failed ?? run);
    await attestAfterDecision(services, run.id);
    return "done";
  }

  const inputs = await materializeInputs(services, run);
  await addWorkloadIdentity(ctx, run, "apply", inputs);
  // The apply's sensitive values: the snapshot's, the workspace's sensitive variables, the prior
  // state's, everything the plan marks, and (below, once minted) the run's own apply token.
  let secretValues: string[];
  try {
    const [priorState, planJson, workspaceSecrets] = await Promise.all([
      readPriorState(services, state?.stateVersionId),
      readPlanJson(services, run),
      workspaceSecretValues(services, run.workspaceId),
    ]);
    secretValues = sensitiveValueSet({
      variables: [...inputs.secrets, ...workspaceSecrets],
      priorState,
      plan: JSON.parse(planJson.toString("utf8")),
    });
  } catch (error) {
    services.logger.warn({ runId: run.id, err: error }, "the apply's sensitive values could not be determined");
    log.write(
      "StackShip could not read the plan or the workspace's current state, so it cannot tell which values are sensitive; nothing was applied.\n",
    );
    await log.close();
    const failed = await moveRun(services, run.id, { type: "apply_failed" });
    await releaseRun(services, failed ?? run);
    await attestAfterDecision(services, run.id);
    return "done";
  }
  const attempt = await services.stores.attempts.start({
    runId: run.id,
    phase: "apply",
    runnerId: ctx.runnerId,
    region: run.executionRegion,
    baseProfile: SANDBOX_BASE_PROFILE,
    now: services.clock(),
    provenance: attemptProvenance(ctx),
  });
  const started = await moveRun(services, run.id, { type: "apply_started" });
  if (!started) return "done";
  const { secret } = await mintRunToken(services, run, "apply", ctx.phaseTimeoutMs + 60_000);
  // A provisioner may print the token; the log is viewer-readable.
  const sanitizedLog = new PhaseLog(
    services.stores,
    run.id,
    "apply",
    services.clock,
    new ValueMatcher([...secretValues, secret]),
    {
      maxBytes: services.config.phaseLogMaxBytes,
      json: run.structuredRunOutput,
    },
  );
  let result: SandboxResult;
  try {
    const files = (async () => {
      const files = sandboxFiles(await readRunConfiguration(services, run), secret, inputs);
      const plan = await runArtifact(services, run, "plan");
      // The saved plan must be the one the approval bound (its digest is the run's).
      if (!plan || plan.sha256 !== x.planDigest)
        throw new Error(`run ${run.id}: its saved plan is missing or is not the approved one`);
      files["plan.tfplan"] = await services.artifacts.read(plan, run.workspaceId);
      if (x.dependencyLockFile !== null) files["lock.hcl"] = x.dependencyLockFile;
      return files;
    })();
    files.catch(() => {});
    ({ result } = await runPhaseSandbox(ctx, run, attempt, "apply", files, inputs, sanitizedLog, signal, []));
  } catch (error) {
    sanitizedLog.write(`\nStackShip could not start the apply: ${(error as Error).message}\n`);
    await sanitizedLog.close();
    await services.stores.attempts.finish(attempt.id, "failed", "runner_error", services.clock());
    return endApply(services, run, { type: "apply_uncertain", interrupted: false });
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
      await confirmStatePublication(services, publicationOf(run.id, version, fence));
    } catch {
      return endApply(services, run, { type: "apply_uncertain", interrupted: false });
    }
    return endApply(services, run, { type: "apply_finished" });
  }
  // A limit the watcher enforced killed tofu mid-apply, like an interruption; one tofu ran into
  // (a full disk, a file too large) made it fail on its own.
  const killed = result.killed || result.signal !== null;
  const interrupted =
    classification === "interrupted" ||
    classification === RUNNER_SHUTDOWN_CLASSIFICATION ||
    classification === "timeout" ||
    classification === "killed" ||
    (limit !== undefined && killed);
  await services.stores.attempts.finish(attempt.id, interrupted ? "interrupted" : "failed", classification, now);
  if ((classification === "exit_nonzero" || (limit !== undefined && !killed)) && pending.length === 0) {
    // tofu failed and published nothing: no state was written, so nothing changed that StackShip knows of.
    return endApply(services, run, { type: "apply_failed", ...(limit ? { limit } : {}) });
  }
  return endApply(services, run, { type: "apply_uncertain", interrupted, ...(limit ? { limit } : {}) });
}

async function endApply(services: Services, run: Run, event: RunEvent): Promise<PhaseOutcome> {
  const ended = await moveRun(services, run.id, event);
  // needs_recovery keeps the workspace locked until an operator resolves it.
  if (event.type !== "apply_uncertain") await releaseRun(services, ended ?? run);
  else await revokeRunTokens(services, run.id);
  // The apply's outcome (and the state version it published) is attested once the run ended.
  await attestAfterDecision(services, run.id);
  return "done";
}
