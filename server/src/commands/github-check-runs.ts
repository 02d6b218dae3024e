import { checkRunOutput, checkRunStateKey, checkRunStateOf } from "../domain/github.ts";
import type { CheckRunBody } from "../github/client.ts";
import type { Services } from "./services.ts";
import type { GitHubCheckRun } from "../store/index.ts";
import { GITHUB_ACTOR_ID } from "./github-webhooks.ts";

/** How long one sync holds a check run (longer than a GitHub call may take). */
const LEASE_MS = 60_000;
/** The longest wait between two tries of a check run update. */
const MAX_BACKOFF_MS = 5 * 60_000;

/** The run page a check run links to. */
export function runPageUrl(services: Services, runId: string): string {
  const base =
    services.config.publicUrl ??
    `http://${services.config.host === "0.0.0.0" ? "localhost" : services.config.host}:${services.config.httpPort}`;
  return `${base}/runs/${runId}`;
}

/**
 * Brings one check run on GitHub in step with its run: created on the first call, updated
 * afterwards (queued → in_progress → completed with its conclusion), with the plan counts and the
 * policy outcome in its summary. A failed call is retried with exponential backoff (the first
 * failure of a streak is audited); nothing here ever changes or waits for the run itself.
 */
export async function syncCheckRun(services: Services, check: GitHubCheckRun): Promise<void> {
  const github = services.github;
  if (!github) return;
  const run = await services.stores.runs.getById(check.runId);
  if (!run) return;
  const state = checkRunStateOf(run);
  const key = checkRunStateKey(state);
  if (
    !(await services.stores.github.leaseCheckRun(
      run.id,
      check.nextAttemptAt,
      new Date(services.clock().getTime() + LEASE_MS),
    ))
  )
    return;
  try {
    if (check.sentState === key && check.checkRunId !== null) {
      await services.stores.github.checkRunSent(run.id, {
        checkRunId: check.checkRunId,
        sentState: key,
        runUpdatedAt: run.updatedAt,
        now: services.clock(),
      });
      return;
    }
    const workspace = await services.stores.workspaces.getById(run.workspaceId);
    const output = checkRunOutput(run);
    const body: CheckRunBody = {
      name: `StackShip: ${workspace?.name ?? run.workspaceId}${run.kind === "speculative" ? " (speculative plan)" : ""}`,
      head_sha: check.headSha,
      status: state.status,
      details_url: runPageUrl(services, run.id),
      external_id: run.id,
      output,
      ...(state.status === "completed"
        ? { conclusion: state.conclusion, completed_at: run.execution.finishedAt ?? run.updatedAt }
        : {}),
    };
    let checkRunId = check.checkRunId;
    if (checkRunId === null) checkRunId = await github.createCheckRun(check.installationId, check.repository, body);
    else
      await github.updateCheckRun(check.installationId, check.repository, checkRunId, {
        ...body,
        name: undefined,
        head_sha: undefined,
      });
    await services.stores.github.checkRunSent(run.id, {
      checkRunId,
      sentState: key,
      runUpdatedAt: run.updatedAt,
      now: services.clock(),
    });
  } catch (error) {
    const now = services.clock();
    const wait = Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** Math.min(check.attempts, 16));
    const message = error instanceof Error ? error.message : String(error);
    await services.stores.github.checkRunFailed(run.id, {
      error: message,
      nextAttemptAt: new Date(now.getTime() + wait),
      now,
    });
    if (check.attempts === 0) {
      await services.stores.audit.record({
        organizationId: run.organizationId,
        actorId: GITHUB_ACTOR_ID,
        action: "github.check_run.failed",
        targetType: "runs",
        targetId: run.id,
        reason: message.slice(0, 500),
        data: { wanted: key, retry_in_ms: wait },
        createdAt: now,
      });
    }
    services.logger.warn(
      { run_id: run.id, err: message, attempts: check.attempts + 1 },
      "check run update failed; retrying later",
    );
  }
}
