// A real run (bubblewrap, tofu) through the in-process runner, watched over the live socket.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { getRunLog } from "../../../client/src/index.ts";
import type { LiveClient } from "../support/live.ts";
import type { LiveHelloMessage, LiveLogMessage, LiveRunMessage } from "../../src/live/messages.ts";
import { disconnect, openLive } from "../support/live.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { approvePlan, readLog, startRun, waitForStatus } from "../support/runs.ts";
import { signedInMember } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const runner = suite("live: a real run");

/** The phase's text before the socket's stream started (the HTTP route up to hello's offset). */
async function prefix(
  server: TestServer,
  token: string,
  runId: string,
  phase: "plan" | "policy" | "apply",
  upTo: number,
): Promise<string> {
  if (upTo === 0) return "";
  return expectStatus(
    await getRunLog({ client: server.v1(token), path: { run_id: runId, phase }, query: { offset: 0, limit: upTo } }),
    200,
  ).data.attributes.text;
}

async function assertLogsMatch(
  server: TestServer,
  token: string,
  runId: string,
  client: LiveClient,
  start: LiveHelloMessage,
  phase: "plan" | "apply",
) {
  const logs = client.messages.filter((m): m is LiveLogMessage => m.type === "log" && m.phase === phase);
  logs.forEach((m, i) => assert.is(m.seq, start.logs[phase].next_seq + i, `${phase} seq`));
  const text =
    (await prefix(server, token, runId, phase, start.logs[phase].next_offset)) + logs.map((m) => m.text).join("");
  assert.is(
    text,
    await readLog(server, token, runId, phase),
    `${phase}: the HTTP prefix plus the live chunks are the HTTP log`,
  );
  assert.ok(logs.length > 0 && logs[logs.length - 1].final, `${phase}: the final chunk arrived live`);
}

testEachServer(
  runner,
  "plan, approval and apply of a real run stream their logs and status changes; the socket closes when the run is applied",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "live" });
    const { session } = await signedInMember(server, organizationName, "viewer");
    const run = await startRun(server, token, workspace.id, {
      "main.tf": 'resource "terraform_data" "a" {\n  input = "live"\n}\n',
    });
    const opened = await openLive(server, run.id, { cookie: session.cookie });
    assert.ok(opened.client, `the run ended before the socket opened: ${JSON.stringify(opened.refusal)}`);
    const client = opened.client;
    const start = await client.waitFor<LiveHelloMessage>((m) => m.type === "hello");
    await client.waitFor<LiveRunMessage>((m) => m.type === "run" && m.run.status === "awaiting_approval", 90_000);
    await assertLogsMatch(server, token, run.id, client, start, "plan");

    const planned = await waitForStatus(server, token, run.id, ["awaiting_approval"]);
    await approvePlan(server, token, run.id, planned.attributes.plan_digest!);
    const closed = await client.closed;
    assert.is(closed.code, 1000, closed.reason);
    const statuses = client.messages.filter((m): m is LiveRunMessage => m.type === "run").map((m) => m.run.status);
    assert.is(statuses[statuses.length - 1], "applied");
    assert.ok(statuses.includes("applying"), statuses.join(" → "));
    const applyStatuses = client.messages
      .filter((m): m is LiveRunMessage => m.type === "run")
      .map((m) => m.run.apply_status);
    assert.ok(
      applyStatuses.includes("running") && applyStatuses[applyStatuses.length - 1] === "finished",
      applyStatuses.join(" → "),
    );
    await assertLogsMatch(server, token, run.id, client, start, "apply");
    await disconnect(client);

    // And a viewer arriving now is told the run is over.
    assert.is((await openLive(server, run.id, { cookie: session.cookie })).refusal?.status, 409);
  },
  { runner: true },
);

runner.run();
