/**
 * The Python and Go SDKs (generated/sdk/python, generated/sdk/go), made by openapi-generator
 * (@openapitools/openapi-generator-cli; the JAR version is pinned in openapitools.json and kept in
 * .tools/openapi-generator, fetched by scripts/bootstrap-tools).
 *
 * openapi-generator's OpenAPI 3.1 support is partial (its Python generator aborts on a
 * `{ type: "null" }` member of a oneOf), so it reads a 3.0.3 rendition of the bundled v1 spec
 * made here: `type: [T, "null"]` and `oneOf/anyOf [X, {type: "null"}]` become `nullable`,
 * a string `const` becomes a one-value `enum` (a boolean or number one keeps only its type), and
 * `$defs` move to components; a oneOf of inline objects becomes one object with their members
 * (the Go generator cannot tell such branches apart). The wire format is the
 * same; only how nullability is spelled changes.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import type { OpenApiDocument } from "./common.ts";

/** A JSON object: the spec is rewritten node by node, whatever kind of object each is. */
type Node = Record<string, unknown>;
/** A schema of `type: object` with inline properties (a oneOf branch that can be merged). */
type ObjectSchema = Node & { properties: Node };

const DEFS_PREFIX = "#/components/schemas/";

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && !Array.isArray(value);
// Array.isArray alone narrows to any[].
const isList = (value: unknown): value is unknown[] => Array.isArray(value);
/** The members of an object to copy; nothing for a boolean schema. */
const membersOf = (value: unknown): Node => (isNode(value) ? value : {});

/** A deep copy of `spec` in OpenAPI 3.0.3 terms (see the file comment). */
export function downlevelTo30(spec: OpenApiDocument): unknown {
  const out: Node = structuredClone(spec);
  out.openapi = "3.0.3";
  delete out.jsonSchemaDialect;
  const components = out.components;
  const schemas: Node = isNode(components) && isNode(components.schemas) ? components.schemas : {};
  // $defs inside a component schema: hoisted next to it, references rewritten.
  const renames = new Map<string, string>();
  for (const [name, schema] of Object.entries(schemas)) {
    if (!isNode(schema) || !schema.$defs) continue;
    for (const [def, body] of Object.entries(membersOf(schema.$defs))) {
      const target = schemas[def] ? `${name.replace(/[^A-Za-z0-9]/g, "_")}_${def}` : def;
      schemas[target] = body;
      renames.set(`${DEFS_PREFIX}${name}/$defs/${def}`, `${DEFS_PREFIX}${target}`);
    }
    delete schema.$defs;
  }
  // Children are rewritten first, so a `{ type: "null" }` branch arrives as `{ nullable: true }`.
  const isNull = (s: unknown) => isNode(s) && Object.keys(s).length === 1 && (s.type === "null" || s.nullable === true);
  const isInlineObject = (s: unknown): s is ObjectSchema =>
    isNode(s) && !s.$ref && s.type === "object" && isNode(s.properties) && !s.oneOf && !s.anyOf && !s.allOf;
  const mergeObjects = (branches: ObjectSchema[]): Node => {
    const names = [...new Set(branches.flatMap((b) => Object.keys(b.properties)))];
    const properties: Record<string, Node> = {};
    for (const name of names) {
      const variants = branches.map((b) => b.properties[name]).filter((v) => v !== undefined);
      const concrete = variants.filter((v) => !isNull(v));
      const nullable =
        concrete.length < variants.length ||
        variants.length < branches.length ||
        concrete.some((v) => isNode(v) && v.nullable);
      const distinct = [
        ...new Set(
          concrete.map((v) =>
            JSON.stringify({ ...membersOf(v), nullable: undefined, enum: undefined, description: undefined }),
          ),
        ),
      ];
      let merged: Node;
      if (concrete.length === 0) merged = {};
      else if (distinct.length === 1) {
        merged = { ...membersOf(concrete[0]) };
        delete merged.nullable;
        const enums = concrete.map((v) => membersOf(v).enum);
        if (enums.every(isList)) merged.enum = [...new Set(enums.flat())];
        else delete merged.enum;
      } else merged = {};
      if (nullable && Object.keys(merged).length > 0) merged.nullable = true;
      properties[name] = merged;
    }
    const required = names.filter((name) => branches.every((b) => isList(b.required) && b.required.includes(name)));
    return { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
  };
  const visit = (node: unknown): unknown => {
    if (isList(node)) return node.map(visit);
    if (!isNode(node)) return node;
    const result: Node = {};
    for (const [key, value] of Object.entries(node)) result[key] = visit(value);
    if (typeof result.$ref === "string" && renames.has(result.$ref)) result.$ref = renames.get(result.$ref);
    delete result.$schema;
    delete result.$id;
    delete result.dependentRequired;
    const examples = result.examples;
    if (isList(examples)) {
      if (result.example === undefined && examples.length > 0 && !("in" in result) && !("content" in result))
        result.example = examples[0];
      if (!("in" in result) && !("content" in result)) delete result.examples;
    }
    if ("const" in result) {
      // A string constant becomes a one-value enum; the generators only know string enums, so a
      // boolean or number constant keeps just its type (the server still sends the one value).
      if (typeof result.const === "string") result.enum = [result.const];
      else if (result.type === undefined && result.const !== null)
        result.type = typeof result.const === "number" ? "number" : typeof result.const;
      delete result.const;
    }
    const type = result.type;
    if (isList(type)) {
      const types = type.filter((t) => t !== "null");
      if (types.length < type.length) result.nullable = true;
      if (types.length === 1) result.type = types[0];
      else delete result.type;
    } else if (type === "null") {
      // A value that can only be null (one branch of a oneOf): any value, nullable.
      delete result.type;
      result.nullable = true;
    }
    const oneOf = result.oneOf;
    if (isList(oneOf) && oneOf.length > 1 && oneOf.every(isInlineObject)) {
      // A oneOf of inline objects (told apart by a constant member, e.g. `state`): merged into one
      // object. The Go generator decodes a oneOf by trying each branch and, as it does not check
      // enums, finds several that match.
      const merged = mergeObjects(oneOf);
      delete result.oneOf;
      Object.assign(result, merged);
    }
    for (const keyword of ["oneOf", "anyOf"]) {
      const branches = result[keyword];
      if (!isList(branches) || !branches.some(isNull)) continue;
      const rest = branches.filter((b) => !isNull(b));
      delete result[keyword];
      result.nullable = true;
      const only = rest.length === 1 ? membersOf(rest[0]) : undefined;
      const target =
        typeof only?.$ref === "string" ? membersOf(schemas[only.$ref.slice(DEFS_PREFIX.length)]) : undefined;
      if (
        target &&
        typeof target.type === "string" &&
        ["string", "integer", "number", "boolean"].includes(target.type)
      ) {
        // A nullable scalar (a timestamp, a digest): inlined, since the Go generator turns
        // `nullable` + `allOf: [scalar]` into a NullableInterface it cannot compile.
        Object.assign(result, visit(target), { nullable: true });
      } else if (only) {
        if (only.$ref) result.allOf = [rest[0]];
        else Object.assign(result, rest[0], { nullable: true });
      } else result[keyword] = rest;
    }
    return result;
  };
  return visit(out);
}

export interface SdkOptions {
  root: string;
  spec: OpenApiDocument;
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
const IGNORE = [
  ".travis.yml",
  ".gitlab-ci.yml",
  ".github/**",
  "git_push.sh",
  "test/**",
  "tox.ini",
  "test-requirements.txt",
  "setup.cfg",
  "api/openapi.yaml",
];

/** Regenerates generated/sdk/python and generated/sdk/go from the bundled v1 spec. */
export function emitSdks({ root, spec, log }: SdkOptions) {
  const work = mkdtempSync(join(tmpdir(), "stackship-sdk-"));
  try {
    const input = join(work, "v1-openapi-3.0.json");
    writeFileSync(input, JSON.stringify(downlevelTo30(spec), null, 2) + "\n");
    const targets = [
      {
        name: "python",
        args: [
          "-g",
          "python",
          "--package-name",
          "stackship_client",
          "--additional-properties",
          "projectName=stackship-client,packageVersion=1.0.0,hideGenerationTimestamp=true",
        ],
      },
      {
        name: "go",
        args: [
          "-g",
          "go",
          "--package-name",
          "stackship",
          "--git-host",
          "stackship.local",
          "--git-user-id",
          "sdk",
          "--git-repo-id",
          "go",
          "--additional-properties",
          "packageVersion=1.0.0,hideGenerationTimestamp=true,withGoMod=true,generateInterfaces=false",
        ],
      },
    ];
    for (const target of targets) {
      const out = join(root, "generated/sdk", target.name);
      rmSync(out, { recursive: true, force: true });
      mkdirSync(out, { recursive: true });
      writeFileSync(
        join(out, ".openapi-generator-ignore"),
        `# Written by scripts/generate/sdks.ts.\n${IGNORE.join("\n")}\n`,
      );
      log(`sdk: ${target.name} (openapi-generator) → generated/sdk/${target.name}`);
      generator(root, [
        "generate",
        "-i",
        input,
        "-o",
        out,
        "--global-property",
        "apiTests=false,modelTests=false",
        ...target.args,
      ]);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
