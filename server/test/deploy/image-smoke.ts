// The container image's smoke test (scripts/ci-image-smoke, a step of .ci/run before npm test):
// runs the image built by scripts/image with only the capabilities the sandbox needs (deploy/README.md),
// waits for /healthz (and the image's own HEALTHCHECK), creates an organization, a token and a
// workspace through /v1 with the bootstrap token, uploads a small configuration that needs the
// provider mirror (hashicorp/random) and runs one real speculative plan in the container's sandbox
// until `planned`; then stops the container with SIGTERM and removes it, and checks that no
// container, volume or network of it is left.
//
//   node --import tsx server/test/deploy/image-smoke.ts <image>
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createOrganization, createRun, createStackShipClient, getRun, getRunLog } from "../../../client/src/index.ts";
import {
  createPendingConfiguration,
  createToken,
  createWorkspace,
  makeConfigurationTarball,
  putUpload,
} from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import type { TestServer } from "../support/test-server.ts";
import { podman, podmanOk, SANDBOX_CAPABILITY_ARGS, waitFor } from "./podman.ts";

const image = process.argv[2];
if (!image) throw new Error("usage: image-smoke.ts <image>");

const CONFIGURATION = {
  "main.tf": `terraform {
  required_providers {
    random = { source = "hashicorp/random", version = "~> 3.9" }
  }
}
resource "random_id" "suffix" {
  byte_length = 4
}
resource "terraform_data" "app" {
  input = "app-\${random_id.suffix.hex}"
}
`,
};

const started = Date.now();
const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
const say = (text: string) => process.stdout.write(`[image-smoke] ${text} (${seconds()})\n`);

const name = `stackship-smoke-${process.pid}`;
const bootstrapToken = `ss0.${randomBytes(24).toString("base64url")}`;
const networksBefore = podmanOk(["network", "ls", "--format", "{{.Name}}"]);
const volumesBefore = podmanOk(["volume", "ls", "--format", "{{.Name}}"]);

let removed = false;
async function removeContainer(): Promise<void> {
  if (removed) return;
  removed = true;
  podman(["rm", "--force", "--volumes", "--time", "5", name]);
}

try {
  // Exactly the capabilities the sandbox needs, nothing of podman's default set beyond them.
  podmanOk([
    "run",
    "--detach",
    "--name",
    name,
    ...SANDBOX_CAPABILITY_ARGS,
    "--env",
    `STACKSHIP_BOOTSTRAP_TOKEN=${bootstrapToken}`,
    "--env",
    "STACKSHIP_RUNNER_CONCURRENCY=1",
    "--env",
    "STACKSHIP_LOG_LEVEL=warn",
    "--publish",
    "127.0.0.1::8080",
    image,
  ]);
  const port = /:(\d+)\s*$/.exec(podmanOk(["port", name, "8080/tcp"]))?.[1];
  assert.ok(port, "podman port named no host port for 8080");
  const baseUrl = `http://127.0.0.1:${port}`;
  say(`container ${name} started, ${baseUrl}`);

  await waitFor("/healthz answers 200", 120_000, async () => {
    const state = podmanOk(["inspect", "--format", "{{.State.Status}}", name]);
    if (state !== "running") throw new Error(`the container is ${state}:\n${podman(["logs", name]).output}`);
    const response = await fetch(`${baseUrl}/healthz`).catch(() => null);
    return response?.status === 200;
  });
  say("/healthz: 200");
  const healthcheck = podman(["healthcheck", "run", name]);
  assert.equal(healthcheck.status, 0, `the image's HEALTHCHECK failed: ${healthcheck.output}`);
  say("the image's HEALTHCHECK: healthy");

  // The factories' calls need only the server's base URL and clients.
  const v1 = (token?: string) => createStackShipClient({ baseUrl, token });
  const server = { baseUrl, bootstrapToken, admin: v1(bootstrapToken), v1 } as unknown as TestServer;
  expectStatus(
    await createOrganization({
      client: server.admin,
      body: { data: { type: "organizations", attributes: { name: "smoke" } } },
    }),
    201,
  );
  const { token } = await createToken(server, bootstrapToken, "smoke", "admin");
  const workspace = await createWorkspace(server, token, "smoke", { name: "image-smoke" });
  const pending = await createPendingConfiguration(server, token, workspace.id, true);
  const upload = await putUpload(pending.attributes.upload_url!, makeConfigurationTarball(CONFIGURATION));
  assert.equal(upload.status, 200, `upload: ${await upload.text()}`);
  const run = expectStatus(
    await createRun({
      client: v1(token),
      path: { workspace_id: workspace.id },
      body: {
        data: {
          type: "runs",
          attributes: { kind: "speculative" },
          relationships: { configuration_version: { data: { type: "configuration-versions", id: pending.id } } },
        },
      },
    }),
    201,
  ).data;
  say(`speculative run ${run.id} created`);

  const readPlanLog = async () =>
    expectStatus(
      await getRunLog({ client: v1(token), path: { run_id: run.id, phase: "plan" }, query: { offset: 0 } }),
      200,
    ).data.attributes.text;
  let status = "";
  await waitFor("the run to finish its plan", 180_000, async () => {
    status = expectStatus(await getRun({ client: v1(token), path: { run_id: run.id } }), 200).data.attributes.status;
    return ["planned_and_finished", "errored", "canceled", "plan_credentials_required"].includes(status);
  }).catch(async (error: Error) => {
    throw new Error(`${error.message}; the run is ${status}; plan log:\n${await readPlanLog()}`);
  });
  const log = await readPlanLog();
  // A speculative run ends planned_and_finished once its plan is recorded.
  assert.equal(status, "planned_and_finished", `the run ended ${status}; plan log:\n${log}`);
  assert.match(
    log,
    /random_id\.suffix(: Plan to create| will be created)/,
    `the plan log does not show the planned resource:\n${log}`,
  );
  assert.match(log, /2 to add, 0 to change, 0 to destroy/, `the plan log has no summary:\n${log}`);
  say(`run ${run.id}: planned_and_finished (random_id.suffix and terraform_data.app to add)`);

  // SIGTERM (the image's STOPSIGNAL) ends the server gracefully: exit code 0, not a SIGKILL.
  const stop = podman(["stop", "--time", "30", name]);
  assert.equal(stop.status, 0, `podman stop: ${stop.output}`);
  const exitCode = podmanOk(["inspect", "--format", "{{.State.ExitCode}}", name]);
  assert.equal(
    exitCode,
    "0",
    `the server exited ${exitCode} on SIGTERM:\n${podman(["logs", "--tail", "30", name]).output}`,
  );
  say("stopped with SIGTERM: exit code 0");
} catch (error) {
  if (!removed)
    process.stderr.write(
      `[image-smoke] the container's last log lines:\n${podman(["logs", "--tail", "60", name]).output}\n`,
    );
  throw error;
} finally {
  await removeContainer();
}

assert.equal(
  podmanOk(["ps", "--all", "--filter", `name=^${name}$`, "--format", "{{.Names}}"]),
  "",
  "the container is still there",
);
assert.equal(podmanOk(["network", "ls", "--format", "{{.Name}}"]), networksBefore, "a network was left behind");
assert.equal(podmanOk(["volume", "ls", "--format", "{{.Name}}"]), volumesBefore, "a volume was left behind");
say("removed: no container, volume or network left");
