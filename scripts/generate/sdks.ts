/**
 * The Python and Go SDKs (generated/sdk/python, generated/sdk/go), made by openapi-generator
 * (@openapitools/openapi-generator-cli; the JAR version is pinned in openapitools.json and kept in
 * .tools/openapi-generator, fetched by scripts/bootstrap-tools).
 *
 * openapi-generator's OpenAPI 3.1 support is partial (its Python generator aborts on a
 * `{ type: "null" }` member of a oneOf), so it reads a 3.0.3 rendition of the bundled v1 spec
 * made here: `type: [T, "null"]` and `oneOf/anyOf [X, {type: "null"}]` become `nullable`,
 * `const` becomes a one-value `enum`, and `$defs` move to components. The wire format is the
 * same; only how nullability is spelled changes.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

type Json = any;

const DEFS_PREFIX = "#/components/schemas/";

/** A deep copy of `spec` in OpenAPI 3.0.3 terms (see the file comment). */
export function downlevelTo30(spec: Json): Json {
  const out = structuredClone(spec);
  out.openapi = "3.0.3";
  delete out.jsonSchemaDialect;
  const schemas: Record<string, Json> = out.components?.schemas ?? {};
  // $defs inside a component schema: hoisted next to it, references rewritten.
  const renames = new Map<string, string>();
  for (const [name, schema] of Object.entries(schemas)) {
    if (!schema || typeof schema !== "object" || !schema.$defs) continue;
    for (const [def, body] of Object.entries(schema.$defs as Record<string, Json>)) {
      const target = schemas[def] ? `${name.replace(/[^A-Za-z0-9]/g, "_")}_${def}` : def;
      schemas[target] = body;
      renames.set(`${DEFS_PREFIX}${name}/$defs/${def}`, `${DEFS_PREFIX}${target}`);
    }
    delete schema.$defs;
  }
  const isNull = (s: Json) => s && typeof s === "object" && s.type === "null" && Object.keys(s).length === 1;
  const visit = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(visit);
    if (!node || typeof node !== "object") return node;
    const result: Json = {};
    for (const [key, value] of Object.entries(node)) result[key] = visit(value);
    if (typeof result.$ref === "string" && renames.has(result.$ref)) result.$ref = renames.get(result.$ref);
    delete result.$schema;
    delete result.$id;
    delete result.dependentRequired;
    if (Array.isArray(result.examples)) {
      if (result.example === undefined && result.examples.length > 0 && !("in" in result) && !("content" in result)) result.example = result.examples[0];
      if (!("in" in result) && !("content" in result)) delete result.examples;
    }
    if ("const" in result) {
      result.enum = [result.const];
      delete result.const;
    }
    if (Array.isArray(result.type)) {
      const types = result.type.filter((t: string) => t !== "null");
      if (types.length < result.type.length) result.nullable = true;
      if (types.length === 1) result.type = types[0];
      else delete result.type;
    } else if (result.type === "null") {
      // A value that can only be null (one branch of a oneOf): any value, nullable.
      delete result.type;
      result.nullable = true;
    }
    for (const keyword of ["oneOf", "anyOf"]) {
      const branches: Json[] | undefined = result[keyword];
      if (!Array.isArray(branches) || !branches.some(isNull)) continue;
      const rest = branches.filter((b) => !isNull(b));
      delete result[keyword];
      result.nullable = true;
      if (rest.length === 1) {
        if (rest[0].$ref) result.allOf = [rest[0]];
        else Object.assign(result, rest[0], { nullable: true });
      } else result[keyword] = rest;
    }
    return result;
  };
  return visit(out);
}

export interface SdkOptions {
  root: string;
  spec: Json;
  log: (message: string) => void;
}

function generator(root: string, args: string[]) {
  execFileSync(join(root, "node_modules/.bin/openapi-generator-cli"), args, {
    cwd: root,
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, JAVA_OPTS: process.env.JAVA_OPTS ?? "-Xss4m" },
  });
}

/** What the generators leave out of the committed SDKs: CI templates, push scripts, test stubs. */
const IGNORE = [".travis.yml", ".gitlab-ci.yml", ".github/**", "git_push.sh", "test/**", "tox.ini", "test-requirements.txt", "setup.cfg", "api/openapi.yaml"];

/** Regenerates generated/sdk/python and generated/sdk/go from the bundled v1 spec. */
export function emitSdks({ root, spec, log }: SdkOptions) {
  const work = mkdtempSync(join(tmpdir(), "stackship-sdk-"));
  try {
    const input = join(work, "v1-openapi-3.0.json");
    writeFileSync(input, JSON.stringify(downlevelTo30(spec), null, 2) + "\n");
    const targets = [
      {
        name: "python",
        args: ["-g", "python", "--package-name", "stackship_client", "--additional-properties", "projectName=stackship-client,packageVersion=1.0.0,hideGenerationTimestamp=true"],
      },
      {
        name: "go",
        args: ["-g", "go", "--package-name", "stackship", "--git-host", "stackship.local", "--git-user-id", "sdk", "--git-repo-id", "go", "--additional-properties", "packageVersion=1.0.0,hideGenerationTimestamp=true,withGoMod=true,generateInterfaces=false"],
      },
    ];
    for (const target of targets) {
      const out = join(root, "generated/sdk", target.name);
      rmSync(out, { recursive: true, force: true });
      mkdirSync(out, { recursive: true });
      writeFileSync(join(out, ".openapi-generator-ignore"), `# Written by scripts/generate/sdks.ts.\n${IGNORE.join("\n")}\n`);
      log(`sdk: ${target.name} (openapi-generator) → generated/sdk/${target.name}`);
      generator(root, ["generate", "-i", input, "-o", out, "--global-property", "apiTests=false,modelTests=false", ...target.args]);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
