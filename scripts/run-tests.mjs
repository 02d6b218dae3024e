// Runs every test suite and prints one closing line `N passed, N failed` (CI reads it).
// uvu has no "Failed:" line and exits 0 when nothing matched, so both are handled here.
// Processes run side by side: the server and client uvu files in STACKSHIP_TEST_SHARDS (default 2)
// uvu processes of about equal recorded time (scripts/test-shards.mjs; each streamed, its lines
// prefixed `[i/n]`); the dashboard's browser end-to-end scenarios (uvu over web/test/e2e, Chromium
// through playwright-core) and component tests (@web/test-runner over web/src/**/*.test.ts); the
// contract suites (uvu over server/test/contract: the generated Python and Go SDKs driving real
// runs, the prism mock, the schemathesis fuzzing), which mostly wait on child processes. The
// browser and contract suites' output is printed when each finishes. The optional argument filters
// every suite by file path. Each suite's skipped tests are printed, and so is their total; a
// committed `.only(` in a test file about to run fails the run (one failure per call, with the
// file and line), since it would silently skip the rest of its file. Every test uvu or
// @web/test-runner reports as failed is named again just before the closing line, with the first
// lines of its message. A test that cannot run here names itself on a `[skip]` line
// (server/test/support/skips.ts): every one is listed with its reason, and with CI=true one not
// marked as allowed in CI, or one that does not name itself, fails the run. Every uvu test and
// hook has a time limit (scripts/test-timeout.cjs, STACKSHIP_TEST_TIMEOUT_SECONDS, default 600 s):
// a hung one fails naming itself instead of holding the run. Each uvu file's time is printed by
// that preload; the slowest files are named at the end, and STACKSHIP_TEST_DURATIONS_FILE records
// them.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { scanForOnly } from "./only-scan.mjs";
import { failedTests } from "./failure-lines.mjs";
import { namedSkips } from "./skip-lines.mjs";
import { durationsIn, readDurations, shardFiles } from "./test-shards.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const filter = process.argv[2] ?? "\\.test\\.ts$";

/**
 * Runs one suite's process. `stream`: true prints its output as it comes, a string prints it line
 * by line behind that prefix (for suites that stream side by side), false prints it when it ends.
 * `dir` is where its uvu test files' names are relative to (for the duration report).
 */
function run(label, command, args, parse, { stream = true, dir = "." } = {}) {
  return runProcess(label, command, args, parse, { stream }).then((result) => ({ label, dir, ...result }));
}

/** A writer that prints whole lines behind `prefix`, keeping a partial line until it ends. */
function prefixedLines(prefix, write) {
  let pending = "";
  return {
    write(chunk) {
      const lines = (pending + chunk).split("\n");
      pending = lines.pop();
      for (const line of lines) write(`${prefix}${line}\n`);
    },
    end() {
      if (pending) write(`${prefix}${pending}\n`);
      pending = "";
    },
  };
}

function runProcess(label, command, args, parse, { stream }) {
  return new Promise((resolve) => {
    const banner = `\n[test] ${label}: ${command} ${args.join(" ")}\n`;
    if (stream === false) process.stdout.write(`\n[test] ${label}: started (output follows when it ends)\n`);
    else
      process.stdout.write(
        typeof stream === "string" ? banner.slice(0, 2000) + (banner.length > 2000 ? "…\n" : "") : banner,
      );
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const prefix = typeof stream === "string" ? stream : "";
    const out = prefixedLines(prefix, (text) => process.stdout.write(text));
    const err = prefixedLines(prefix, (text) => process.stderr.write(text));
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (stream === true) process.stdout.write(chunk);
      else if (stream) out.write(String(chunk));
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
      if (stream === true) process.stderr.write(chunk);
      else if (stream) err.write(String(chunk));
    });
    child.on("close", (code) => {
      out.end();
      err.end();
      if (stream === false) process.stdout.write(`${banner}${output}\n[test] ${label}: done\n`);
      resolve({
        ...parse(output, code ?? 1),
        named: namedSkips(output),
        failures: failedTests(output),
        durations: durationsIn(output),
      });
    });
  });
}

/** Test files under `dir` (relative to the root) whose path matches `pattern` and the filter. */
function testFiles(dir, pattern) {
  const base = join(root, dir);
  if (!existsSync(base)) return [];
  const filterRe = new RegExp(filter, "i");
  return readdirSync(base, { recursive: true })
    .map((file) => join(dir, String(file)).split("\\").join("/"))
    .filter((file) => pattern.test(file) && filterRe.test(file))
    .sort();
}

/** @web/test-runner's summary: the last "N passed, N failed" it printed. */
function parseWtr(output, code) {
  const matches = [...output.matchAll(/(\d+) passed, (\d+) failed(?:, (\d+) skipped)?/g)];
  const last = matches.at(-1);
  if (!last) return { passed: 0, failed: 1, skipped: 0, note: `@web/test-runner exited ${code} without a summary` };
  const passed = Number(last[1]);
  const failed = Number(last[2]);
  return { passed, failed: failed + (code !== 0 && failed === 0 ? 1 : 0), skipped: Number(last[3] ?? 0) };
}

// Every uvu run: TypeScript through tsx, and a per-test timeout (scripts/test-timeout.cjs).
const UVU_PRELOAD = ["-r", "tsx", "-r", join(root, "scripts/test-timeout.cjs")];

const CHROMIUM = process.env.STACKSHIP_CHROMIUM || "/usr/lib/chromium/chromium";

function parseUvu(output, code) {
  const number = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(output)?.[1] ?? NaN);
  const total = number("Total");
  const passed = number("Passed");
  const skipped = number("Skipped") || 0;
  if (Number.isNaN(total) || Number.isNaN(passed))
    return { passed: 0, failed: 1, skipped: 0, note: `uvu exited ${code} without a summary` };
  return { passed, failed: total - passed + (code !== 0 && total === passed ? 1 : 0), skipped };
}

function parseOpa(output, code) {
  const pass = Number(/PASS:\s+(\d+)\/(\d+)/.exec(output)?.[1] ?? 0);
  const total = Number(/PASS:\s+\d+\/(\d+)/.exec(output)?.[1] ?? /FAIL:\s+\d+\/(\d+)/.exec(output)?.[1] ?? 0);
  return { passed: pass, failed: Math.max(total - pass, code === 0 ? 0 : 1), skipped: 0 };
}

function hasRego(dir) {
  if (!existsSync(dir)) return false;
  return readdirSync(dir, { recursive: true }).some((f) => String(f).endsWith(".rego"));
}

const results = [];
// Every test file some suite below runs (uvu's own ignores: node_modules, generated, .tools, .stackship).
const ignored = /(^|\/)(node_modules|generated|\.tools|\.stackship)(\/|$)/;
const scanned = [
  ...new Set(
    ["server", "client", "scripts", "web/test/e2e", "web/src"].flatMap((dir) => testFiles(dir, /\.test\.ts$/)),
  ),
].filter((file) => !ignored.test(file));
const focused = scanForOnly(root, scanned);
for (const hit of focused)
  process.stdout.write(
    `[test] ${hit.file}:${hit.line}: a committed ${hit.call} skips the rest of its file: remove it\n`,
  );
if (focused.length > 0)
  results.push({
    label: "committed .only( calls",
    passed: 0,
    failed: focused.length,
    skipped: 0,
    note: `${focused.length} committed .only( call(s) in ${new Set(focused.map((hit) => hit.file)).size} test file(s) (listed above)`,
  });
// The server and client uvu files (everything but web/ and the contract suites), in shards of
// about equal recorded time (scripts/test-shards.mjs), one uvu process each.
const SHARDS = Number(process.env.STACKSHIP_TEST_SHARDS || 2);
if (!Number.isInteger(SHARDS) || SHARDS < 1 || SHARDS > 16) {
  process.stdout.write(
    `[test] STACKSHIP_TEST_SHARDS=${process.env.STACKSHIP_TEST_SHARDS} is not a whole number from 1 to 16 (default 2)\n0 passed, 1 failed\n`,
  );
  process.exit(1);
}
const serverFiles = scanned.filter((file) => !/^(web|server\/test\/contract)\//.test(file));
const DURATIONS = join(root, "scripts/test-durations.json");
const shards = serverFiles.length > 0 ? shardFiles(serverFiles, readDurations(DURATIONS), SHARDS) : [];
const suites = shards.map((shard, index) => {
  const label =
    shards.length === 1 ? "server and client (uvu)" : `server and client (uvu), shard ${index + 1} of ${shards.length}`;
  const names = shard.files.map((file) => file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return run(label, join(root, "node_modules/.bin/uvu"), [...UVU_PRELOAD, ".", `^(${names.join("|")})$`], parseUvu, {
    stream: shards.length === 1 ? true : `[${index + 1}/${shards.length}] `,
  });
});
const contract = testFiles("server/test/contract", /\.test\.ts$/);
if (contract.length > 0) {
  const names = contract.map((file) =>
    file.slice("server/test/contract/".length).replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
  );
  suites.push(
    run(
      "contract: SDKs, mock, fuzzing (uvu)",
      join(root, "node_modules/.bin/uvu"),
      [...UVU_PRELOAD, "server/test/contract", `^(${names.join("|")})$`],
      parseUvu,
      { stream: false, dir: "server/test/contract" },
    ),
  );
}
const e2e = testFiles("web/test/e2e", /\.test\.ts$/);
const components = testFiles("web/src", /\.test\.ts$/);
if ((e2e.length > 0 || components.length > 0) && !existsSync(CHROMIUM)) {
  results.push({
    label: "dashboard browser suites",
    passed: 0,
    failed: 1,
    skipped: 0,
    note: `Chromium is not at ${CHROMIUM} (apt-get install chromium, or set STACKSHIP_CHROMIUM): the dashboard's browser suites could not run`,
  });
} else {
  if (e2e.length > 0) {
    const names = e2e.map((file) => file.slice("web/test/e2e/".length).replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    suites.push(
      run(
        "dashboard end-to-end (uvu + Chromium)",
        join(root, "node_modules/.bin/uvu"),
        [...UVU_PRELOAD, "web/test/e2e", `^(${names.join("|")})$`],
        parseUvu,
        { stream: false, dir: "web/test/e2e" },
      ),
    );
  }
  if (components.length > 0) {
    suites.push(
      run(
        "dashboard components (@web/test-runner + Chromium)",
        join(root, "node_modules/.bin/web-test-runner"),
        ["--config", "web/web-test-runner.config.mjs", "--static-logging", ...components],
        parseWtr,
        { stream: false },
      ),
    );
  }
}
results.push(...(await Promise.all(suites)));
const opa = join(root, ".tools/bin/opa");
if (hasRego(join(root, "policies")) && existsSync(opa)) {
  results.push(await run("policies (opa test)", opa, ["test", "policies/", "-v"], parseOpa));
}

// Every skipped test is named with its reason; with CI=true a skip CI is not expected to need fails the run.
const named = results.flatMap((r) => r.named ?? []);
for (const skip of named)
  process.stdout.write(
    `[test] skipped: ${skip.title} — ${skip.reason}${skip.allowedInCi ? ` (allowed in CI: ${skip.allowedInCi})` : ""}\n`,
  );
const unnamed = results.reduce((n, r) => n + r.skipped, 0) - named.length;
if (unnamed > 0)
  process.stdout.write(
    `[test] ${unnamed} skipped test(s) did not name themselves (use skipTest from server/test/support/skips.ts)\n`,
  );
if (process.env.CI === "true") {
  if (unnamed > 0)
    results.push({
      label: "unnamed skips on the CI machine",
      passed: 0,
      failed: unnamed,
      skipped: 0,
      note: `CI=true and ${unnamed} test(s) skipped without naming themselves or a reason: make them use skipTest`,
    });
  const unexpected = named.filter((skip) => !skip.allowedInCi);
  if (unexpected.length > 0)
    results.push({
      label: "skips on the CI machine",
      passed: 0,
      failed: unexpected.length,
      skipped: 0,
      note: `CI=true and ${unexpected.length} test(s) skipped that this machine is expected to run (listed above): install what they name`,
    });
}

// How long each test file took: the slowest are named; STACKSHIP_TEST_DURATIONS_FILE records all
// of them (merged into what that file held) for the next run's shards.
const durations = Object.fromEntries(
  results.flatMap((r) =>
    Object.entries(r.durations ?? {}).map(([file, seconds]) => [r.dir === "." ? file : `${r.dir}/${file}`, seconds]),
  ),
);
const slowest = Object.entries(durations)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 12);
if (slowest.length > 0)
  process.stdout.write(
    `\n[test] slowest test files:\n${slowest.map(([file, s]) => `  ${s.toFixed(0).padStart(5)} s  ${file}\n`).join("")}`,
  );
for (const [index, shard] of shards.entries())
  process.stdout.write(
    `[test] server and client shard ${index + 1}: ${shard.files.length} file(s), ${shard.files.reduce((n, file) => n + (durations[file] ?? 0), 0).toFixed(0)} s (${shard.seconds.toFixed(0)} s recorded)\n`,
  );
if (process.env.STACKSHIP_TEST_DURATIONS_FILE) {
  const file = process.env.STACKSHIP_TEST_DURATIONS_FILE;
  const merged = { ...readDurations(file), ...durations };
  writeFileSync(file, `${JSON.stringify(Object.fromEntries(Object.entries(merged).sort()), null, 2)}\n`);
  process.stdout.write(`[test] wrote ${Object.keys(merged).length} file durations to ${file}\n`);
}

const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
const skipped = results.reduce((n, r) => n + r.skipped, 0);
for (const r of results) if (r.note) process.stdout.write(`[test] ${r.note}\n`);
// Each failed test again, next to the closing line: a log cut short at its start still names them.
for (const r of results)
  for (const f of r.failures ?? [])
    process.stdout.write(
      `[test] failed in ${r.label}: ${f.file ?? "(file not named)"} › ${f.suite ? `${f.suite} › ` : ""}"${f.title}"\n${f.message.map((line) => `         ${line}\n`).join("")}`,
    );
process.stdout.write("\n");
for (const r of results)
  process.stdout.write(`[test] ${r.label}: ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped\n`);
process.stdout.write(`[test] skipped in total: ${skipped}\n`);
if (passed + failed === 0) {
  process.stdout.write("[test] no test ran: that is a failure\n0 passed, 1 failed\n");
  process.exit(1);
}
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 ? 0 : 1);
