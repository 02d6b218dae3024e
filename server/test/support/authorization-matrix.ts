// The shape both authorization matrices (v1 and tfe) share: five callers, a row of expected
// statuses per operation, and every operation called as every caller.

export const CALLERS = ["anonymous", "other", "viewer", "operator", "admin"] as const;
export type Caller = (typeof CALLERS)[number];
export type Row = Record<Caller, number>;

export const row = (anonymous: number, other: number, viewer: number, operator: number, admin: number): Row => ({
  anonymous,
  other,
  viewer,
  operator,
  admin,
});
/** Readable by members of the organization, hidden from other organizations. */
export const READ = row(401, 404, 200, 200, 200);

/** One operation of the spec as the matrices call it. */
export interface MatrixOperation {
  operationId: string;
  method: string;
  path: string;
}

/** How a matrix calls: the server, each operation's request per caller, and the caller's credentials. */
export interface MatrixCaller<Op, C> {
  baseUrl: string;
  call: (operation: Op, caller: Caller) => Promise<C>;
  credentials: (operation: Op, caller: Caller, call: C) => Record<string, string>;
}

/**
 * Calls every operation as every caller; each call whose status differs from `expected`,
 * described (empty when all match).
 */
export async function matrixMismatches<Op extends MatrixOperation, C extends MatrixCall>(
  operations: readonly Op[],
  expected: Record<string, Row>,
  { baseUrl, call: callFor, credentials }: MatrixCaller<Op, C>,
): Promise<string[]> {
  const mismatches: string[] = [];
  for (const operation of operations) {
    for (const caller of CALLERS) {
      const call = await callFor(operation, caller);
      const { url, headers, body } = matrixRequest(operation, call);
      Object.assign(headers, credentials(operation, caller, call));
      const response = await fetch(`${baseUrl}${url}`, { method: operation.method, headers, body });
      const status = expected[operation.operationId][caller];
      if (response.status !== status)
        mismatches.push(
          `${operation.operationId} as ${caller}: ${response.status} (expected ${status}) ${(await response.text()).slice(0, 300)}`,
        );
    }
  }
  return mismatches;
}

/** An operation's request: path values, and a JSON:API body or raw bytes. */
export interface MatrixCall {
  path: Record<string, string>;
  body?: unknown;
  rawBody?: Uint8Array | string;
}

/** The URL path (operation path with `call.path` filled in), the content headers and the body of one call. */
function matrixRequest(
  operation: { operationId: string; path: string },
  call: MatrixCall,
): { url: string; headers: Record<string, string>; body: BodyInit | undefined } {
  const url = operation.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    if (!(name in call.path)) throw new Error(`${operation.operationId}: no value for ${name}`);
    return encodeURIComponent(call.path[name]);
  });
  const headers: Record<string, string> = {};
  let body: BodyInit | undefined;
  if (call.rawBody) {
    headers["Content-Type"] = "application/octet-stream";
    body = Buffer.from(call.rawBody);
  } else if (call.body !== undefined) {
    headers["Content-Type"] = "application/vnd.api+json";
    body = JSON.stringify(call.body);
  }
  return { url, headers, body };
}
