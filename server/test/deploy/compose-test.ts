// deploy/compose.yaml, tested (scripts/ci-compose-test, a step of .ci/run before npm test): brings
// the deployment up with podman-compose (PostgreSQL, SeaweedFS as the S3 store, an API process
// without a runner, two runner-only containers), runs plan → approve → apply with the real `tofu`
// CLI through a `cloud` block, then kills the runner container that holds a second run's apply
// (SIGKILL) and waits for the other runner to find the apply lost (needs_recovery, runner_lost);
// resolves it, plans once more on the surviving runners, and brings everything down, checking
// that no container, volume or network of the project is left.
//
//   node --import tsx server/test/deploy/compose-test.ts [app image] [services image]
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import {
  approveRun,
  createRun,
  createStackShipClient,
  getRun,
  getRunLog,
  resolveRunRecovery,
  type Run,
} from "../../../client/src/index.ts";
import { REPO_ROOT } from "../../src/config.ts";
import { cliProject } from "../e2e/cli.ts";
import { createPendingConfiguration, makeConfigurationTarball, putUpload } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { freePort } from "../support/ports.ts";
import type { TestServer } from "../support/test-server.ts";
import { podman, podmanOk, waitFor } from "./podman.ts";

const [appImage = "localhost/stackship:latest", servicesImage = "localhost/stackship-services:latest"] =
  process.argv.slice(2);
const project = `stackship-ci-${process.pid}`;
const COMPOSE_FILE = join(REPO_ROOT, "deploy/compose.yaml");

const started = Date.now();
const say = (text: string) =>
  process.stdout.write(`[compose-test] ${text} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);

const httpPort = await freePort();
const httpsPort = await freePort();
const bootstrapToken = `ss0.${randomBytes(24).toString("base64url")}`;
const env = {
  ...process.env,
  STACKSHIP_IMAGE: appImage,
  STACKSHIP_SERVICES_IMAGE: servicesImage,
  STACKSHIP_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  STACKSHIP_BOOTSTRAP_TOKEN: bootstrapToken,
  STACKSHIP_POSTGRES_PASSWORD: randomBytes(12).toString("hex"),
  STACKSHIP_S3_ACCESS_KEY_ID: `ak${randomBytes(8).toString("hex")}`,
  STACKSHIP_S3_SECRET_ACCESS_KEY: randomBytes(20).toString("hex"),
  STACKSHIP_HTTP_PUBLISH: `127.0.0.1:${httpPort}`,
  STACKSHIP_HTTPS_PUBLISH: `127.0.0.1:${httpsPort}`,
  STACKSHIP_LOG_LEVEL: "warn",
};

function compose(args: string[]): { status: number; output: string } {
  const result = spawnSync("podman-compose", ["-p", project, "-f", COMPOSE_FILE, ...args], {
    env,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, output: `${result.stdout}${result.stderr}` };
}

const containerName = (service: string) => `${project}_${service}_1`;
const projectContainers = () =>
  podmanOk(["ps", "--all", "--filter", `label=io.podman.compose.project=${project}`, "--format", "{{.Names}}"]);
const projectVolumes = () =>
  podmanOk(["volume", "ls", "--filter", `label=io.podman.compose.project=${project}`, "--format", "{{.Name}}"]);
const projectNetworks = () =>
  podmanOk(["network", "ls", "--format", "{{.Name}}"])
    .split("\n")
    .filter((name) => name.startsWith(`${project}_`))
    .join("\n");
const volumesBefore = podmanOk(["volume", "ls", "--format", "{{.Name}}"]);

/** Down with the data, then the network Debian's podman-compose 1.0.3 leaves (deploy/compose.yaml says so too). */
function down(): void {
  compose(["down", "-v", "-t", "10"]);
  for (const network of projectNetworks().split("\n").filter(Boolean)) podman(["network", "rm", network]);
}

const SLOW = `resource "terraform_data" "slow" {
  input = "two"
  provisioner "local-exec" {
    command = "echo provisioning-started; sleep 90"
  }
}
`;

let failed = false;
try {
  const up = compose(["up", "-d"]);
  assert.equal(up.status, 0, `podman-compose up:\n${up.output}`);
  say(`${project} up: ${projectContainers().split("\n").join(", ")}`);
  const baseUrl = `http://127.0.0.1:${httpPort}`;
  await waitFor(
    "the API's /healthz",
    180_000,
    async () => (await fetch(`${baseUrl}/healthz`).catch(() => null))?.status === 200,
  );
  say("API /healthz: 200");

  const v1 = (token?: string) => createStackShipClient({ baseUrl, token });
  const server = { baseUrl, bootstrapToken, admin: v1(bootstrapToken), v1 } as unknown as TestServer;

  // 1. plan → approve → apply with the real CLI (a `cloud` block; the CLI's "yes" is the approval).
  const cli = await cliProject(server, { workspaceName: "compose" });
  try {
    const init = await cli.tofu(["init"]);
    assert.equal(init.code, 0, `tofu init:\n${init.stdout}\n${init.stderr}`);
    const apply = await cli.tofu(["apply"], { stdin: "yes\n", timeoutMs: 240_000 });
    assert.equal(apply.code, 0, `tofu apply:\n${apply.stdout}\n${apply.stderr}`);
    assert.match(apply.stdout, /Apply complete! Resources: 1 added, 0 changed, 0 destroyed/, apply.stdout);
    say("tofu apply through the cloud block: applied (1 added)");

    // 2. A slow apply; SIGKILL the runner container holding it; the other finds it lost.
    const workspaceId = await workspaceIdByName(baseUrl, cli.token, cli.organizationName, "compose");
    const pending = await createPendingConfiguration(server, cli.token, workspaceId);
    const upload = await putUpload(pending.attributes.upload_url!, makeConfigurationTarball({ "main.tf": SLOW }));
    assert.equal(upload.status, 200, `upload: ${await upload.text()}`);
    const created = expectStatus(
      await createRun({
        client: v1(cli.token),
        path: { workspace_id: workspaceId },
        body: {
          data: {
            type: "runs",
            attributes: { kind: "plan_and_apply" },
            relationships: { configuration_version: { data: { type: "configuration-versions", id: pending.id } } },
          },
        },
      }),
      201,
    ).data;
    const planned = await waitForRun(baseUrl, cli.token, created.id, ["awaiting_approval", "errored"], 180_000);
    assert.equal(
      planned.attributes.status,
      "awaiting_approval",
      await phaseLog(baseUrl, cli.token, created.id, "plan"),
    );
    expectStatus(
      await approveRun({
        client: v1(cli.token),
        path: { run_id: created.id },
        body: { data: { type: "approvals", attributes: { plan_digest: planned.attributes.plan_digest! } } },
      }),
      202,
    );
    await waitFor("the apply's provisioner to start", 120_000, async () =>
      (await phaseLog(baseUrl, cli.token, created.id, "apply")).includes("provisioning-started"),
    );
    // The runner holding the apply is the one whose container runs the provisioner's sleep.
    const holder = ["runner-1", "runner-2"].find((service) =>
      podman(["top", containerName(service), "args"]).output.includes("sleep 90"),
    );
    assert.ok(holder, "neither runner container runs the apply's provisioner");
    const other = holder === "runner-1" ? "runner-2" : "runner-1";
    podmanOk(["kill", "--signal", "KILL", containerName(holder)]);
    say(`apply running on ${holder}: killed it (SIGKILL)`);
    const stuck = await waitForRun(baseUrl, cli.token, created.id, ["needs_recovery", "applied", "errored"], 120_000);
    assert.equal(stuck.attributes.status, "needs_recovery", JSON.stringify(stuck.attributes));
    assert.equal(stuck.attributes.status_reason, "apply_interrupted");
    assert.equal(stuck.attributes.recovery?.attempt?.terminal_classification, "runner_lost");
    assert.ok(stuck.attributes.recovery?.last_log_lines.some((line) => line.includes("provisioning-started")));
    assert.equal(
      podmanOk(["inspect", "--format", "{{.State.Status}}", containerName(other)]),
      "running",
      `${other} is not running`,
    );
    say(`needs_recovery (apply_interrupted, runner_lost), found by the runners left (${other} running)`);

    // 3. Resolved by an operator; a new plan runs on the runners left.
    const resolved = expectStatus(
      await resolveRunRecovery({
        client: v1(cli.token),
        path: { run_id: created.id },
        body: {
          data: {
            type: "recovery-resolutions",
            attributes: { resolution: "keep_current_state", reason: "the provisioner only slept; nothing changed" },
          },
        },
      }),
      202,
    ).data;
    assert.equal(resolved.attributes.status_reason, "recovered");
    const plan = await cli.tofu(["plan"], { timeoutMs: 180_000 });
    assert.equal(plan.code, 0, `tofu plan:\n${plan.stdout}\n${plan.stderr}`);
    assert.match(plan.stdout, /No changes\./, plan.stdout);
    say("recovered; tofu plan after it: no changes");
  } finally {
    await cli.cleanup();
  }
} catch (error) {
  failed = true;
  for (const service of ["api", "runner-1", "runner-2", "postgres", "s3"]) {
    process.stderr.write(
      `[compose-test] ${service}'s last log lines:\n${podman(["logs", "--tail", "25", containerName(service)]).output}\n`,
    );
  }
  throw error;
} finally {
  down();
  if (!failed) say("down");
}

assert.equal(projectContainers(), "", "containers were left behind");
assert.equal(projectVolumes(), "", "volumes were left behind");
assert.equal(podmanOk(["volume", "ls", "--format", "{{.Name}}"]), volumesBefore, "an anonymous volume was left behind");
assert.equal(projectNetworks(), "", "a network was left behind");
say("nothing left: no container, volume or network of the project");

async function waitForRun(
  baseUrl: string,
  token: string,
  runId: string,
  statuses: string[],
  timeoutMs: number,
): Promise<Run> {
  let run: Run | undefined;
  await waitFor(`run ${runId} to reach ${statuses.join("|")}`, timeoutMs, async () => {
    run = expectStatus(
      await getRun({ client: createStackShipClient({ baseUrl, token }), path: { run_id: runId } }),
      200,
    ).data;
    return statuses.includes(run.attributes.status);
  });
  return run!;
}

async function phaseLog(baseUrl: string, token: string, runId: string, phase: "plan" | "apply"): Promise<string> {
  const result = await getRunLog({
    client: createStackShipClient({ baseUrl, token }),
    path: { run_id: runId, phase },
    query: { offset: 0 },
  });
  return result.response.status === 200 ? result.data!.data.attributes.text : "";
}

async function workspaceIdByName(baseUrl: string, token: string, organization: string, name: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/v2/organizations/${organization}/workspaces/${name}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  assert.equal(response.status, 200, `workspace ${organization}/${name}: ${response.status}`);
  return ((await response.json()) as { data: { id: string } }).data.id;
}
