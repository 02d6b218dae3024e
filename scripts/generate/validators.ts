import Ajv2020 from "ajv/dist/2020.js";
import standaloneCode from "ajv/dist/standalone/index.js";
import addFormats from "ajv-formats";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BANNER, exportName, type OpenApiDocument, type Operation, type Surface } from "./common.ts";

// NOTE: ajv refuses a whole OpenAPI document in strict mode, so the component schemas become
// the $defs of one root schema and every ref is rewritten to point there.
function rewriteRefs(node: unknown, rootId: string): unknown {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, rootId));
  if (node && typeof node === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string" && value.startsWith("#/components/schemas/")) {
        out[key] = `${rootId}#/$defs/${value.slice("#/components/schemas/".length)}`;
      } else if (key === "example" || key === "examples") {
        continue;
      } else {
        out[key] = rewriteRefs(value, rootId);
      }
    }
    return out;
  }
  return node;
}

function newAjv(options: { coerce: boolean }) {
  const ajv = new Ajv2020.default({
    strict: true,
    allErrors: true,
    coerceTypes: options.coerce ? "array" : false,
    useDefaults: options.coerce,
    code: { source: true, esm: true, lines: true },
  });
  addFormats.default(ajv);
  ajv.addKeyword({ keyword: "x-stackship-permission" });
  return ajv;
}

function refName(schema: Record<string, unknown> | undefined): string | undefined {
  const ref = schema?.$ref;
  return typeof ref === "string" && ref.startsWith("#/components/schemas/")
    ? ref.slice("#/components/schemas/".length)
    : undefined;
}

const PRELUDE = `${BANNER}
// @ts-nocheck
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
`;

const DECLARATION = `${BANNER}
/** A compiled ajv validator: returns whether the data is valid and leaves ajv's errors on itself. */
export interface Validator {
  (data: unknown): boolean;
  errors?: Array<{ instancePath: string; keyword: string; message?: string; params: Record<string, unknown> }> | null;
}
`;

/**
 * validators.gen.js: one strict validator per request and response document.
 * parameter-validators.gen.js: one coercing validator per operation for path and query
 * parameters (query strings arrive as text; defaults are filled in).
 */
export function emitValidators(surface: Surface, spec: OpenApiDocument, operations: Operation[], dir: string) {
  const rootId = `https://stackship.dev/schemas/${surface.name}/openapi`;
  const defs = rewriteRefs(spec.components?.schemas ?? {}, rootId) as Record<string, unknown>;

  // Documents: each distinct schema compiled once; operations alias it (ajv emits duplicate
  // function names when two exports point at the same schema).
  const documents = newAjv({ coerce: false });
  documents.addSchema({ $id: rootId, $defs: defs });
  const exportsByName: Record<string, string> = {};
  const aliases: Array<[string, string]> = [];
  let inline = 0;
  const addDocument = (name: string, schema: Record<string, unknown> | undefined) => {
    if (!schema) return;
    const ref = refName(schema);
    if (ref) {
      exportsByName[ref] = `${rootId}#/$defs/${ref}`;
      aliases.push([name, ref]);
    } else {
      const id = `${rootId}/inline/${inline++}`;
      documents.addSchema({ ...(rewriteRefs(schema, rootId) as object), $id: id });
      exportsByName[name] = id;
    }
  };
  for (const op of operations) {
    const body = op.requestBody;
    if (body && !body.raw && body.contentType.endsWith("json"))
      addDocument(exportName(op.operationId, "Request"), body.schema);
    for (const r of op.responses)
      if (r.schema && r.contentType?.endsWith("json"))
        addDocument(exportName(op.operationId, `Response${r.status}`), r.schema);
  }
  const sortedExports = Object.fromEntries(Object.entries(exportsByName).sort(([a], [b]) => a.localeCompare(b)));
  let code = standaloneCode.default(documents, sortedExports);
  code += "\n" + aliases.map(([alias, target]) => `export const ${alias} = ${target};`).join("\n") + "\n";
  writeFileSync(join(dir, "validators.gen.js"), PRELUDE + code);
  const names = [...Object.keys(sortedExports), ...aliases.map(([a]) => a)].sort();
  writeFileSync(
    join(dir, "validators.gen.d.ts"),
    DECLARATION + names.map((n) => `export declare const ${n}: Validator;`).join("\n") + "\n",
  );

  // Parameters.
  const params = newAjv({ coerce: true });
  params.addSchema({ $id: rootId, $defs: defs });
  const paramExports: Record<string, string> = {};
  for (const op of operations) {
    for (const where of ["path", "query"] as const) {
      const declared = op.parameters.filter((p) => p.in === where);
      const schema = {
        $id: `${rootId}/parameters/${op.operationId}/${where}`,
        type: "object",
        properties: Object.fromEntries(declared.map((p) => [p.name, rewriteRefs(p.schema, rootId)])),
        required: declared.filter((p) => p.required).map((p) => p.name),
        additionalProperties: where === "path" ? false : !surface.strictQuery,
      };
      params.addSchema(schema);
      paramExports[exportName(op.operationId, where === "path" ? "Path" : "Query")] = schema.$id;
    }
  }
  writeFileSync(join(dir, "parameter-validators.gen.js"), PRELUDE + standaloneCode.default(params, paramExports));
  writeFileSync(
    join(dir, "parameter-validators.gen.d.ts"),
    DECLARATION +
      Object.keys(paramExports)
        .sort()
        .map((n) => `export declare const ${n}: Validator;`)
        .join("\n") +
      "\n",
  );
}
