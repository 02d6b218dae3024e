// GET /api/v2/plans/{plan_id}/json-output, part 2: concurrent and abandoned streams and the read
// worker, descriptor checks, a real plan, and the contract pass through prism.
import { createHash } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { flipByte } from "../support/files.ts";
import { openDescriptors } from "../support/processes.ts";
import { phaseId } from "../../src/api/tfe/presenters.ts";
import type { FramedArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { HEADER_SIZE } from "../../src/artifacts/framed.ts";
import { createWorkspace, sha256 } from "../support/factories.ts";
import { fixture } from "../support/runs.ts";
import { withTestServer, type TestServer } from "../support/test-server.ts";
import { describeViolations, startContractProxy } from "../e2e/contract-proxy.ts";
import {
  drain,
  expectUnavailable,
  FRAME,
  get,
  planJsonOf,
  plannedRunIn,
  runWithPlanJson,
  setUp,
  testEachServer,
  withStoredPlan,
} from "../support/api-plan-json.ts";
import { until } from "../support/poll.ts";

const test = suite("plan json-output (tfe): streams");

/** Streams under way in the server's read worker. */
function workerStreams(server: TestServer): number {
  return (server.services.artifacts as FramedArtifactStore).reader.active;
}

testEachServer(
  test,
  "concurrent downloads are each byte-exact; a tampered one among them fails alone",
  async (server) => {
    const { token, admin, workspace } = await setUp(server);
    const plans = [
      planJsonOf(8 * 1024 * 1024),
      planJsonOf(12 * 1024 * 1024 + 3),
      planJsonOf(2 * 1024 * 1024),
      planJsonOf(300 * 1024),
    ];
    const runs = [];
    for (const planJson of plans) runs.push(await runWithPlanJson(server, admin, workspace.id, planJson));
    const tamperedPlan = planJsonOf(10 * 1024 * 1024);
    const tampered = await runWithPlanJson(server, admin, workspace.id, tamperedPlan);
    // Frame 100 is in the seventh batch: the answer has started when it fails.
    await flipByte(tampered.file, HEADER_SIZE + 100 * FRAME + 5);
    const requests = [...runs, tampered, ...runs].map((run) => get(server, token, run.planId));
    const results = await Promise.all(
      requests.map(async (request) => {
        const response = await request;
        assert.is(response.status, 200);
        return drain(response);
      }),
    );
    results.forEach(({ bytes, failed }, i) => {
      if (i === runs.length) {
        assert.ok(failed, "the tampered download completed");
        assert.ok(bytes.length <= 100 * (FRAME - 16), `bytes of or after the tampered frame came out`);
        assert.ok(bytes.equals(tamperedPlan.subarray(0, bytes.length)));
        return;
      }
      const planJson = plans[i < runs.length ? i : i - runs.length - 1];
      assert.not.ok(failed, `download ${i} failed`);
      assert.ok(bytes.equals(planJson), `download ${i} differs from its plan JSON`);
    });
    await until(() => workerStreams(server) === 0, "a stream stayed open in the read worker");
  },
);

testEachServer(
  test,
  "clients that disconnect mid-stream release the read worker: no stream stays open, the next downloads succeed",
  async (server) => {
    const { token, planId, file, planJson } = await withStoredPlan(server, 32 * 1024 * 1024);
    const aborts = [new AbortController(), new AbortController(), new AbortController()];
    const readers = await Promise.all(
      aborts.map(async (abort) => {
        const response = await get(server, token, planId, abort.signal);
        assert.is(response.status, 200);
        const reader = response.body!.getReader();
        await reader.read();
        return reader;
      }),
    );
    assert.is(workerStreams(server), 3);
    for (const abort of aborts) abort.abort();
    await Promise.all(readers.map((reader) => reader.read().catch(() => undefined)));
    await until(
      () => workerStreams(server) === 0,
      "a stream stayed open in the read worker after its client went away",
    );
    await until(() => openDescriptors(file) === 0, "the object stayed open after its clients went away");
    const again = await Promise.all([get(server, token, planId), get(server, token, planId)]);
    for (const response of again) {
      assert.is(response.status, 200);
      const { bytes, failed } = await drain(response);
      assert.not.ok(failed);
      assert.ok(bytes.equals(planJson));
    }
    assert.is(workerStreams(server), 0);
  },
);

testEachServer(
  test,
  "a descriptor size mismatch is refused before the first byte; a digest mismatch cancels the stream at the end",
  async (server) => {
    const { token, admin, workspace } = await setUp(server);
    // Larger than the read-ahead (a few MiB), so the digest is checked after the answer started.
    const planJson = planJsonOf(16 * 1024 * 1024 + 7);
    const sized = await runWithPlanJson(server, admin, workspace.id, planJson);
    for (const delta of [-1, 1]) {
      await server.db
        .knex("artifacts")
        .where({ artifact_key: sized.stored.key })
        .update({ size_bytes: planJson.length + delta });
      await expectUnavailable(await get(server, token, sized.planId), sized.planId);
    }

    const digested = await runWithPlanJson(server, admin, workspace.id, planJson);
    await server.db
      .knex("artifacts")
      .where({ artifact_key: digested.stored.key })
      .update({ sha256: sha256("something else") });
    const response = await get(server, token, digested.planId);
    assert.is(response.status, 200);
    const { bytes, failed } = await drain(response);
    assert.ok(failed, "a digest mismatch produced a complete-looking response");
    assert.ok(bytes.length < planJson.length);

    // Another workspace's or kind's descriptor does not open this object (its identity is bound).
    const moved = await runWithPlanJson(server, admin, workspace.id, planJson);
    const other = await createWorkspace(server, admin, "acme", { name: "other" });
    await server.db.knex("artifacts").where({ artifact_key: moved.stored.key }).update({ workspace_id: other.id });
    await expectUnavailable(await get(server, token, moved.planId), moved.planId);
  },
);

testEachServer(
  test,
  "a real plan: the runner stores its JSON framed; json-output serves exactly the bytes the policy stage read",
  async (server) => {
    const { token, admin, workspace } = await setUp(server);
    const run = await plannedRunIn(server, admin, workspace.id, fixture("random"));
    const record = (await server.services.stores.runs.getById(run.id))!;
    const response = await get(server, token, phaseId(run.id, "plan"));
    assert.is(response.status, 200);
    const { bytes, failed } = await drain(response);
    assert.not.ok(failed);
    const ref = (await server.services.stores.artifacts.forRun(record.id, "plan_json"))!.ref;
    assert.is(bytes.length, ref.sizeBytes);
    assert.is(createHash("sha256").update(bytes).digest("hex"), ref.sha256);
    const document = JSON.parse(bytes.toString("utf8")) as { resource_changes?: unknown[] };
    assert.ok(Array.isArray(document.resource_changes) && document.resource_changes.length > 0);
  },
  { runner: true },
);

// The contract pass (issue 4: every scenario also through `prism proxy --errors` on spec/tfe),
// SQLite only like the CLI scenarios'. Only the answers themselves are checked here: prism buffers
// and re-serializes JSON bodies and turns a cut-off upstream body into its own error, so the
// byte-exact, backpressure and cancellation cases above cannot run through it.
test("through prism: a plan JSON and the unavailable answer conform to spec/tfe [sqlite, through prism]", () =>
  withTestServer("sqlite", async (server) => {
    const { token, admin, planId, planJson } = await withStoredPlan(server, 256 * 1024);
    const proxy = await startContractProxy({ upstream: server.baseUrl });
    let failure: unknown = null;
    try {
      const via = { ...server, baseUrl: `http://127.0.0.1:${proxy.port}` };
      const response = await get(via, token, planId);
      const body = await response.text();
      assert.is(response.status, 200, body);
      assert.is(response.headers.get("cache-control"), "private, no-store");
      assert.equal(JSON.parse(body), JSON.parse(planJson.toString("utf8")));
      await expectUnavailable(await get(via, admin, "plan-0000000000000000"), "plan-0000000000000000");
      assert.equal(proxy.validated, [
        `GET /api/v2/plans/${planId}/json-output 200`,
        "GET /api/v2/plans/plan-0000000000000000/json-output 404",
      ]);
    } catch (error) {
      failure = error;
    } finally {
      await proxy.close();
    }
    if (proxy.violations.length > 0)
      throw new Error(
        `${describeViolations(proxy)}${failure instanceof Error ? `\n--- the case's own failure ---\n${failure.message}` : ""}`,
      );
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what was caught, as it was
    if (failure) throw failure;
  }));

test.run();
