// Shared by the GitHub source suites (github-source, github-push-runs and github-pull-requests tests): the
// servers' GitHub settings against a local API double, and small readers of what the API shows.
import * as assert from "uvu/assert";
import type { AuditEventRow } from "../../src/store/rows.ts";
import { jsonOf, type V1 } from "./documents.ts";
import type { GitHubDouble } from "./github-double.ts";
import type { TestServer } from "./test-server.ts";

/** The tarball limit of these servers: small, so that both sides of it are cheap to test. */
export const TARBALL_LIMIT = 64 * 1024;
export const MAIN_TF = 'resource "terraform_data" "greeting" {\n  input = "hello"\n}\n';
export const PIPELINE_TABLES = [
  "runs",
  "configuration_versions",
  "input_snapshots",
  "snapshot_secrets",
  "run_jobs",
  "github_check_runs",
] as const;

/** Test-server options that point the GitHub App pipeline at `double`. */
export function githubServerOptions(double: GitHubDouble) {
  return { config: { github: double.config(TARBALL_LIMIT) }, githubWorker: { backoffBaseMs: 100 } } as const;
}

/** GET /v1/workspaces/{id}/source: its status and its source connection document. */
export function sourceOf(
  server: TestServer,
  workspaceId: string,
  token: string,
): Promise<{ status: number; body: V1["SourceConnectionDocument"] }> {
  return fetch(`${server.baseUrl}/v1/workspaces/${workspaceId}/source`, {
    headers: { Authorization: `Bearer ${token}` },
  }).then(async (r) => ({
    status: r.status,
    body: await jsonOf<V1["SourceConnectionDocument"]>(r),
  }));
}

/** The audit events about `targetId`, oldest first. */
export async function auditOf(server: TestServer, targetId: string): Promise<AuditEventRow[]> {
  return server.db
    .knex<AuditEventRow>("audit_events")
    .where({ target_id: targetId })
    .orderBy([{ column: "created_at" }, { column: "id" }]);
}

/** GET /v1/runs/{id} (200 asserted): the run resource. */
export async function runOf(server: TestServer, token: string, runId: string): Promise<V1["Run"]> {
  const response = await fetch(`${server.baseUrl}/v1/runs/${runId}`, { headers: { Authorization: `Bearer ${token}` } });
  assert.is(response.status, 200);
  return (await jsonOf<V1["RunDocument"]>(response)).data;
}
