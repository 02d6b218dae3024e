import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { runHostTool } from "./host-tools.ts";

// The host tools helper: runs what it is sent, answers each request by its own id (many at once),
// says what failed, and never keeps the runner process alive by itself.
const test = suite("host tools helper");

test("a tool that exits 0 resolves; one that fails rejects with its command line and stderr", async () => {
  await runHostTool("true", []);
  try {
    await runHostTool("sh", ["-c", "echo 'no such mount' >&2; exit 3"]);
    assert.unreachable("a failing tool resolved");
  } catch (error) {
    assert.match((error as Error).message, "sh -c echo 'no such mount' >&2; exit 3: no such mount");
  }
});

test("many requests at once each get their own answer", async () => {
  const outcomes = await Promise.allSettled(
    Array.from({ length: 24 }, (_, i) => runHostTool("sh", ["-c", `sleep 0.0${i % 5}; exit ${i % 3 === 0 ? 1 : 0}`])),
  );
  assert.equal(
    outcomes.map((o) => o.status),
    Array.from({ length: 24 }, (_, i) => (i % 3 === 0 ? "rejected" : "fulfilled")),
  );
});

test("a process that used the helper exits on its own once nothing runs", async () => {
  const module = fileURLToPath(new URL("./host-tools.ts", import.meta.url));
  const script = `import(${JSON.stringify(module)}).then((m) => m.runHostTool("true", [])).then(() => console.log("done"))`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "-e", script], {
    timeout: 20_000,
  });
  assert.is(stdout.trim(), "done");
});

test.run();
