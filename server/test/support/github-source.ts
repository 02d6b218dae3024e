// Shared by the GitHub source suites (github-source, github-push-runs and github-pull-requests tests): the
// servers' GitHub settings against a local API double, and small readers of what the API shows.
import * as assert from "uvu/assert";
import type { GitHubDouble } from "./github-double.ts";
import type { TestServer } from "./test-server.ts";

/** The tarball limit of these servers: small, so that both sides of it are cheap to test. */
export const TARBALL_LIMIT = 64 * 1024;
export const MAIN_TF = 'resource "terraform_data" "greeting" {\n  input = "hello"\n}\n';
export const PIPELINE_TABLES = ["runs", "configuration_versions", "input_snapshots", "snapshot_secrets", "run_jobs", "github_check_runs"] as const;

/** Test-server options that point the GitHub App pipeline at `double`. */
export function githubServerOptions(double: GitHubDouble) {
  return { config: { github: double.config(TARBALL_LIMIT) }, githubWorker: { backoffBaseMs: 100 } } as const;
}

export function sourceOf(server: TestServer, workspaceId: string, token: string) {
  return fetch(`${server.baseUrl}/v1/workspaces/${workspaceId}/source`, { headers: { Authorization: `Bearer ${token}` } }).then(async (r) => ({
    status: r.status,
    body: await r.json(),
  }));
}

export async function auditOf(server: TestServer, targetId: string) {
  return server.db
    .knex("audit_events")
    .where({ target_id: targetId })
    .orderBy([{ column: "created_at" }, { column: "id" }]);
}

export async function runOf(server: TestServer, token: string, runId: string) {
  const response = await fetch(`${server.baseUrl}/v1/runs/${runId}`, { headers: { Authorization: `Bearer ${token}` } });
  assert.is(response.status, 200);
  return (await response.json()).data;
}
