// `npm run mock` / `task mock`: a mock of the native API, prism with dynamic examples on the
// bundled spec (generated/v1/openapi.json), for developing the dashboard or an integration without
// a server. Requests are validated (a bad one gets 422 application/problem+json with the
// violations); `Prefer: code=404` picks a declared status. STACKSHIP_MOCK_PORT (default 4010) and
// STACKSHIP_MOCK_HOST (default 127.0.0.1) choose where it listens; other arguments go to prism.
//
// One adaptation: prism's generator (json-schema-faker) fakes `format: date-time` ignoring the
// schema's `pattern`, so its timestamps would break the spec's own millisecond-and-Z rule. Each
// timestamp schema is handed to prism as an `enum` (without `format` and `pattern`) of a few timestamps that satisfy it (its
// example first); the served documents still validate against the unchanged spec.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const spec = JSON.parse(readFileSync(join(root, "generated/v1/openapi.json"), "utf8"));
const SAMPLES = ["2026-12-02T15:01:38.123Z", "2026-11-30T08:12:05.004Z", "2027-01-15T23:59:59.999Z"];

function adapt(node) {
  if (Array.isArray(node)) return node.forEach(adapt);
  if (!node || typeof node !== "object") return;
  if (node.format === "date-time" && node.type === "string" && !node.enum) {
    const pattern = node.pattern ? new RegExp(node.pattern, "u") : null;
    node.enum = [
      ...new Set([node.example, ...SAMPLES].filter((v) => typeof v === "string" && (!pattern || pattern.test(v)))),
    ];
    // json-schema-faker consults `format` and `pattern` before `enum`; every sample meets both.
    delete node.format;
    delete node.pattern;
  }
  for (const value of Object.values(node)) adapt(value);
}
adapt(spec.components?.schemas);
adapt(spec.paths);

const file = join(mkdtempSync(join(tmpdir(), "stackship-mock-")), "openapi.json");
writeFileSync(file, JSON.stringify(spec));
const args = [
  "mock",
  file,
  "--dynamic",
  "--host",
  process.env.STACKSHIP_MOCK_HOST || "127.0.0.1",
  "--port",
  process.env.STACKSHIP_MOCK_PORT || "4010",
  ...process.argv.slice(2),
];
const prism = spawn(join(root, "node_modules/.bin/prism"), args, { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => prism.kill(signal));
prism.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
