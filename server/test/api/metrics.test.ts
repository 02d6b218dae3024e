import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { fixture, startRun } from "../support/runs.ts";
import { shiftedClock } from "../support/scenarios.ts";
import { scrape } from "../support/spawned.ts";
import { testEachServer } from "../support/test-server.ts";

const metrics = suite("GET /metrics");

const clock = shiftedClock();

testEachServer(
  metrics,
  "unauthenticated Prometheus text: runs by status and the queue read from the database at scrape time, HTTP latency by operation id",
  async (server) => {
    clock.set(0);
    const response = await fetch(`${server.baseUrl}/metrics`);
    assert.is(response.status, 200);
    assert.is(response.headers.get("content-type")?.split(";")[0], "text/plain");
    const empty = await scrape(`${server.baseUrl}/metrics`);
    assert.ok(empty.text.includes('stackship_runs{status="pending"} 0'), empty.text);
    assert.ok(empty.text.includes("stackship_run_queue_depth 0"));
    assert.ok(empty.text.includes("stackship_run_queue_oldest_age_seconds 0"));

    // No runner here: the queued plans wait, and their age is the clock's.
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "metered" });
    await startRun(server, token, workspace.id, fixture("basic"));
    await startRun(server, token, workspace.id, fixture("basic"), "speculative");
    clock.set(90_000);
    const queued = await scrape(`${server.baseUrl}/metrics`);
    assert.is(queued.value('stackship_runs{status="pending"}'), 2);
    assert.is(queued.value('stackship_runs{status="applied"}'), 0);
    assert.is(queued.value("stackship_run_queue_depth"), 2);
    const age = queued.value("stackship_run_queue_oldest_age_seconds");
    assert.ok(age >= 90 && age < 100, `oldest queued age ${age}`);
    assert.ok(
      queued.value('stackship_http_request_duration_seconds_count{operation_id="createRun",status="201"}') >= 2,
      queued.text,
    );
    const missing = await fetch(`${server.baseUrl}/v1/no-such-thing`);
    assert.is(missing.status, 404);
    const after = await scrape(`${server.baseUrl}/metrics`);
    assert.is(
      after.value('stackship_http_request_duration_seconds_count{operation_id="unmatched",status="404"}') -
        queued.value('stackship_http_request_duration_seconds_count{operation_id="unmatched",status="404"}'),
      1,
    );
    assert.ok(after.value('stackship_artifact_bytes_total{direction="written"}') > 0, "the uploads were counted");
    for (const name of ["metered", workspace.id, organizationName, token])
      assert.not.ok(after.text.includes(name), `the page names ${name}`);
  },
  { clock: clock.now },
);

metrics.run();
