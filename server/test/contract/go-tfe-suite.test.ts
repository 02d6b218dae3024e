// go-tfe's own integration tests (v1.101.0 from the Go module proxy, unpatched) against a test
// server over HTTPS with its generated local CA (SSL_CERT_FILE) and the deployment
// administrator's token: scripts/go-tfe-suite/run.sh runs each test of its allowlist.txt in its
// own process, and every allowlisted go test is one counted test here, per database.
// Bounded: the first build of go-tfe's test binary takes about a minute (cached under .tools/build
// and the Go build cache afterwards); a run of the allowlist takes about 10 s per database.
import { readFileSync } from "node:fs";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { REPO_ROOT } from "../../src/config.ts";
import { listenOverHttps } from "../support/https-listener.ts";
import type { Dialect } from "../../src/store/db.ts";
import { testDialects } from "../support/databases.ts";
import { withTestServer } from "../support/test-server.ts";
import { run } from "./smoke-support.ts";

const SCRIPT = join(REPO_ROOT, "scripts/go-tfe-suite/run.sh");
const ALLOWLIST = join(REPO_ROOT, "scripts/go-tfe-suite/allowlist.txt");

/** The go tests the allowlist expects to pass (lines without a leading `-`). */
export function allowedTests(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter((line) => line !== "" && !line.startsWith("-"))
    .map((line) => line.split(/\s+/)[0]);
}

interface Outcome {
  result: string;
  log: string;
}

const allowed = allowedTests(readFileSync(ALLOWLIST, "utf8"));
const outcomes = new Map<Dialect, Map<string, Outcome>>();
const failures = new Map<Dialect, string>();

// Building go-tfe's tests and running them take up to 15 min each on a cold cache (scripts/test-timeout.cjs).
const test = suite("go-tfe integration tests (scripts/go-tfe-suite)", { timeoutSeconds: 2400 });

test.before(async () => {
  await run("bash", [SCRIPT, "--build"], { timeoutMs: 900_000 });
  for (const dialect of testDialects()) {
    try {
      outcomes.set(dialect, await runSuite(dialect));
    } catch (error) {
      failures.set(dialect, error instanceof Error ? error.message : String(error));
    }
  }
});

/** Starts a test server with an HTTPS listener and runs the allowlist against it. */
async function runSuite(dialect: Dialect): Promise<Map<string, Outcome>> {
  return withTestServer(
    dialect,
    async (server) => {
      const https = await listenOverHttps(server);
      const tls = https.tls;
      const logs = await mkdtemp(join(tmpdir(), "ss-go-tfe-suite-"));
      try {
        const env = {
          ...process.env,
          TFE_ADDRESS: `https://localhost:${https.port}`,
          TFE_TOKEN: server.bootstrapToken,
          SSL_CERT_FILE: tls.bundleFile,
          GO_TFE_SUITE_LOGS: logs,
        };
        // A failed go test makes the script exit 1; its per-test lines are what is judged here.
        const output = await run("bash", [SCRIPT], { env, timeoutMs: 900_000 }).then(
          (finished) => finished.stdout,
          (error: unknown) => (error instanceof Error ? error.message : String(error)),
        );
        const results = new Map<string, Outcome>();
        for (const match of output.matchAll(/^(PASS|FAIL|SKIP) (\S+) \d+$/gm)) {
          const name = match[2];
          const log = await readFile(join(logs, `${name}.log`), "utf8").catch(() => "(no log)");
          results.set(name, { result: match[1], log });
        }
        return results;
      } finally {
        await https.close();
      }
    },
    { runner: true },
  );
}

/** The part of a go test's verbose output that explains a failure. */
function explain(log: string): string {
  return log
    .split("\n")
    .filter((line) => !/^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|SKIP))/.test(line))
    .slice(0, 80)
    .join("\n");
}

test("the allowlist names tests and no test twice", () => {
  assert.ok(allowed.length >= 30, `only ${allowed.length} allowlisted tests`);
  assert.is(new Set(allowed).size, allowed.length);
  for (const name of allowed) assert.match(name, /^Test[A-Za-z0-9_]+$/);
});

for (const dialect of testDialects()) {
  for (const name of allowed) {
    test(`${name} [${dialect}]`, () => {
      const failure = failures.get(dialect);
      if (failure) assert.unreachable(`the suite did not run on ${dialect}: ${failure}`);
      const outcome = outcomes.get(dialect)?.get(name);
      assert.ok(outcome, `run.sh reported nothing for ${name}`);
      assert.is(outcome.result, "PASS", `${name} ${outcome.result} on ${dialect}:\n${explain(outcome.log)}`);
    });
  }
}

test.run();
