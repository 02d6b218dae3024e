// Arrange blocks the lifecycle scenarios share, so each scenario states only what differs: an
// organization with a workspace, a run started there, a planned run awaiting approval, a run held
// in its plan, a clock ahead of real time, and a second runner that notices a killed one.
import type { ChildProcess } from "node:child_process";
import type { Run } from "../../../client/src/index.ts";
import { RunnerEngine } from "../../src/runner/engine.ts";
import { createOrganizationWithToken, createWorkspace } from "./factories.ts";
import { fixture, startRun, waitForPlanned, waitForStatus } from "./runs.ts";
import type { TestServer } from "./test-server.ts";

/** A configuration whose plan takes long enough (4000 resources) to act on the run while it plans. */
export const MANY_RESOURCES = {
  "main.tf": 'resource "terraform_data" "many" {\n  count = 4000\n  input = count.index\n}\n',
};

/** An organization "acme" (an admin token) and one workspace called `name` in it. */
export async function acmeWorkspace(server: TestServer, name: string, attributes: Record<string, unknown> = {}) {
  const { token, organizationName, organizationId } = await createOrganizationWithToken(server, "acme");
  const workspace = await createWorkspace(server, token, organizationName, { name, ...attributes });
  return { token, organizationName, organizationId, workspace };
}

/** A clock for a test server's `clock` option, `set` milliseconds ahead of real time (to pass an approval window). */
export function shiftedClock() {
  let offsetMs = 0;
  return {
    now: () => new Date(Date.now() + offsetMs),
    set(ms: number) {
      offsetMs = ms;
    },
  };
}

/** …with a run of `files` (the basic fixture unless given) started there, queued for the runner. */
export async function startedRun(
  server: TestServer,
  name: string,
  files: Record<string, string> = fixture("basic"),
  kind: "plan_and_apply" | "speculative" = "plan_and_apply",
) {
  const arranged = await acmeWorkspace(server, name);
  const run = await startRun(server, arranged.token, arranged.workspace.id, files, kind);
  return { ...arranged, run };
}

/** …planned: the run awaits approval (otherwise the test fails with the plan's log). */
export async function plannedRun(
  server: TestServer,
  name: string,
  files?: Record<string, string>,
): Promise<Awaited<ReturnType<typeof startedRun>> & { planned: Run }> {
  const arranged = await startedRun(server, name, files);
  const planned = await waitForPlanned(server, arranged.token, arranged.run.id);
  return { ...arranged, planned };
}

/** …still planning (MANY_RESOURCES), for cancel and in-flight views. */
export async function planningRun(server: TestServer, name: string) {
  const arranged = await startedRun(server, name, MANY_RESOURCES);
  await waitForStatus(server, arranged.token, arranged.run.id, ["planning"]);
  return arranged;
}

/** Kills a runner process the hard way (SIGKILL) and waits until it is gone. */
export async function killRunner(runner: ChildProcess): Promise<void> {
  runner.kill("SIGKILL");
  await new Promise((resolve) => runner.once("exit", resolve));
}

/** A second, in-process runner that declares a silent attempt lost after a second. */
export async function startSurvivorRunner(server: TestServer): Promise<RunnerEngine> {
  const survivor = new RunnerEngine(
    {
      services: server.services,
      api: { host: "127.0.0.1", port: Number(new URL(server.baseUrl).port) },
      phaseTimeoutMs: 60_000,
    },
    { staleAfterMs: 1_000, heartbeatIntervalMs: 200, pollIntervalMs: 50 },
  );
  await survivor.start();
  return survivor;
}
