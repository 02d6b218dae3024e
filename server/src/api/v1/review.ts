import { isAllowed } from "../../domain/authorization.ts";
import { REVIEW_OVERRIDE_LIMIT } from "../../domain/policy/index.ts";
import type { Run } from "../../domain/records.ts";
import { failedPhase, holdsAnyDownloadPermission, TERMINAL_LOG_TAIL_LINES } from "../../domain/review.ts";
import { deriveRunReview, type ReviewDocumentInput } from "./review-presenter.ts";
import { commitWebUrl } from "../../domain/github.ts";
import type { Services } from "../../commands/services.ts";
import { principalOf, runTarget } from "../authorize.ts";
import { recoveryEvidence } from "../../commands/recovery.ts";
import { publishedRunArtifacts } from "../../commands/run-artifacts.ts";
import { presentRecovery } from "./presenters.ts";
import { loadRun } from "../lookup.ts";
import type { H } from "./types.ts";

/**
 * Reads every record the review of `run` is derived from. Any store failure propagates (the
 * caller gets an error response, never a review of an empty run); the failed phase's log is read
 * only for a run that ended because its plan or apply failed, and recovery evidence only while
 * the run needs recovery.
 */
async function reviewRecords(services: Services, run: Run): Promise<ReviewDocumentInput> {
  const stores = services.stores;
  const [
    workspace,
    attempts,
    jobs,
    decision,
    evaluation,
    findings,
    overridePage,
    stateVersions,
    artifacts,
    logs,
    attestations,
  ] = await Promise.all([
    stores.workspaces.getById(run.workspaceId),
    stores.attempts.listByRun(run.id),
    stores.jobs.listByRun(run.id),
    stores.reviews.getByRun(run.id),
    stores.policyResults.getEvaluation(run.id),
    stores.policyResults.listFindings(run.id),
    stores.policyResults.listOverrides(run.id, REVIEW_OVERRIDE_LIMIT),
    stores.stateVersions.listByRun(run.id),
    publishedRunArtifacts(services, run),
    stores.logs.positions(run.id),
    stores.attestations.forRun(run.id),
  ]);
  const phase = failedPhase(run);
  const actors = [decision?.actorId ?? null, ...overridePage.overrides.map((o) => o.actorId)].filter(
    (id): id is string => id !== null,
  );
  const [displayNames, tail, recovery] = await Promise.all([
    stores.users.displayNames(actors),
    phase === null ? Promise.resolve(null) : stores.logs.tail(run.id, phase, TERMINAL_LOG_TAIL_LINES),
    run.status === "needs_recovery" ? recoveryEvidence(services, run) : Promise.resolve(null),
  ]);
  return {
    run,
    workspace: workspace
      ? { id: workspace.id, name: workspace.name, workingDirectory: workspace.workingDirectory }
      : null,
    // Recorded by the source that created the run (the GitHub pipeline); not recorded for API and CLI runs.
    commit: run.commit
      ? {
          sha: run.commit.sha,
          ref: run.commit.ref,
          message: run.commit.message,
          author: run.commit.author,
          url: commitWebUrl(services.config.github.apiUrl, run.commit.repository, run.commit.sha),
        }
      : null,
    attempts: [...attempts].sort((a, b) =>
      a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : a.attemptNumber - b.attemptNumber,
    ),
    jobs,
    decision: decision ?? null,
    evaluation: evaluation ?? null,
    findings,
    overrides: overridePage.overrides,
    overridesTruncated: overridePage.truncated,
    artifacts,
    stateVersions: stateVersions.map((v) => ({
      id: v.id,
      serial: v.serial,
      sha256: v.sha256,
      status: v.status,
      publishedAt: v.publishedAt,
      uploaded: v.artifactKey !== null && v.sha256 !== null && v.sizeBytes !== null,
    })),
    displayNames,
    logTail: phase === null || tail === null ? null : { phase, lines: tail },
    recovery: recovery && presentRecovery(recovery),
    // A log within its cap is at most the cap; a cut one is the cap plus the truncation line.
    attestations,
    truncatedLogs: (["plan", "policy", "apply"] as const).filter(
      (p) => logs[p].byteLength > services.config.phaseLogMaxBytes,
    ),
  };
}

/** The run review document. */
export const reviewHandlers = {
  async getRunReview({ path, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:read");
    const principal = principalOf(ctx);
    const target = runTarget(run);
    const records = await reviewRecords(ctx.services, run);
    const review = deriveRunReview(
      records,
      {
        may: (permission) => isAllowed(principal, permission, target),
        mayDownloadSomewhere: holdsAnyDownloadPermission(principal),
      },
      ctx.services.clock(),
    );
    return { status: 200, body: { data: review }, headers: { "Cache-Control": "private, no-store" } };
  },
} satisfies Partial<H>;
