// The generated Go SDK (generated/sdk/go) against a real server with real runs (bubblewrap +
// tofu): server/test/fixtures/sdk/go/main.go drives one run to `applied` and pages the inventory.
// Built with the machine's Go from a copy of the fixture module whose `replace` points at
// generated/sdk/go (GOFLAGS=-mod=mod; module downloads come from the Go module proxy).
import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import { REPO_ROOT } from "../../src/config.ts";
import { expectSmokeApplies, run } from "./smoke-support.ts";

const test = suite("go sdk");

/** Builds the smoke program; the copy keeps go.sum updates out of the repository. */
async function buildSmoke(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "ss-go-sdk-"));
  const module = join(dir, "smoke");
  await cp(join(REPO_ROOT, "server/test/fixtures/sdk/go"), module, { recursive: true });
  const gomod = await readFile(join(module, "go.mod"), "utf8");
  await writeFile(
    join(module, "go.mod"),
    gomod.replace(/=> \S+generated\/sdk\/go/, `=> ${join(REPO_ROOT, "generated/sdk/go")}`),
  );
  const binary = join(dir, "smoke-bin");
  await run("go", ["build", "-o", binary, "."], {
    cwd: module,
    env: { ...process.env, GOFLAGS: "-mod=mod", CGO_ENABLED: "0" },
  });
  return binary;
}

test("package stackship drives a run to applied: token, workspace, upload, review, plan changes, approval by digest, inventory pages", async () => {
  const binary = await buildSmoke();
  await expectSmokeApplies(binary, [], "go-sdk", "go sdk smoke");
});

test.run();
