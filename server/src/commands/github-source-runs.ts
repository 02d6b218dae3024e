import { createRun } from "./runs.ts";
import { cancelRun } from "./run-decisions.ts";
import { createConfigurationVersion, signUploadToken, uploadConfiguration } from "./configuration-versions.ts";
import { isDomainError } from "../domain/errors.ts";
import type { RunCommit, Workspace } from "../domain/records.ts";
import { GitHubRedirectRefused, GitHubTarballTooLarge } from "../github/client.ts";
import { configurationFromGitHubTarball, TarballRefused } from "../github/tarball.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import type { DeliveryStatus, GitHubDelivery, SourceConnection } from "../store/index.ts";
import { GITHUB_ACTOR_ID } from "./github-webhooks.ts";

// What the handlers of github-deliveries.ts share: the workspaces a delivery reaches, their
// configurations, and the runs (and cancellations) they create on GitHub's behalf.

/** What the configuration may unpack to (as for uploads: 512 MiB). */
const MAX_UNPACKED_BYTES = 512 * 1024 * 1024;

/** How a delivery ended (the job records it on the delivery). */
export interface DeliveryResult {
  status: Exclude<DeliveryStatus, "queued" | "processing">;
  outcome: string;
  detail: string;
  runIds: string[];
}

/** The actor the pipeline's runs and configuration versions are created by. */
function githubActor(organizationId: string): AuthenticatedPrincipal {
  return { kind: "github_app", id: GITHUB_ACTOR_ID, organizationId, tokenId: null, siteAdmin: false, grants: [] };
}

export const done = (
  status: DeliveryResult["status"],
  outcome: string,
  detail: string,
  runIds: string[] = [],
): DeliveryResult => ({ status, outcome, detail, runIds });

export interface Target {
  connection: SourceConnection;
  workspace: Workspace;
}

/**
 * The workspaces a delivery about `repository` through `installationId` may reach, or the
 * refusal: no workspace connects the repository, or none through this installation (or the
 * installation was removed or suspended).
 */
export async function targetsOf(
  services: Services,
  repository: string,
  installationId: number | null,
): Promise<Target[] | DeliveryResult> {
  const connections = await services.stores.github.connectionsOf(repository);
  if (connections.length === 0)
    return done("refused", "repository_not_connected", `No workspace is connected to ${repository}.`);
  const installation =
    installationId === null ? undefined : await services.stores.github.getInstallation(installationId);
  // Only the workspaces of the organization the installation is bound to: an installation never
  // reaches another organization's workspace, whatever its connections say.
  const binding = installationId === null ? undefined : await services.stores.github.getBinding(installationId);
  const through = connections.filter(
    (c) => c.installationId === installationId && binding !== undefined && c.organizationId === binding.organizationId,
  );
  if (installationId === null || through.length === 0 || installation?.deleted || installation?.suspended) {
    return done(
      "refused",
      "installation_unknown",
      `No workspace connects ${repository} through installation ${installationId ?? "(none)"}${installation?.deleted ? " (it was uninstalled)" : installation?.suspended ? " (it is suspended)" : ""}.`,
    );
  }
  if (
    installation &&
    installation.repositorySelection === "selected" &&
    !installation.repositories.includes(repository.toLowerCase())
  ) {
    return done(
      "refused",
      "repository_not_granted",
      `Installation ${installationId} may not read ${repository} (the App's repository access does not include it).`,
    );
  }
  const targets: Target[] = [];
  for (const connection of through) {
    const workspace = await services.stores.workspaces.getById(connection.workspaceId);
    if (workspace) targets.push({ connection, workspace });
  }
  return targets;
}

/** The configuration `.tar.gz` of each target (all checked before anything is written), or a refusal. */
export async function configurations(
  services: Services,
  installationId: number,
  repository: string,
  sha: string,
  targets: readonly Target[],
): Promise<Map<string, Buffer> | DeliveryResult> {
  const github = services.github;
  const settings = services.config.github;
  if (!github || settings.state !== "on") throw new Error("the GitHub App pipeline is off");
  let tarball: Buffer;
  try {
    tarball = await github.tarball(installationId, repository, sha, settings.tarballMaxBytes);
  } catch (error) {
    if (error instanceof GitHubTarballTooLarge)
      return done(
        "refused",
        "tarball_too_large",
        `The tarball of ${sha} is larger than ${settings.tarballMaxBytes} bytes.`,
      );
    if (error instanceof GitHubRedirectRefused)
      return done("refused", "tarball_redirect_refused", `${error.message}; nothing was downloaded.`);
    throw error;
  }
  const out = new Map<string, Buffer>();
  for (const { workspace } of targets) {
    try {
      out.set(
        workspace.id,
        await configurationFromGitHubTarball(tarball, workspace.workingDirectory, {
          maxBytes: settings.tarballMaxBytes,
          maxUnpackedBytes: MAX_UNPACKED_BYTES,
        }),
      );
    } catch (error) {
      if (error instanceof TarballRefused) return done("refused", error.outcome, error.detail);
      throw error;
    }
  }
  return out;
}

/** What the runs of one delivery share. */
interface SourceRunInput {
  kind: "plan_and_apply" | "speculative";
  source: "github_push" | "github_pull_request";
  commit: RunCommit;
  pullRequestNumber: number | null;
  installationId: number;
  baseRepository: string;
}

/**
 * Creates the run of one workspace: a configuration version through the same upload path (and
 * inspection) as an API upload, then the run with its commit recorded, then the check run to
 * keep in step. A retried delivery finds the run it already created and creates nothing.
 */
async function createSourceRun(
  services: Services,
  delivery: GitHubDelivery,
  target: Target,
  configuration: Buffer,
  input: SourceRunInput,
): Promise<string> {
  const existing = await services.stores.runs.runOfDelivery(delivery.id, target.workspace.id);
  if (existing) return existing.id;
  const actor = githubActor(target.workspace.organizationId);
  const configurationVersion = await createConfigurationVersion(services, actor, target.workspace, {
    speculative: input.kind === "speculative",
    source: "github",
  });
  const token = signUploadToken(
    services.keys.uploadUrl,
    configurationVersion.id,
    new Date(services.clock().getTime() + 60_000),
  );
  await uploadConfiguration(services, token, configuration);
  const run = await createRun(services, actor, target.workspace, {
    kind: input.kind,
    message: `GitHub ${input.commit.sha}`,
    configurationVersionId: configurationVersion.id,
    source: input.source,
    commit: input.commit,
    sourceWorkingDirectory: target.workspace.workingDirectory,
    pullRequestNumber: input.pullRequestNumber,
    githubDeliveryId: delivery.id,
  });
  const now = services.clock();
  await services.stores.github.trackCheckRun({
    runId: run.id,
    installationId: input.installationId,
    repository: input.baseRepository,
    headSha: input.commit.sha,
    now,
  });
  await services.stores.audit.record({
    organizationId: run.organizationId,
    actorId: GITHUB_ACTOR_ID,
    action: "github.run_created",
    targetType: "runs",
    targetId: run.id,
    // A fork pull request's record says why it gets less: no cloud credential, no sensitive variable.
    data: {
      delivery_id: delivery.id,
      source: input.source,
      commit_sha: input.commit.sha,
      ref: input.commit.ref,
      repository: input.commit.repository,
      fork: input.commit.fork,
      ...(input.kind === "speculative"
        ? { sensitive_variables: "omitted: speculative runs never receive sensitive variables" }
        : {}),
      ...(input.commit.fork ? { cloud_credentials: "withheld: pull request from a fork" } : {}),
    },
    createdAt: now,
  });
  return run.id;
}

/** Creates the run of each target in turn (createSourceRun); their ids, in target order. */
export async function createSourceRuns(
  services: Services,
  delivery: GitHubDelivery,
  targets: readonly Target[],
  built: Map<string, Buffer>,
  input: SourceRunInput,
): Promise<string[]> {
  const runIds: string[] = [];
  for (const target of targets)
    runIds.push(await createSourceRun(services, delivery, target, built.get(target.workspace.id)!, input));
  return runIds;
}

/** Cancels the pull request's speculative runs that are still queued (pending) in these workspaces. */
export async function cancelQueuedSpeculativeRuns(
  services: Services,
  delivery: GitHubDelivery,
  workspaceIds: readonly string[],
  pullRequestNumber: number,
  reason: string,
): Promise<string[]> {
  const canceled: string[] = [];
  for (const run of await services.stores.runs.queuedPullRequestRuns(workspaceIds, pullRequestNumber, delivery.id)) {
    try {
      await cancelRun(services, githubActor(run.organizationId), run, reason);
      canceled.push(run.id);
    } catch (error) {
      // It started meanwhile: a run already planning is left to finish.
      if (!isDomainError(error, "RUN_TRANSITION_INVALID")) throw error;
    }
  }
  return canceled;
}
