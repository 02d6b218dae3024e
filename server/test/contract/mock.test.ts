// `npm run mock` (scripts/mock.mjs): prism on the bundled spec/v1 with dynamic examples answers the
// dashboard's reads with documents the spec's own response validators accept, and refuses a
// request the spec refuses.
import { spawn, type ChildProcess } from "node:child_process";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { OperationDescriptor } from "../../../generated/operation-table.ts";
import { operations } from "../../../generated/v1/operations.gen.ts";
import { freePort } from "../support/ports.ts";

const test = suite("mock server");

let mock: ChildProcess | null = null;
let base = "";

test.before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  mock = spawn(process.execPath, ["scripts/mock.mjs"], {
    cwd: new URL("../../..", import.meta.url).pathname,
    env: { ...process.env, STACKSHIP_MOCK_PORT: String(port) },
    stdio: "ignore",
    detached: true,
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error("prism mock did not answer within 60 s");
    await new Promise((r) => setTimeout(r, 250));
  }
});

test.after(() => {
  // The whole process group: scripts/mock.mjs and prism.
  if (mock?.pid) process.kill(-mock.pid, "SIGTERM");
});

const responseOf = (operationId: string, status: number) =>
  (operations.find((op) => op.operationId === operationId)!.responses as OperationDescriptor["responses"])[status];

const RUN = "run-0123456789abcdef";
const WS = "ws-0123456789abcdef";
// The reads the dashboard's pages make (runs inventory, a run, its review and changes, a workspace).
const READS: Array<[string, string]> = [
  ["listOrganizationRuns", "/v1/organizations/acme/runs"],
  ["getRun", `/v1/runs/${RUN}`],
  ["getRunReview", `/v1/runs/${RUN}/review`],
  ["getRunPlanChanges", `/v1/runs/${RUN}/plan-changes`], // application/json
  ["getWorkspace", `/v1/workspaces/${WS}`],
  ["getCurrentSession", "/v1/auth/sessions/current"],
];

test("answers the dashboard's reads (three times each) with documents the spec's own validators accept", async () => {
  for (const [operationId, path] of READS) {
    assert.ok(
      operations.some((op) => op.operationId === operationId),
      operationId,
    );
    const { contentType, validate } = responseOf(operationId, 200);
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${base}${path}`, {
        headers: { Authorization: "Bearer mock", Accept: contentType! },
      });
      assert.is(response.status, 200, path);
      assert.ok((response.headers.get("content-type") ?? "").startsWith(contentType!), path);
      const body: unknown = await response.json();
      if (!validate) throw new Error(`${operationId} has no response validator`);
      assert.ok(validate(body), `${operationId}: ${JSON.stringify(validate.errors)}`);
    }
  }
});

test("refuses a path parameter the spec refuses, and picks a declared status on request", async () => {
  const bad = await fetch(`${base}/v1/runs/not-a-run-id`, { headers: { Authorization: "Bearer mock" } });
  assert.ok(bad.status >= 400 && bad.status < 500, String(bad.status));
  const missing = await fetch(`${base}/v1/runs/${RUN}`, {
    headers: { Authorization: "Bearer mock", Prefer: "code=404" },
  });
  assert.is(missing.status, 404);
});

test.run();
