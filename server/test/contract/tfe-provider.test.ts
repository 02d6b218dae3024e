// The hashicorp/tfe Terraform provider (0.79.x) managing StackShip workspaces and variables as
// code (issue 26, part 3): built from a source checkout of github.com/hashicorp/terraform-provider-tfe
// named by STACKSHIP_TFE_PROVIDER_SRC (scripts/tfe-provider/build.sh; the registry's binaries are
// not on the Go module proxy) into a filesystem mirror, driven by the pinned tofu with local state
// against a test server over HTTPS (its local CA through SSL_CERT_FILE). Without a checkout the
// cases are counted as skipped. Bounded: the first build takes a few minutes (cached under .tools),
// each database's scenario about half a minute.
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { REPO_ROOT } from "../../src/config.ts";
import { listenOverHttps } from "../support/https-listener.ts";
import { testDialects } from "../support/databases.ts";
import type { V1 } from "../support/documents.ts";
import { createOrganizationWithToken } from "../support/factories.ts";
import { skipTest } from "../support/skips.ts";
import { withTestServer, type TestServer } from "../support/test-server.ts";
import { run } from "./smoke-support.ts";

const BUILD = join(REPO_ROOT, "scripts/tfe-provider/build.sh");
const TOFU = join(REPO_ROOT, ".tools/bin/tofu");
const SOURCE = process.env.STACKSHIP_TFE_PROVIDER_SRC ?? "";
const SECRET = "tfe-provider-secret-Zq81";

const test = suite("the hashicorp/tfe provider against StackShip (tofu, local state)");

interface Finished {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs tofu in `dir`; never throws on a non-zero exit (the caller asserts the code). */
async function tofu(dir: string, env: NodeJS.ProcessEnv, args: string[]): Promise<Finished> {
  const [command, ...rest] = args;
  const flags = command === "output" ? ["-no-color"] : ["-no-color", "-input=false"];
  return run(TOFU, [command, ...flags, ...rest], { cwd: dir, env, timeoutMs: 300_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: unknown) => ({ code: 1, stdout: "", stderr: error instanceof Error ? error.message : String(error) }),
  );
}

const transcript = (f: Finished) => `exit ${f.code}\n${f.stdout}\n${f.stderr}`;

/** The tfe provider's requirement and its configuration for StackShip at `hostname`. */
function providerBlock(hostname: string, organization: string): string {
  return `terraform {
  required_providers {
    tfe = { source = "hashicorp/tfe" }
  }
}

provider "tfe" {
  hostname     = "${hostname}"
  organization = "${organization}"
}
`;
}

/** The managed configuration: a workspace, two variables (one sensitive) and the workspace read back. */
function configuration(hostname: string, organization: string): string {
  return `${providerBlock(hostname, organization)}
resource "tfe_workspace" "app" {
  name              = "provider-app"
  description       = "Managed by the tfe provider"
  working_directory = "stacks/app"
  # StackShip never allows destroy plans (spec/tfe/README.md); the provider's default is true.
  allow_destroy_plan = false
}

resource "tfe_variable" "region" {
  key          = "region"
  value        = "eu-west-1"
  category     = "terraform"
  description  = "Where the app runs"
  workspace_id = tfe_workspace.app.id
}

resource "tfe_variable" "api_key" {
  key          = "API_KEY"
  value        = "${SECRET}"
  category     = "env"
  sensitive    = true
  workspace_id = tfe_workspace.app.id
}

data "tfe_workspace" "app" {
  name = tfe_workspace.app.name
}

output "read_back" {
  value = {
    id                = data.tfe_workspace.app.id
    working_directory = data.tfe_workspace.app.working_directory
    description       = data.tfe_workspace.app.description
  }
}
`;
}

/** A workspace asking for auto-apply, which StackShip refuses. */
function autoApplyConfiguration(hostname: string, organization: string): string {
  return `${providerBlock(hostname, organization)}
resource "tfe_workspace" "eager" {
  name               = "provider-eager"
  auto_apply         = true
  allow_destroy_plan = false
}
`;
}

/** GETs `path` with the token; `json` is the body as the documented shape `T` (undefined when empty). */
async function v1<T = unknown>(server: TestServer, token: string, path: string): Promise<{ status: number; json: T }> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    headers: { authorization: `Bearer ${token}`, accept: "application/vnd.api+json" },
  });
  const text = await response.text();
  return { status: response.status, json: (text ? JSON.parse(text) : undefined) as T };
}

async function scenario(server: TestServer, mirror: string): Promise<void> {
  const https = await listenOverHttps(server);
  const tls = https.tls;
  const work = await mkdtemp(join(tmpdir(), "ss-tfe-provider-"));
  try {
    const { organizationName: organization, token } = await createOrganizationWithToken(server, "acme", "admin");
    const hostname = `localhost:${https.port}`;
    await writeFile(
      join(work, "cli.tfrc"),
      `provider_installation {\n  filesystem_mirror {\n    path    = "${mirror}"\n    include = ["registry.opentofu.org/hashicorp/tfe"]\n  }\n}\n`,
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TF_CLI_CONFIG_FILE: join(work, "cli.tfrc"),
      TF_IN_AUTOMATION: "1",
      CHECKPOINT_DISABLE: "1",
      SSL_CERT_FILE: tls.bundleFile,
      TFE_TOKEN: token,
    };
    delete env.TF_LOG;

    const managed = join(work, "managed");
    await run("mkdir", ["-p", managed]);
    await writeFile(join(managed, "main.tf"), configuration(hostname, organization));
    const init = await tofu(managed, env, ["init"]);
    assert.is(init.code, 0, transcript(init));

    const apply = await tofu(managed, env, ["apply", "-auto-approve"]);
    assert.is(apply.code, 0, transcript(apply));
    assert.match(apply.stdout, "Apply complete! Resources: 3 added, 0 changed, 0 destroyed.", transcript(apply));

    // The server stores what was sent: a second plan finds nothing to change.
    const replan = await tofu(managed, env, ["plan", "-detailed-exitcode"]);
    assert.is(replan.code, 0, transcript(replan));
    assert.match(replan.stdout, "No changes.", transcript(replan));

    const output = await tofu(managed, env, ["output", "-json", "read_back"]);
    assert.is(output.code, 0, transcript(output));
    const readBack = JSON.parse(output.stdout) as { id: string; working_directory: string; description: string };
    assert.is(readBack.working_directory, "stacks/app");
    assert.is(readBack.description, "Managed by the tfe provider");

    // Through /v1, as the dashboard sees it: the workspace, and the sensitive value never returned.
    const workspace = await v1<V1["WorkspaceDocument"]>(server, token, `/v1/workspaces/${readBack.id}`);
    assert.is(workspace.status, 200, JSON.stringify(workspace.json));
    assert.is(workspace.json.data.attributes.name, "provider-app");
    assert.is(workspace.json.data.attributes.description, "Managed by the tfe provider");
    assert.is(workspace.json.data.attributes.working_directory, "stacks/app");
    const variables = await v1<V1["VariableListDocument"]>(server, token, `/v1/workspaces/${readBack.id}/variables`);
    assert.is(variables.status, 200);
    const byKey = new Map(variables.json.data.map((v) => [v.attributes.key, v.attributes]));
    assert.equal([...byKey.keys()].sort(), ["API_KEY", "region"]);
    assert.is(byKey.get("region")!.value, "eu-west-1");
    assert.is(byKey.get("region")!.category, "terraform");
    assert.is(byKey.get("API_KEY")!.sensitive, true);
    assert.is(byKey.get("API_KEY")!.category, "env");
    assert.is(byKey.get("API_KEY")!.value, null);
    assert.not.match(JSON.stringify(variables.json), SECRET);
    const tfeList = await v1(server, token, `/api/v2/workspaces/${readBack.id}/vars`);
    assert.is(tfeList.status, 200);
    assert.not.match(JSON.stringify(tfeList.json), SECRET);

    // tofu destroy removes the variables and the workspace (safe-delete: it holds no state).
    const destroy = await tofu(managed, env, ["destroy", "-auto-approve"]);
    assert.is(destroy.code, 0, transcript(destroy));
    assert.match(destroy.stdout, "Destroy complete! Resources: 3 destroyed.", transcript(destroy));
    assert.is((await v1(server, token, `/v1/workspaces/${readBack.id}`)).status, 404);
    assert.is((await v1(server, token, `/v1/workspaces/${readBack.id}/variables`)).status, 404);

    // auto_apply = true fails with the 422 sentence, and creates nothing.
    const eager = join(work, "eager");
    await run("mkdir", ["-p", eager]);
    await writeFile(join(eager, "main.tf"), autoApplyConfiguration(hostname, organization));
    const eagerInit = await tofu(eager, env, ["init"]);
    assert.is(eagerInit.code, 0, transcript(eagerInit));
    const refused = await tofu(eager, env, ["apply", "-auto-approve"]);
    assert.is(refused.code, 1, transcript(refused));
    assert.match(refused.stderr, "StackShip never applies without an explicit human approval", transcript(refused));
    assert.match(refused.stderr.replace(/\s+/g, " "), "auto_apply = false on a tfe_workspace", transcript(refused));
    const listed = await v1(server, token, `/api/v2/organizations/${organization}/workspaces/provider-eager`);
    assert.is(listed.status, 404);
  } finally {
    await rm(work, { recursive: true, force: true });
    await https.close();
  }
}

const TITLE =
  "tfe_workspace, two tfe_variable and data tfe_workspace apply, re-plan clean, show on /v1 and destroy; auto_apply = true is refused";

if (SOURCE === "" || !existsSync(join(SOURCE, "go.mod"))) {
  for (const dialect of testDialects()) {
    skipTest(
      test,
      `${TITLE} [${dialect}]`,
      SOURCE === ""
        ? "STACKSHIP_TFE_PROVIDER_SRC names no terraform-provider-tfe source checkout"
        : `STACKSHIP_TFE_PROVIDER_SRC=${SOURCE} has no go.mod`,
      {
        allowedInCi:
          "the provider's source is not part of the repository and its registry binaries are not on the Go module proxy",
      },
    );
  }
} else {
  let mirror = "";
  test.before(async () => {
    mirror = (await run("bash", [BUILD], { timeoutMs: 900_000 })).stdout.trim();
  });
  for (const dialect of testDialects()) {
    test(`${TITLE} [${dialect}]`, () => withTestServer(dialect, (server) => scenario(server, mirror)));
  }
}

test.run();
