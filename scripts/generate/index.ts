/**
 * `npm run generate` / `task generate`: the only writer of generated/.
 * For each API surface: bundle the spec (Redocly), then emit types (openapi-typescript), the
 * SDK (@hey-api/openapi-ts), ajv standalone validators, the operation table and the Handlers
 * type. Then the API reference pages (Redocly build-docs, scripts inlined) into generated/docs/
 * and the Python and Go SDKs (openapi-generator, scripts/generate/sdks.ts) into generated/sdk/.
 * Output is byte-stable, so CI can diff it.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { emitOperationTable, readOperations } from "./operations.ts";
import { emitValidators } from "./validators.ts";
import { emitTypes, emitSdk } from "./typescript.ts";
import { emitSdks } from "./sdks.ts";
import { BANNER, type BundledSpec, type Surface } from "./common.ts";
import { OPERATION_REQUIREMENTS } from "../../server/src/domain/authorization.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const surfaces: Surface[] = [
  { name: "v1", strictQuery: true },
  { name: "tfe", strictQuery: false },
];

function log(message: string) {
  process.stdout.write(`[generate] ${message}\n`);
}

function bundle(surface: Surface): BundledSpec {
  const out = join(root, "generated", surface.name, "openapi.json");
  execFileSync(
    join(root, "node_modules/.bin/redocly"),
    ["bundle", join(root, "spec", surface.name, "openapi.yaml"), "-o", out, "--ext", "json"],
    {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    },
  );
  const spec = JSON.parse(readFileSync(out, "utf8")) as BundledSpec;
  // Re-serialise with a trailing newline so the committed file is stable and diff-friendly.
  writeFileSync(out, JSON.stringify(spec, null, 2) + "\n");
  return spec;
}

function emitErrorCodes() {
  const catalogue = parseYaml(readFileSync(join(root, "spec/v1/error-codes.yaml"), "utf8")) as Record<
    string,
    { status: number; title: string }
  >;
  const rows = Object.entries(catalogue)
    .map(([code, { status, title }]) => `  ${code}: { status: ${status}, title: ${JSON.stringify(title)} },`)
    .join("\n");
  writeFileSync(
    join(root, "generated/v1/error-codes.gen.ts"),
    `${BANNER}\n/** The v1 error-code catalogue from spec/v1/error-codes.yaml. */\nexport const errorCodes = {\n${rows}\n} as const;\n\nexport type ErrorCodeName = keyof typeof errorCodes;\n`,
  );
}

/** generated/operation-table.ts: the shape every operations.gen.ts satisfies. */
function emitOperationTableShape() {
  writeFileSync(
    join(root, "generated/operation-table.ts"),
    `${BANNER}
import type { Validator } from "./v1/validators.gen.js";

/** What an operation's x-stackship-permission may say (server/src/domain/authorization.ts). */
export type OperationRequirement = ${OPERATION_REQUIREMENTS.map((r) => JSON.stringify(r)).join(" | ")};

/** One operation as the server's router sees it. */
export interface OperationDescriptor {
  operationId: string;
  method: "GET" | "PUT" | "POST" | "PATCH" | "DELETE";
  path: string;
  /** Enforced by the operation binding before the handler runs. */
  permission: OperationRequirement;
  /** A run token may call it whatever its grants; the handler applies the run rules. */
  runToken: boolean;
  authenticated: boolean;
  validatePath: Validator;
  validateQuery: Validator;
  /** With raw, the handler receives the unparsed bytes (at most maxBytes, else tooLargeCode) and nothing is validated before it. */
  requestBody: { contentType: string; required: boolean; validate: Validator | null; raw?: { maxBytes: number; tooLargeCode: string } } | null;
  responses: Record<number, { contentType: string | null; validate: Validator | null }>;
}

export type OperationTable = readonly OperationDescriptor[];
`,
  );
}

/** generated/docs/<surface>.html: a self-contained reference page (no CDN), served at /docs. */
function emitReference(surface: Surface) {
  const out = join(root, "generated/docs", `${surface.name}.html`);
  execFileSync(
    join(root, "node_modules/.bin/redocly"),
    [
      "build-docs",
      join(root, "generated", surface.name, "openapi.json"),
      "-o",
      out,
      "--inlineBundle",
      "--lint-config",
      "off",
    ],
    {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    },
  );
}

async function main() {
  emitOperationTableShape();
  rmSync(join(root, "generated/docs"), { recursive: true, force: true });
  mkdirSync(join(root, "generated/docs"), { recursive: true });
  const bundled: Partial<Record<Surface["name"], BundledSpec>> = {};
  for (const surface of surfaces) {
    const dir = join(root, "generated", surface.name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    log(`${surface.name}: bundling spec/${surface.name}/openapi.yaml`);
    const spec = bundle(surface);
    const operations = readOperations(spec);
    log(`${surface.name}: ${operations.length} operations → types, SDK, validators, operation table`);
    await emitTypes(spec, join(dir, "types.gen.ts"));
    await emitSdk(join(dir, "openapi.json"), join(dir, "client"));
    emitValidators(surface, spec, operations, dir);
    emitOperationTable(surface, operations, dir);
    log(`${surface.name}: reference page → generated/docs/${surface.name}.html`);
    emitReference(surface);
    bundled[surface.name] = spec;
  }
  emitErrorCodes();
  emitSdks({ root, spec: bundled.v1!, log });
  log("done");
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
