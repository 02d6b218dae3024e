// The generated Python SDK (generated/sdk/python) against a real server with real runs
// (bubblewrap + tofu): server/test/fixtures/sdk/python/smoke.py drives one run to `applied` and pages the
// inventory. Set-up: a venv under .stackship-test/ (python3 -m venv), then `pip install` of a copy
// of the SDK (its dependencies from PyPI on the first run, cached by pip after that).
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import { REPO_ROOT } from "../../src/config.ts";
import { expectSmokeApplies, run } from "./smoke-support.ts";

const test = suite("python sdk");
const VENV = join(REPO_ROOT, ".stackship-test/python-sdk-venv");

async function pythonWithSdk(): Promise<string> {
  const python = join(VENV, "bin/python");
  if (!existsSync(python)) {
    await mkdir(join(REPO_ROOT, ".stackship-test"), { recursive: true });
    await run("python3", ["-m", "venv", VENV]);
  }
  // A copy: pip's build leaves build/ and *.egg-info in the directory it installs from.
  const copy = join(await mkdtemp(join(tmpdir(), "ss-python-sdk-")), "python");
  await cp(join(REPO_ROOT, "generated/sdk/python"), copy, { recursive: true });
  await run(python, [
    "-m",
    "pip",
    "install",
    "--quiet",
    "--disable-pip-version-check",
    "--force-reinstall",
    "--no-deps",
    copy,
  ]);
  await run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", copy]);
  return python;
}

test("stackship_client drives a run to applied: token, workspace, upload, review, plan changes, approval by digest, inventory pages", async () => {
  const python = await pythonWithSdk();
  await expectSmokeApplies(
    python,
    [join(REPO_ROOT, "server/test/fixtures/sdk/python/smoke.py")],
    "python-sdk",
    "python sdk smoke",
  );
});

test.run();
