import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { inflateRawSync } from "node:zlib";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { REPO_ROOT } from "../config.ts";
import { cloudBackendMessage, replaceField, withCloudBackend } from "./plan-backend.ts";

// The saved plan of a local-backend plan, its recorded backend set to the cloud block (real tofu).
const backend = suite("plan file backend rewrite");
const tofu = path.join(REPO_ROOT, ".tools/bin/tofu");

function localPlan(dir: string): Buffer {
  writeFileSync(
    path.join(dir, "main.tf"),
    'terraform {\n  backend "local" {\n    path = "state/terraform.tfstate"\n  }\n}\nresource "terraform_data" "a" {\n  input = "one"\n}\noutput "o" {\n  value = "x"\n}\n',
  );
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: dir,
    TF_IN_AUTOMATION: "1",
    CHECKPOINT_DISABLE: "1",
    TF_CLI_CONFIG_FILE: "/dev/null",
  };
  execFileSync(tofu, ["init", "-input=false", "-no-color"], { cwd: dir, env, stdio: "ignore" });
  execFileSync(tofu, ["plan", "-input=false", "-no-color", "-lock=false", "-out=plan.tfplan"], {
    cwd: dir,
    env,
    stdio: "ignore",
  });
  return readFileSync(path.join(dir, "plan.tfplan"));
}

/** The `tfplan` entry of a zip with one local header per entry (what withCloudBackend writes). */
function tfplanEntry(zip: Buffer): Buffer {
  for (let at = 0; zip.readUInt32LE(at) === 0x04034b50;) {
    const size = zip.readUInt32LE(at + 18);
    const nameLength = zip.readUInt16LE(at + 26);
    const start = at + 30 + nameLength + zip.readUInt16LE(at + 28);
    if (zip.subarray(at + 30, at + 30 + nameLength).toString() === "tfplan")
      return inflateRawSync(zip.subarray(start, start + size));
    at = start + size;
  }
  throw new Error("no tfplan entry");
}

backend("tofu reads the rewritten plan exactly as before; it records the cloud backend once", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ss-plan-backend-"));
  try {
    const original = localPlan(dir);
    const rewritten = withCloudBackend(original, "acme", "app");
    writeFileSync(path.join(dir, "rewritten.tfplan"), rewritten);
    const show = (file: string) =>
      execFileSync(tofu, ["show", "-json", file], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: dir, TF_CLI_CONFIG_FILE: "/dev/null" },
      }).toString();
    assert.is(show("rewritten.tfplan"), show("plan.tfplan"));
    const tfplan = tfplanEntry(rewritten);
    const message = cloudBackendMessage("acme", "app");
    assert.is(tfplan.indexOf(message), tfplan.length - message.length);
    assert.is(tfplan.indexOf(Buffer.from("state/terraform.tfstate")), -1);
    assert.ok(message.includes(Buffer.from("stackship.internal")));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

backend("a message without a backend, or a file that is not a zip, is refused", () => {
  assert.throws(() => replaceField(Buffer.from([0x08, 0x03]), 13, Buffer.alloc(0)), /records no backend/);
  assert.throws(() => withCloudBackend(Buffer.from("not a plan"), "acme", "app"), /not a zip archive/);
});

backend.run();
