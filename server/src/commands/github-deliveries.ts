import { branchOfRef, changedPathsOfPush, isForkPullRequest, pushConcernsWorkspace } from "../domain/github.ts";
import { isDomainError } from "../domain/errors.ts";
import type { RunCommit } from "../domain/records.ts";
import { GitHubApiError, GitHubRedirectRefused } from "../github/client.ts";
import { TarballRefused } from "../github/tarball.ts";
import type { Services } from "./services.ts";
import type { GitHubDelivery } from "../store/index.ts";
import { GITHUB_ACTOR_ID } from "./github-webhooks.ts";
import {
  cancelQueuedSpeculativeRuns,
  configurations,
  createSourceRuns,
  done,
  targetsOf,
  type DeliveryResult,
  type Target,
} from "./github-source-runs.ts";

export type { DeliveryResult } from "./github-source-runs.ts";

/** A failure worth another try later (GitHub unreachable or answering 5xx / 429). */
export function isRetryable(error: unknown): boolean {
  if (error instanceof GitHubApiError) return error.status === 0 || error.status === 429 || error.status >= 500;
  return !isDomainError(error) && !(error instanceof TarballRefused) && !(error instanceof GitHubRedirectRefused);
}

interface PushPayload {
  ref: string;
  after: string;
  deleted?: boolean;
  created?: boolean;
  forced?: boolean;
  repository: { full_name: string; pushed_at?: number | string | null };
  installation?: { id: number };
  head_commit?: { id: string; message?: string; author?: { name?: string; username?: string } } | null;
  commits?: Array<{ added?: string[]; removed?: string[]; modified?: string[] }>;
}

async function handlePush(services: Services, delivery: GitHubDelivery, payload: PushPayload): Promise<DeliveryResult> {
  const repository = payload.repository.full_name;
  const branch = branchOfRef(payload.ref);
  const found = await targetsOf(services, repository, payload.installation?.id ?? null);
  if (!Array.isArray(found)) return found;
  if (payload.deleted || !branch)
    return done(
      "ignored",
      "ref_not_a_branch_push",
      `The push ${payload.deleted ? "deleted" : "is not to a branch:"} ${payload.ref}.`,
    );
  const tracking = found.filter((t) => t.workspace.trackedBranch === branch);
  if (tracking.length === 0)
    return done(
      "ignored",
      "branch_not_tracked",
      `No workspace connected to ${repository} tracks the branch ${branch}.`,
    );
  const changed = changedPathsOfPush(payload);
  const concerned = tracking.filter((t) =>
    pushConcernsWorkspace(changed, t.workspace.workingDirectory, t.connection.triggerPaths),
  );
  if (concerned.length === 0)
    return done(
      "ignored",
      "no_relevant_changes",
      `The push to ${branch} changes nothing under the working directory or trigger paths of the workspaces tracking it.`,
    );
  const sha = payload.after;
  const pushedAt = pushTimeOf(payload);
  const fresh = await unreplayedPushTargets(services, delivery, concerned, payload, pushedAt);
  if (!Array.isArray(fresh)) return fresh;
  if (fresh.length === 0)
    return done(
      "ignored",
      "replayed",
      `${sha.slice(0, 12)} on ${branch} already created its run${concerned.length === 1 ? "" : "s"}; a replayed push creates nothing.`,
    );
  const built = await configurations(services, payload.installation!.id, repository, sha, fresh);
  if (!(built instanceof Map)) return built;
  const head = payload.head_commit;
  const commit: RunCommit = {
    sha,
    message: head?.message ?? null,
    author: head?.author?.username ?? head?.author?.name ?? null,
    ref: payload.ref,
    repository,
    fork: false,
  };
  const runIds = await createSourceRuns(services, delivery, fresh, built, {
    kind: "plan_and_apply",
    source: "github_push",
    commit,
    pullRequestNumber: null,
    installationId: payload.installation!.id,
    baseRepository: repository,
  });
  if (pushedAt !== null)
    for (const target of fresh)
      await services.stores.github.recordPushHead({
        workspaceId: target.workspace.id,
        ref: payload.ref,
        pushedAt,
        headSha: sha,
        now: services.clock(),
      });
  return done(
    "processed",
    "run_created",
    `${runIds.length} plan_and_apply run${runIds.length === 1 ? "" : "s"} for ${sha.slice(0, 12)} on ${branch}.`,
    runIds,
  );
}

/** GitHub's `repository.pushed_at` of a push (seconds since the epoch, signed with the body); null when absent. */
function pushTimeOf(payload: PushPayload): number | null {
  const at = payload.repository.pushed_at;
  if (typeof at === "number" && Number.isFinite(at)) return Math.floor(at);
  if (typeof at === "string" && at !== "") {
    const parsed = Date.parse(at);
    if (Number.isFinite(parsed)) return Math.floor(parsed / 1000);
  }
  return null;
}

/**
 * Replay protection for pushes, on what GitHub signs (the body), not the delivery id: a
 * workspace whose run for this ref and head SHA exists is left out (a re-sent body), and a push
 * older than the newest one recorded for the workspace and ref (`repository.pushed_at`) is
 * refused outright, so a captured body re-sent later never runs an old commit.
 */
async function unreplayedPushTargets(
  services: Services,
  delivery: GitHubDelivery,
  targets: readonly Target[],
  payload: PushPayload,
  pushedAt: number | null,
): Promise<Target[] | DeliveryResult> {
  const fresh: Target[] = [];
  for (const target of targets) {
    if (
      await services.stores.github.sourceRunExists(
        target.workspace.id,
        { ref: payload.ref, sha: payload.after },
        delivery.id,
      )
    )
      continue;
    const head =
      pushedAt === null ? undefined : await services.stores.github.pushHead(target.workspace.id, payload.ref);
    if (head && pushedAt !== null && pushedAt < head.pushedAt)
      return done(
        "refused",
        "push_outdated",
        `The push of ${payload.after.slice(0, 12)} to ${payload.ref} (pushed at ${new Date(pushedAt * 1000).toISOString()}) is older than ${head.headSha.slice(0, 12)}, the newest push this workspace ran (${new Date(head.pushedAt * 1000).toISOString()}).`,
      );
    fresh.push(target);
  }
  return fresh;
}

interface PullRequestPayload {
  action: string;
  number: number;
  repository: { full_name: string };
  installation?: { id: number };
  pull_request: {
    number: number;
    title?: string;
    user?: { login?: string } | null;
    head: { sha: string; ref: string; repo: { full_name: string } | null };
    base: { ref: string; repo: { full_name: string } };
  };
}

async function handlePullRequest(
  services: Services,
  delivery: GitHubDelivery,
  payload: PullRequestPayload,
): Promise<DeliveryResult> {
  const repository = payload.repository.full_name;
  const pr = payload.pull_request;
  const found = await targetsOf(services, repository, payload.installation?.id ?? null);
  if (!Array.isArray(found)) return found;
  const tracking = found.filter((t) => t.workspace.trackedBranch === pr.base.ref);
  if (tracking.length === 0)
    return done(
      "ignored",
      "branch_not_tracked",
      `Pull request #${pr.number} targets ${pr.base.ref}, which no workspace connected to ${repository} tracks.`,
    );
  const workspaceIds = tracking.map((t) => t.workspace.id);
  if (payload.action === "closed") {
    const canceled = await cancelQueuedSpeculativeRuns(
      services,
      delivery,
      workspaceIds,
      pr.number,
      `Pull request #${pr.number} was closed.`,
    );
    return done(
      "processed",
      "pull_request_closed",
      `Pull request #${pr.number} closed; ${canceled.length} queued speculative run${canceled.length === 1 ? "" : "s"} canceled.`,
      canceled,
    );
  }
  // Replay protection on what is signed: a pull request's head SHA runs once per workspace.
  const fresh: Target[] = [];
  for (const target of tracking)
    if (
      !(await services.stores.github.sourceRunExists(
        target.workspace.id,
        { pullRequestNumber: pr.number, sha: pr.head.sha },
        delivery.id,
      ))
    )
      fresh.push(target);
  if (fresh.length === 0)
    return done(
      "ignored",
      "replayed",
      `Pull request #${pr.number} at ${pr.head.sha.slice(0, 12)} already created its run${tracking.length === 1 ? "" : "s"}; a replayed delivery creates nothing.`,
    );
  const built = await configurations(services, payload.installation!.id, repository, pr.head.sha, fresh);
  if (!(built instanceof Map)) return built;
  const fork = isForkPullRequest(pr);
  const commit: RunCommit = {
    sha: pr.head.sha,
    message: pr.title ?? null,
    author: pr.user?.login ?? null,
    ref: `refs/pull/${pr.number}/head`,
    repository: pr.head.repo?.full_name ?? repository,
    fork,
  };
  // The older speculative runs of this pull request that have not started yet are superseded.
  await cancelQueuedSpeculativeRuns(
    services,
    delivery,
    fresh.map((t) => t.workspace.id),
    pr.number,
    `Superseded by ${pr.head.sha.slice(0, 12)}, a newer push to pull request #${pr.number}.`,
  );
  const runIds = await createSourceRuns(services, delivery, fresh, built, {
    kind: "speculative",
    source: "github_pull_request",
    commit,
    pullRequestNumber: pr.number,
    installationId: payload.installation!.id,
    baseRepository: repository,
  });
  return done(
    "processed",
    "run_created",
    `${runIds.length} speculative run${runIds.length === 1 ? "" : "s"} for pull request #${pr.number} at ${pr.head.sha.slice(0, 12)}${fork ? " (from a fork: no cloud credential, no sensitive variable)" : ""}.`,
    runIds,
  );
}

interface InstallationPayload {
  action: string;
  installation: {
    id: number;
    account?: { login?: string } | null;
    repository_selection?: string;
    suspended_at?: string | null;
  };
  repositories?: Array<{ full_name: string }>;
  repositories_added?: Array<{ full_name: string }>;
  repositories_removed?: Array<{ full_name: string }>;
  repository_selection?: string;
}

async function handleInstallation(
  services: Services,
  delivery: GitHubDelivery,
  payload: InstallationPayload,
): Promise<DeliveryResult> {
  const i = payload.installation;
  const now = services.clock();
  const selection = (payload.repository_selection ?? i.repository_selection) === "all" ? "all" : "selected";
  if (delivery.event === "installation_repositories") {
    if (!(await services.stores.github.getInstallation(i.id))) {
      await services.stores.github.putInstallation({
        id: i.id,
        account: i.account?.login ?? null,
        repositorySelection: selection,
        suspended: false,
        deleted: false,
        repositories: [],
        now,
      });
    }
    const added = (payload.repositories_added ?? []).map((r) => r.full_name);
    const removed = (payload.repositories_removed ?? []).map((r) => r.full_name);
    await services.stores.github.changeInstallationRepositories({
      id: i.id,
      added,
      removed,
      repositorySelection: selection,
      now,
    });
    return done(
      "processed",
      "installation_repositories_changed",
      `Installation ${i.id}: ${added.length} repositor${added.length === 1 ? "y" : "ies"} added, ${removed.length} removed.`,
    );
  }
  await services.stores.github.putInstallation({
    id: i.id,
    account: i.account?.login ?? null,
    repositorySelection: selection,
    suspended: payload.action === "suspend" || (payload.action !== "unsuspend" && Boolean(i.suspended_at)),
    deleted: payload.action === "deleted",
    repositories: payload.repositories?.map((r) => r.full_name),
    now,
  });
  return done(
    "processed",
    `installation_${payload.action}`,
    `Installation ${i.id} (${i.account?.login ?? "unknown account"}): ${payload.action}.`,
  );
}

/**
 * Acts on one verified delivery (the delivery job's body). Refusals and ignored deliveries are
 * results; a failure worth retrying (GitHub unreachable) throws.
 */
export async function processDelivery(services: Services, delivery: GitHubDelivery): Promise<DeliveryResult> {
  const payload = JSON.parse(delivery.payload) as Record<string, unknown>;
  switch (delivery.event) {
    case "push":
      return handlePush(services, delivery, payload as unknown as PushPayload);
    case "pull_request":
      return handlePullRequest(services, delivery, payload as unknown as PullRequestPayload);
    case "installation":
    case "installation_repositories":
      return handleInstallation(services, delivery, payload as unknown as InstallationPayload);
    default:
      return done("ignored", "event_not_handled", `StackShip does not act on ${delivery.event}.`);
  }
}

/** Records how a delivery ended, with its audit event (refusals and ignored deliveries included). */
export async function finishDelivery(
  services: Services,
  delivery: GitHubDelivery,
  result: DeliveryResult,
): Promise<void> {
  const now = services.clock();
  await services.stores.github.finishDelivery(delivery.id, { ...result, now });
  await services.stores.audit.record({
    organizationId: null,
    actorId: GITHUB_ACTOR_ID,
    action: `github.delivery.${result.status}`,
    targetType: "github-deliveries",
    targetId: delivery.id,
    reason: result.outcome,
    data: {
      event: delivery.event,
      action: delivery.action,
      repository: delivery.repository,
      detail: result.detail,
      run_ids: result.runIds,
      attempts: delivery.attempts,
    },
    createdAt: now,
  });
}
