// Shared by the plan JSON tests (tfe-json-output*.test.ts): plan JSON documents stored as the runner
// stores them, the download and its checks, and a run planned for real.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import * as assert from "uvu/assert";
import { phaseId } from "../../src/api/tfe/presenters.ts";
import { storePlanJson } from "../../src/runner/plan-json.ts";
import { createOrganizationWithToken, createToken, createWorkspace } from "./factories.ts";
import { startRun, waitForPlanned } from "./runs.ts";
import { testEachServer as testEachServerOn, type TestServer, type TestServerOptions } from "./test-server.ts";
import type { Tfe } from "./documents.ts";

export /** A stored frame: 64 KiB of plan JSON and its 16-byte tag. */
const FRAME = 64 * 1024 + 16;

// These cases tamper with the objects' files and watch the read worker, so artifacts stay in a
// local directory on both databases (the PostgreSQL backend is covered by backends.test.ts).
export const testEachServer = (
  test: Parameters<typeof testEachServerOn>[0],
  title: string,
  fn: (server: TestServer) => Promise<void>,
  options: TestServerOptions = {},
) => testEachServerOn(test, title, fn, { ...options, localArtifacts: true });

/** A plan-JSON-shaped document of about `bytes` bytes. */
export function planJsonOf(bytes: number): Buffer {
  const changes: string[] = [];
  let size = 0;
  // Written as JSON.stringify would write each change, with random inputs cut from one pool: fast
  // (about a quarter of the time), since the test's server waits on the same event loop meanwhile.
  let pool = "";
  let at = 0;
  for (let i = 0; size < bytes; i++) {
    if (at + 96 > pool.length) [pool, at] = [randomBytes(48 * 4096).toString("hex"), 0];
    const input = pool.slice(at, (at += 96));
    const change = `{"address":"terraform_data.r${i}","mode":"managed","type":"terraform_data","name":"r${i}","change":{"actions":["create"],"before":null,"after":{"input":"${input}","n":${i}}}}`;
    changes.push(change);
    size += change.length + 1;
  }
  return Buffer.from(
    `{"format_version":"1.2","terraform_version":"1.9.0","resource_changes":[${changes.join(",")}],"errored":false}`,
  );
}

/**
 * `token` reads the plan JSON: it holds artifact:read_sensitive (an admin token; the plan JSON is
 * the raw plan in another encoding). `viewer` and `operator` hold run:read without it.
 */
export async function setUp(server: TestServer) {
  const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
  const { token: admin } = await createToken(server, server.bootstrapToken, organizationName, "admin");
  const { token: viewer } = await createToken(server, server.bootstrapToken, organizationName, "viewer");
  const { token: operator } = await createToken(server, server.bootstrapToken, organizationName, "operator");
  const workspace = await createWorkspace(server, admin, organizationName, { name: "app" });
  return { organizationName, token, admin, viewer, operator, workspace };
}

/** A run (left pending: no runner) whose plan JSON is stored exactly as the runner stores it. */
export async function runWithPlanJson(
  server: TestServer,
  admin: string,
  workspaceId: string,
  planJson: Uint8Array | AsyncIterable<Uint8Array>,
) {
  const created = await startRun(server, admin, workspaceId, { "main.tf": "\n" }, "speculative");
  const run = (await server.services.stores.runs.getById(created.id))!;
  const stored = await storePlanJson(server.services, run, planJson);
  // Published once the plan finished (commands/run-artifacts.ts).
  await server.services.stores.runs.update(run.id, run.status, { planStatus: "finished", updatedAt: new Date() });
  return {
    runId: run.id,
    planId: phaseId(run.id, "plan"),
    stored,
    file: join(server.dataDir, "artifacts", stored.key),
  };
}

/** GET the plan JSON of `planId` with `token` (or none), abortable through `signal`. */
export function get(server: TestServer, token: string | null, planId: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${server.baseUrl}/api/v2/plans/${planId}/json-output`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
    signal,
  });
}

/** The body as far as it came, and whether it ended cleanly. */
export async function drain(response: Response): Promise<{ bytes: Buffer; failed: boolean }> {
  const chunks: Buffer[] = [];
  const reader = response.body!.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(chunks), failed: false };
      chunks.push(Buffer.from(value));
    }
  } catch {
    return { bytes: Buffer.concat(chunks), failed: true };
  }
}

/** The single unavailable answer, with the plan id taken out so answers for different plans compare equal. */
export async function expectUnavailable(response: Response, planId: string): Promise<unknown> {
  assert.is(response.status, 404);
  assert.match(response.headers.get("content-type") ?? "", /^application\/vnd\.api\+json/);
  const document = (await response.json()) as Tfe["ErrorDocument"];
  assert.is(document.errors.length, 1);
  assert.is(document.errors[0].status, "404");
  assert.is(document.errors[0].code, "PLAN_JSON_UNAVAILABLE");
  return JSON.parse(JSON.stringify(document).split(planId).join("<plan>"));
}

/** The set-up, and a run whose stored plan JSON is a document of about `bytes` bytes. */
export async function withStoredPlan(server: TestServer, bytes: number) {
  const fixture = await setUp(server);
  const planJson = planJsonOf(bytes);
  return { ...fixture, planJson, ...(await runWithPlanJson(server, fixture.admin, fixture.workspace.id, planJson)) };
}

/** A run of `files` in the workspace, planned by the runner and checked to await approval (waitForPlanned). */
export async function plannedRunIn(
  server: TestServer,
  admin: string,
  workspaceId: string,
  files: Parameters<typeof startRun>[3],
) {
  const run = await startRun(server, admin, workspaceId, files);
  await waitForPlanned(server, admin, run.id);
  return run;
}
