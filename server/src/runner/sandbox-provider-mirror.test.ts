import { createHash } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { SANDBOX_TOOLS_DIR } from "./sandbox.ts";
import { attemptDirectoryPerCase, runCollecting } from "./sandbox-test-support.ts";
import { cliConfig, PROVIDER_SOURCE_ENV } from "./tofu-files.ts";

// Issue 25 part 5, the sandbox door: whatever reaches the configuration's directory (the upload
// door refuses `.terraform/`, tar-inspection.ts; here the files are put there directly), providers
// come only from StackShip's read-only mirror. A shadowing "provider" (a shell script that leaves a
// marker) in `.terraform/providers/…` with a lock file pinning its hash, or in a plugin cache a
// workspace variable names, is never run: tofu's data directory is outside the configuration
// (TF_DATA_DIR), there is no plugin cache, and the lock file's hash then matches no package of the
// mirror, so init refuses.
const mirror = suite("sandbox: providers only from the mirror");
const tmpDir = attemptDirectoryPerCase(mirror, "ss-provider-mirror-");
const toolsDir = fileURLToPath(new URL("../../../.tools", import.meta.url));

const VERSION = "3.9.0";
const PACKAGE_DIR = `registry.opentofu.org/hashicorp/random/${VERSION}/linux_amd64`;
const BINARY = `terraform-provider-random_v${VERSION}`;
const SHADOW = "#!/bin/sh\necho shadow-provider-ran >> /work/shadow-marker\nexit 1\n";

/** tofu's `h1:` hash of a package directory holding exactly `files` (dirhash Hash1). */
function h1(files: Record<string, string>): string {
  const sha = (data: string) => createHash("sha256").update(data).digest("hex");
  const summary = Object.keys(files)
    .sort()
    .map((name) => `${sha(files[name])}  ${name}\n`)
    .join("");
  return `h1:${createHash("sha256").update(summary).digest("base64")}`;
}

const lockFile = `provider "registry.opentofu.org/hashicorp/random" {
  version     = "${VERSION}"
  constraints = "${VERSION}"
  hashes      = ["${h1({ [BINARY]: SHADOW })}"]
}
`;
const mainTf = `terraform {\n  required_providers {\n    random = {\n      source  = "hashicorp/random"\n      version = "${VERSION}"\n    }\n  }\n}\nresource "random_id" "x" {\n  byte_length = 4\n}\n`;

/** Runs tofu init and plan in `cfg` the way a phase does, with `env` (the attacker's part) first. */
async function planWith(env: Record<string, string>) {
  const result = await runCollecting({
    tmpDir: tmpDir(),
    argv: [
      "sh",
      "-c",
      "cd cfg && chmod 755 .terraform/providers/*/*/*/*/*/* cache/*/*/*/*/*/* && tofu init -input=false -no-color && tofu plan -input=false -no-color -lock=false",
    ],
    files: {
      "cli.tfrc": cliConfig("not-a-token"),
      "cfg/main.tf": mainTf,
      "cfg/.terraform.lock.hcl": lockFile,
      [`cfg/.terraform/providers/${PACKAGE_DIR}/${BINARY}`]: SHADOW,
      [`cfg/cache/${PACKAGE_DIR}/${BINARY}`]: SHADOW,
    },
    env: {
      PATH: `${SANDBOX_TOOLS_DIR}/bin:/usr/bin:/bin`,
      HOME: "/work",
      TF_IN_AUTOMATION: "1",
      CHECKPOINT_DISABLE: "1",
      ...env,
    },
    readOnlyBinds: [{ source: toolsDir, target: SANDBOX_TOOLS_DIR }],
    collect: ["shadow-marker"],
    timeoutMs: 120_000,
  });
  return { result, output: result.stdout + result.stderr, marker: result.files["shadow-marker"] };
}

mirror(
  "the attack as it worked: without the runner's environment tofu init reuses the shadowing binary and plan runs it",
  async () => {
    const { output, marker } = await planWith({ TF_CLI_CONFIG_FILE: "/work/cli.tfrc" });
    assert.match(output, /Using previously-installed hashicorp\/random v3\.9\.0/);
    assert.is(marker?.toString("utf8").trim().split("\n")[0], "shadow-provider-ran", output);
  },
);

mirror(
  "with the runner's environment (also over a workspace's TF_DATA_DIR and TF_PLUGIN_CACHE_DIR): the shadowing binary never runs, init refuses the lock file's hash",
  async () => {
    for (const attacker of [
      {} as Record<string, string>,
      {
        TF_DATA_DIR: "/work/cfg/.terraform",
        TF_PLUGIN_CACHE_DIR: "/work/cfg/cache",
        TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE: "1",
      },
    ]) {
      const { result, output, marker } = await planWith({ ...attacker, ...PROVIDER_SOURCE_ENV });
      assert.is(marker, null, `the shadowing provider ran: ${output}`);
      assert.is.not(result.exitCode, 0, output);
      assert.not.match(output, /previously-installed/);
      assert.match(output, /checksum|doesn't match|does not match/i, output);
    }
  },
);

mirror("with the runner's environment and an honest lock file, the provider is installed from the mirror", async () => {
  const result = await runCollecting({
    tmpDir: tmpDir(),
    argv: ["sh", "-c", "cd cfg && tofu init -input=false -no-color && tofu plan -input=false -no-color -lock=false"],
    files: {
      "cli.tfrc": cliConfig("not-a-token"),
      "cfg/main.tf": mainTf,
      [`cfg/.terraform/providers/${PACKAGE_DIR}/${BINARY}`]: SHADOW,
    },
    env: {
      PATH: `${SANDBOX_TOOLS_DIR}/bin:/usr/bin:/bin`,
      HOME: "/work",
      TF_IN_AUTOMATION: "1",
      ...PROVIDER_SOURCE_ENV,
    },
    readOnlyBinds: [{ source: toolsDir, target: SANDBOX_TOOLS_DIR }],
    collect: ["shadow-marker"],
    timeoutMs: 120_000,
  });
  assert.is(result.exitCode, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /Installed hashicorp\/random v3\.9\.0/);
  assert.match(result.stdout, /Plan: 1 to add/);
  assert.is(result.files["shadow-marker"], null);
  assert.ok(path.isAbsolute(PROVIDER_SOURCE_ENV.TF_DATA_DIR));
});

mirror.run();
