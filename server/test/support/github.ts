import { randomBytes, randomUUID } from "node:crypto";
import * as assert from "uvu/assert";
import { buildTarGz } from "../../src/github/tarball.ts";
import type { DeliveryRow } from "../../src/store/github-records.ts";
import type { V1 } from "./documents.ts";
import { createOrganizationWithToken, createWorkspace } from "./factories.ts";
import { webhookExample, type GitHubDouble, type WebhookExample } from "./github-double.ts";
import type { TestServer } from "./test-server.ts";

/** A fresh 40-hex commit SHA. */
export const newSha = () => randomBytes(20).toString("hex");

let installationCounter = 900_000;
/** A fresh installation id (the double is shared by a suite's servers). */
export const newInstallationId = () => ++installationCounter;

/** A fresh `owner/name`. */
export const newRepository = () => `acme-${randomBytes(3).toString("hex")}/infra-${randomBytes(3).toString("hex")}`;

/** A GitHub-style commit tarball: every file under `<owner>-<name>-<sha7>/`. */
export function commitTarball(repository: string, sha: string, files: Record<string, string>): Promise<Buffer> {
  const top = `${repository.replace("/", "-")}-${sha.slice(0, 7)}`;
  const dirs = new Set<string>([`${top}/`]);
  for (const path of Object.keys(files)) {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) dirs.add(`${top}/${parts.slice(0, i).join("/")}/`);
  }
  return buildTarGz(
    [
      ...[...dirs].sort().map((name) => ({ name, type: "directory" as const })),
      ...Object.entries(files).map(([path, content]) => ({ name: `${top}/${path}`, content })),
    ],
    sha,
  );
}

/** A connected workspace: organization, token, workspace, and its source connection. */
export interface Connected {
  organizationName: string;
  token: string;
  workspaceId: string;
  repository: string;
  installationId: number;
}

/**
 * Makes `installationId` an installation the double knows with `repositories`, and binds it to the
 * organization as a deployment administrator does (POST /v1/github/installations naming the
 * organization; StackShip confirms the installation with the double first).
 */
export async function bindInstallation(
  server: TestServer,
  double: GitHubDouble,
  organizationName: string,
  installationId: number,
  repositories: string[],
): Promise<void> {
  double.installations.set(installationId, [
    ...new Set([...(double.installations.get(installationId) ?? []), ...repositories]),
  ]);
  const response = await fetch(`${server.baseUrl}/v1/github/installations`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.bootstrapToken}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({
      data: {
        type: "github-installations",
        attributes: { installation_id: installationId, organization: organizationName },
      },
    }),
  });
  assert.ok(response.status === 201 || response.status === 200, await response.clone().text());
}

/**
 * Creates an organization and a workspace and connects it (PUT /v1/workspaces/{id}/source) with
 * the organization's admin token, after binding the installation to the organization
 * (bindInstallation) and letting it see the repository on the double.
 */
export async function connectWorkspace(
  server: TestServer,
  double: GitHubDouble,
  options: {
    repository?: string;
    installationId?: number;
    trackedBranch?: string;
    workingDirectory?: string;
    triggerPaths?: string[];
    organization?: { organizationName: string; token: string };
  } = {},
): Promise<Connected> {
  const { organizationName, token } =
    options.organization ??
    (await createOrganizationWithToken(server, `gh-${randomBytes(4).toString("hex")}`, "admin"));
  const workspace = await createWorkspace(server, token, organizationName);
  const repository = options.repository ?? newRepository();
  const installationId = options.installationId ?? newInstallationId();
  await bindInstallation(server, double, organizationName, installationId, [repository]);
  const response = await fetch(`${server.baseUrl}/v1/workspaces/${workspace.id}/source`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({
      data: {
        type: "source-connections",
        attributes: {
          installation_id: installationId,
          repository,
          tracked_branch: options.trackedBranch ?? "main",
          working_directory: options.workingDirectory ?? "",
          ...(options.triggerPaths ? { trigger_paths: options.triggerPaths } : {}),
        },
      },
    }),
  });
  assert.is(response.status, 200, await response.clone().text());
  return { organizationName, token, workspaceId: workspace.id, repository, installationId };
}

/** A `push` webhook payload (@octokit/webhooks-types' PushEvent). */
export type PushPayload = WebhookExample<"push">;
/** A `pull_request` webhook payload (@octokit/webhooks-types' PullRequestEvent). */
export type PullRequestPayload = WebhookExample<"pull_request">;

/** A push payload (from @octokit/webhooks-examples) to `branch` of `repository` at `sha`. */
export function pushPayload(
  repository: string,
  installationId: number,
  sha: string,
  options: { branch?: string; changed?: string[]; message?: string } = {},
): PushPayload {
  const payload = webhookExample("push", (p) => p.ref === "refs/heads/master" && p.installation);
  const [owner, name] = repository.split("/");
  payload.ref = `refs/heads/${options.branch ?? "main"}`;
  payload.before = newSha();
  payload.after = sha;
  payload.created = false;
  payload.forced = false;
  payload.deleted = false;
  payload.repository.full_name = repository;
  payload.repository.name = name;
  payload.repository.owner.login = owner;
  payload.installation = { id: installationId, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==" };
  // The example picked has a head commit: its other fields stay as they are.
  if (!payload.head_commit) throw new Error("the push example has no head_commit");
  const headCommit = {
    ...payload.head_commit,
    id: sha,
    message: options.message ?? "Add the greeting",
    author: { name: "Octo Cat", email: "octocat@example.com", username: "octocat" },
  };
  payload.head_commit = headCommit;
  payload.commits = [{ ...headCommit, added: options.changed ?? ["main.tf"], removed: [], modified: [] }];
  return payload;
}

/** A pull_request payload (from @octokit/webhooks-examples). */
export function pullRequestPayload(
  repository: string,
  installationId: number,
  action: "opened" | "synchronize" | "reopened" | "closed",
  options: { number: number; headSha: string; base?: string; headRepository?: string },
): PullRequestPayload {
  const payload = webhookExample(
    "pull_request",
    (p) =>
      p.action === (action === "synchronize" ? "synchronize" : action === "closed" ? "closed" : "opened") &&
      p.installation,
  );
  const [owner, name] = repository.split("/");
  payload.action = action;
  payload.number = options.number;
  payload.installation = { id: installationId, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==" };
  payload.repository.full_name = repository;
  payload.repository.name = name;
  payload.repository.owner.login = owner;
  const pr = payload.pull_request;
  pr.number = options.number;
  pr.title = `Change #${options.number}`;
  pr.head.sha = options.headSha;
  pr.head.ref = `feature-${options.number}`;
  // The examples picked have a head repository (GitHub sends null only once a fork is deleted).
  if (!pr.head.repo) throw new Error("the pull_request example has no head repository");
  pr.head.repo = { ...pr.head.repo, full_name: options.headRepository ?? repository };
  pr.base.ref = options.base ?? "main";
  pr.base.repo = { ...pr.base.repo, full_name: repository };
  return payload;
}

/** A workspace connected to a repository that its installation can see. */
export async function connectedRepository(
  server: TestServer,
  double: GitHubDouble,
  options?: Parameters<typeof connectWorkspace>[2],
) {
  const connected = await connectWorkspace(server, double, options);
  double.installations.set(connected.installationId, [connected.repository]);
  return connected;
}

/** A new commit SHA of `repository` whose tarball the double serves with `files`. */
export async function newCommit(double: GitHubDouble, repository: string, files: Record<string, string>) {
  const sha = newSha();
  double.setTarball(repository, sha, await commitTarball(repository, sha, files));
  return sha;
}

/** A pull_request event about the connected repository, delivered and then settled. */
export async function pullRequestSettled(
  server: TestServer,
  double: GitHubDouble,
  connected: { repository: string; installationId: number },
  action: Parameters<typeof pullRequestPayload>[2],
  pull: Parameters<typeof pullRequestPayload>[3],
) {
  const payload = pullRequestPayload(connected.repository, connected.installationId, action, pull);
  return settled(server, (await deliver(server, double, "pull_request", payload)).deliveryId);
}

/**
 * POSTs a delivery signed with the double's secret (or the given signature; null: none). `body` is
 * the answer's JSON as the shape `T` the caller expects: the delivery document by default (202,
 * 200 for a redelivery; null for an empty answer); read a refusal's error document with
 * firstError (documents.ts).
 */
export async function deliver<T = V1["GitHubDeliveryDocument"]>(
  server: TestServer,
  double: GitHubDouble,
  event: string,
  payload: unknown,
  options: { deliveryId?: string; signature?: string | null; raw?: string } = {},
): Promise<{ response: Response; deliveryId: string; body: T }> {
  const deliveryId = options.deliveryId ?? randomUUID();
  const raw = options.raw ?? JSON.stringify(payload);
  const signature = options.signature === undefined ? await double.sign(raw) : options.signature;
  const response = await fetch(`${server.baseUrl}/v1/github/webhooks`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-GitHub-Event": event,
      "X-GitHub-Delivery": deliveryId,
      ...(signature === null ? {} : { "X-Hub-Signature-256": signature }),
    },
    body: raw,
  });
  const text = await response.text();
  return { response, deliveryId, body: (text ? JSON.parse(text) : null) as T };
}

/** Waits until the delivery's job has ended (processed, ignored, refused, failed). */
export async function settled(
  server: TestServer,
  deliveryId: string,
  timeoutMs = 30_000,
): Promise<{ status: string; outcome: string | null; detail: string | null; run_ids: string[]; attempts: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await server.db.knex<DeliveryRow>("github_deliveries").where({ id: deliveryId }).first();
    if (row && !["queued", "processing"].includes(row.status))
      return {
        status: row.status,
        outcome: row.outcome,
        detail: row.detail,
        run_ids: JSON.parse(row.run_ids) as string[],
        attempts: Number(row.attempts),
      };
    if (Date.now() > deadline) throw new Error(`delivery ${deliveryId} did not settle: ${JSON.stringify(row)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until `check` holds. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
