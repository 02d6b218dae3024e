// Runs every test suite and prints one closing line `N passed, N failed` (CI reads it).
// uvu has no "Failed:" line and exits 0 when nothing matched, so both are handled here.
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const filter = process.argv[2] ?? "\\.test\\.ts$";

function run(label, command, args, parse) {
  return new Promise((resolve) => {
    process.stdout.write(`\n[test] ${label}: ${command} ${args.join(" ")}\n`);
    const child = spawn(command, args, { cwd: root, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
      process.stdout.write(chunk);
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
      process.stderr.write(chunk);
    });
    child.on("close", (code) => resolve(parse(output, code ?? 1)));
  });
}

function parseUvu(output, code) {
  const number = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(output)?.[1] ?? NaN);
  const total = number("Total");
  const passed = number("Passed");
  const skipped = number("Skipped") || 0;
  if (Number.isNaN(total) || Number.isNaN(passed)) return { passed: 0, failed: 1, skipped: 0, note: `uvu exited ${code} without a summary` };
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
results.push(await run("server and client (uvu)", join(root, "node_modules/.bin/uvu"), ["-r", "tsx", ".", filter, "-i", "node_modules", "-i", "generated", "-i", ".tools", "-i", ".stackship"], parseUvu));
const opa = join(root, ".tools/bin/opa");
if (hasRego(join(root, "policies")) && existsSync(opa)) {
  results.push(await run("policies (opa test)", opa, ["test", "policies/", "-v"], parseOpa));
}

const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
for (const r of results) if (r.note) process.stdout.write(`[test] ${r.note}\n`);
if (passed + failed === 0) {
  process.stdout.write("[test] no test ran: that is a failure\n0 passed, 1 failed\n");
  process.exit(1);
}
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 ? 0 : 1);
