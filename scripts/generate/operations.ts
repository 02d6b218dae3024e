import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { OPERATION_REQUIREMENTS } from "../../server/src/domain/authorization.ts";
import {
  BANNER,
  JSON_API,
  exportName,
  type OpenApiDocument,
  type Operation,
  type Parameter,
  type Reference,
  type Surface,
} from "./common.ts";

const METHODS = ["get", "put", "post", "patch", "delete"] as const;

function isRecord(node: unknown): node is Record<string, unknown> {
  return typeof node === "object" && node !== null;
}

/** `node`, or what its local `$ref` (a JSON pointer into `spec`) points at, followed to the end. */
function deref<T>(spec: OpenApiDocument, node: T | Reference): T {
  if (isRecord(node) && typeof node.$ref === "string" && node.$ref.startsWith("#/")) {
    let target: unknown = spec;
    for (const key of node.$ref.slice(2).split("/")) {
      target = isRecord(target) ? target[key.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
    }
    if (target === undefined) throw new Error(`unresolved $ref ${node.$ref}`);
    // The pointer names an object of the kind the reference stands for (Redocly bundled and linted the spec).
    return deref(spec, target as T | Reference);
  }
  return node as T;
}

/** Every operation of a bundled spec, in path then method order. */
export function readOperations(spec: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const path of Object.keys(spec.paths).sort()) {
    const item = deref(spec, spec.paths[path]);
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      if (!op.operationId) throw new Error(`${method} ${path} has no operationId`);
      if (!op["x-stackship-permission"]) throw new Error(`${op.operationId} has no x-stackship-permission`);
      const parameters: Parameter[] = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => deref(spec, p));
      let requestBody: Operation["requestBody"];
      if (op.requestBody) {
        const body = deref(spec, op.requestBody);
        const [contentType] = Object.keys(body.content);
        requestBody = { contentType, required: body.required === true, schema: body.content[contentType].schema };
        const raw = body["x-stackship-raw-body"];
        if (raw) requestBody.raw = { maxBytes: raw.max_bytes, tooLargeCode: raw.too_large_code };
      }
      const responses = Object.keys(op.responses)
        .sort()
        .map((code) => {
          const response = deref(spec, op.responses[code]);
          const content = response.content ?? {};
          const [contentType] = Object.keys(content);
          return { status: Number(code), contentType, schema: contentType ? content[contentType].schema : undefined };
        });
      const security = op.security ?? spec.security ?? [];
      const permission = op["x-stackship-permission"];
      const authenticated = security.length > 0;
      // The server enforces this value before the handler runs, so it must be one it knows.
      if (!(OPERATION_REQUIREMENTS as readonly string[]).includes(permission)) {
        throw new Error(
          `${op.operationId}: x-stackship-permission '${permission}' is none of ${OPERATION_REQUIREMENTS.join(", ")}`,
        );
      }
      if ((permission === "none") === authenticated) {
        throw new Error(
          `${op.operationId}: x-stackship-permission 'none' goes with exactly the operations that need no authentication (security: [])`,
        );
      }
      const runToken = op["x-stackship-run-token"] ?? false;
      if (typeof runToken !== "boolean")
        throw new Error(`${op.operationId}: x-stackship-run-token must be true or false`);
      operations.push({
        operationId: op.operationId,
        method,
        path,
        permission,
        runToken,
        authenticated,
        parameters,
        requestBody,
        responses,
      });
    }
  }
  const ids = new Set<string>();
  for (const op of operations) {
    if (ids.has(op.operationId)) throw new Error(`duplicate operationId ${op.operationId}`);
    ids.add(op.operationId);
  }
  return operations;
}

function bodyType(op: Operation): string {
  if (!op.requestBody) return "undefined";
  if (op.requestBody.contentType === "application/octet-stream" || op.requestBody.raw) return "Uint8Array";
  const base = `NonNullable<Ops[${JSON.stringify(op.operationId)}]["requestBody"]>["content"][${JSON.stringify(op.requestBody.contentType)}]`;
  return op.requestBody.required ? base : `${base} | undefined`;
}

function paramsType(op: Operation, where: "path" | "query"): string {
  const declared = op.parameters.some((p) => p.in === where);
  if (!declared) return "Record<string, never>";
  return `NonNullable<Ops[${JSON.stringify(op.operationId)}]["parameters"][${JSON.stringify(where)}]>`;
}

function resultType(op: Operation): string {
  const success = op.responses.filter((r) => r.status >= 200 && r.status < 300);
  if (success.length === 0) throw new Error(`${op.operationId} has no 2xx response`);
  return success
    .map((r) => {
      // Raw bytes (any non-JSON content type) go out as they are (the server sends a Uint8Array body unchanged).
      const body = !r.contentType
        ? "undefined"
        : !r.contentType.endsWith("json")
          ? "Uint8Array"
          : `Ops[${JSON.stringify(op.operationId)}]["responses"][${r.status}]["content"][${JSON.stringify(r.contentType)}]`;
      return `HandlerResult<${r.status}, ${body}>`;
    })
    .join(" | ");
}

/** Writes operations.gen.ts (the runtime table) and handlers.gen.ts (the compile-time contract). */
export function emitOperationTable(surface: Surface, operations: Operation[], dir: string) {
  const rows = operations.map((op) => {
    const responses = op.responses
      .map((r) => {
        // Only JSON documents have validators (see validators.ts); raw bytes are not validated.
        const validate =
          r.schema && r.contentType?.endsWith("json")
            ? `v.${exportName(op.operationId, `Response${r.status}`)}`
            : "null";
        return `      ${r.status}: { contentType: ${JSON.stringify(r.contentType ?? null)}, validate: ${validate} },`;
      })
      .join("\n");
    const body = op.requestBody
      ? `{ contentType: ${JSON.stringify(op.requestBody.contentType)}, required: ${op.requestBody.required}, validate: ${
          !op.requestBody.raw &&
          (op.requestBody.contentType === JSON_API || op.requestBody.contentType === "application/json")
            ? `v.${exportName(op.operationId, "Request")}`
            : "null"
        }${op.requestBody.raw ? `, raw: ${JSON.stringify(op.requestBody.raw)}` : ""} }`
      : "null";
    return `  {
    operationId: ${JSON.stringify(op.operationId)},
    method: ${JSON.stringify(op.method.toUpperCase())},
    path: ${JSON.stringify(op.path)},
    permission: ${JSON.stringify(op.permission)},
    runToken: ${op.runToken},
    authenticated: ${op.authenticated},
    validatePath: p.${exportName(op.operationId, "Path")},
    validateQuery: p.${exportName(op.operationId, "Query")},
    requestBody: ${body},
    responses: {
${responses}
    },
  },`;
  });
  writeFileSync(
    join(dir, "operations.gen.ts"),
    `${BANNER}
import * as p from "./parameter-validators.gen.js";
import * as v from "./validators.gen.js";
import type { OperationTable } from "../operation-table.ts";

/** Every ${surface.name} operation: method, path, permission and the validators that guard it. */
export const operations = [
${rows.join("\n")}
] as const satisfies OperationTable;

export type OperationId = (typeof operations)[number]["operationId"];
`,
  );

  const handlers = operations
    .map(
      (op) =>
        `  ${op.operationId}: (input: {
    path: ${paramsType(op, "path")};
    query: ${paramsType(op, "query")};
    body: ${bodyType(op)};
    ctx: Ctx;
  }) => Promise<${resultType(op)}>;`,
    )
    .join("\n");
  writeFileSync(
    join(dir, "handlers.gen.ts"),
    `${BANNER}
import type { operations as Ops } from "./types.gen.ts";

/** What a handler returns: the status, the document, and optional response headers. */
export interface HandlerResult<Status extends number, Body> {
  status: Status;
  body: Body;
  headers?: Record<string, string>;
}

/** One typed function per ${surface.name} operationId; the server implements all of them. */
export type Handlers<Ctx> = {
${handlers}
};
`,
  );
}
