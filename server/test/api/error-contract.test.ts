// Errors produced before a handler runs (parameter validation, authentication, body reading and
// parsing) are part of each operation's contract too: spec/tfe declares the 400 they answer, and
// the response check (STACKSHIP_VALIDATE_RESPONSES) covers them on both surfaces.
import { connect, type AddressInfo } from "node:net";
import { createServer } from "node:http";
import pino from "pino";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { OperationDescriptor } from "../../../generated/operation-table.ts";
import tfeSpec from "../../../generated/tfe/openapi.json" with { type: "json" };
import { operations as tfeOperations } from "../../../generated/tfe/operations.gen.ts";
import * as tfeValidators from "../../../generated/tfe/validators.gen.js";
import { operations as v1Operations } from "../../../generated/v1/operations.gen.ts";
import v1Spec from "../../../generated/v1/openapi.json" with { type: "json" };
import * as v1Validators from "../../../generated/v1/validators.gen.js";
import type { Validator } from "../../../generated/v1/validators.gen.js";
import { buildApp, type SurfaceBinding } from "../../src/http/app.ts";
import { renderV1Error } from "../../src/http/middleware/errors.ts";
import type { Services } from "../../src/commands/services.ts";
import { applicationTables, expectNothingWritten } from "../support/database.ts";
import { setUpAcme } from "../support/api-requests.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import { poll } from "../support/poll.ts";
import { createUser, signIn } from "../support/sessions.ts";
import { isSensitivePermission } from "../../src/domain/authorization.ts";

type Schema = { type?: string; maxLength?: number; pattern?: string; enum?: string[]; $ref?: string };
/** A spec node that may be a `$ref` to another one. */
type Node = { $ref?: string };
type ParameterNode = Node & { name: string; in: "path" | "query"; schema: Schema };
type PathItem = { parameters?: Node[] } & Record<string, { parameters?: Node[] }>;
type Spec = {
  paths: Record<string, PathItem>;
  components: { parameters?: Record<string, unknown>; schemas?: Record<string, unknown> };
};

/** The node itself, or what its `$ref` chain leads to (as the caller expects it to be). */
function resolve<T>(spec: Spec, node: unknown): T {
  let at = node as Node | undefined;
  while (at && typeof at.$ref === "string")
    at = at.$ref
      .slice(2)
      .split("/")
      .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], spec) as Node | undefined;
  return at as T;
}

/** The declared path and query parameters of an operation, with their resolved schemas. */
function parametersOf(
  spec: Spec,
  op: OperationDescriptor,
): Array<{ name: string; in: "path" | "query"; schema: Schema }> {
  const item = spec.paths[op.path];
  return [...(item.parameters ?? []), ...(item[op.method.toLowerCase()].parameters ?? [])].map((p) => {
    const parameter = resolve<ParameterNode>(spec, p);
    return { name: parameter.name, in: parameter.in, schema: resolve<Schema>(spec, parameter.schema) };
  });
}

/** A value the schema accepts (ids and tokens of nothing that exists: a handler would answer 404). */
function goodValue(schema: Schema): string {
  if (schema.enum) return schema.enum[0];
  if (schema.type === "integer") return "1";
  if (schema.pattern === "^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$") return "a.b";
  if (schema.pattern?.startsWith("^run-")) return "run-0000000000000000";
  if (schema.pattern?.startsWith("^ws-")) return "ws-0000000000000000";
  if (schema.pattern?.startsWith("^var-")) return "var-0000000000000000";
  if (schema.pattern?.startsWith("^cv-")) return "cv-0000000000000000";
  if (schema.pattern?.startsWith("^pol-")) return "pol-0000000000000000";
  return "acme";
}

/** A value the schema refuses, or null when any string goes. */
function badValue(schema: Schema): string | null {
  if (schema.type === "integer") return "abc";
  if (schema.enum) return "not-one-of-them";
  if (schema.maxLength !== undefined) return "x".repeat(schema.maxLength + 1);
  if (schema.pattern) return "!";
  return null;
}

function urlOf(
  baseUrl: string,
  op: OperationDescriptor,
  path: Record<string, string>,
  query: Record<string, string> = {},
): string {
  const filled = op.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => encodeURIComponent(path[name]));
  const search = new URLSearchParams(query).toString();
  return `${baseUrl}${filled}${search ? `?${search}` : ""}`;
}

interface Probe {
  label: string;
  status: number;
  body: unknown;
}

/** How a probe authenticates: a bearer token, or (for operations only a person may use) a session cookie and its CSRF token. */
type Credentials = string | { cookie: string; csrfToken: string };

async function send(
  url: string,
  op: OperationDescriptor,
  token: Credentials,
  body?: Buffer,
): Promise<Probe & { label: "" }> {
  const headers: Record<string, string> = { "Content-Type": op.requestBody?.contentType ?? "application/vnd.api+json" };
  if (op.authenticated && typeof token === "string") headers.Authorization = `Bearer ${token}`;
  else if (op.authenticated && typeof token !== "string")
    Object.assign(headers, { Cookie: token.cookie, "X-CSRF-Token": token.csrfToken });
  const response = await fetch(url, { method: op.method, headers, body: body as unknown as BodyInit | undefined });
  const text = await response.text();
  return { label: "", status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Every request an operation must answer 400: bad path and query parameters, and for JSON bodies malformed, oversized and non-UTF-8 ones. */
async function probes(server: TestServer, spec: Spec, op: OperationDescriptor, token: Credentials): Promise<Probe[]> {
  const parameters = parametersOf(spec, op);
  const path: Record<string, string> = {};
  for (const p of parameters) if (p.in === "path") path[p.name] = goodValue(p.schema);
  const results: Probe[] = [];
  for (const p of parameters) {
    const bad = badValue(p.schema);
    if (bad === null) continue;
    const url =
      p.in === "path"
        ? urlOf(server.baseUrl, op, { ...path, [p.name]: bad })
        : urlOf(server.baseUrl, op, path, { [p.name]: bad });
    results.push({ ...(await send(url, op, token)), label: `${p.in} parameter ${p.name}=${bad.slice(0, 20)}` });
  }
  // A raw body (x-stackship-raw-body, the GitHub webhook) is never parsed as JSON by the binding: its
  // handler checks a signature over the bytes first, and github-source.test.ts covers its refusals.
  const json = op.requestBody && op.requestBody.contentType !== "application/octet-stream" && !op.requestBody.raw;
  if (json) {
    const url = urlOf(server.baseUrl, op, path);
    const bodies: Array<[string, Buffer]> = [
      ["malformed JSON", Buffer.from('{"data": {')],
      [
        "a body over 1 MiB",
        Buffer.from(JSON.stringify({ data: { type: "x", attributes: { pad: "x".repeat(1024 * 1024) } } })),
      ],
      [
        "invalid UTF-8",
        Buffer.concat([Buffer.from('{"data":{"type":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}')]),
      ],
    ];
    for (const [label, body] of bodies) results.push({ ...(await send(url, op, token, body)), label });
  }
  return results;
}

async function checkSurface(
  server: TestServer,
  spec: Spec,
  table: readonly OperationDescriptor[],
  token: string,
  errorDocument: Validator,
  personOnly?: { cookie: string; csrfToken: string },
) {
  const problems: string[] = [];
  let probed = 0;
  const answering400 = new Set<string>();
  for (const op of table) {
    // The binding refuses a token on what only a person may do before it reads a body; a session reaches the body.
    const needsPerson =
      personOnly &&
      (op.permission === "session" ||
        (op.permission !== "none" &&
          op.permission !== "authenticated" &&
          op.permission !== "site:admin" &&
          isSensitivePermission(op.permission)));
    // The binding refuses anyone but a deployment administrator on site:admin operations before it reads a body.
    const credentials = needsPerson ? personOnly : op.permission === "site:admin" ? server.bootstrapToken : token;
    for (const probe of await probes(server, spec, op, credentials)) {
      probed += 1;
      const where = `${op.operationId} (${probe.label})`;
      // A 500 here is the response check refusing an undeclared or invalid error response.
      if (probe.status !== 400) {
        problems.push(`${where} answered ${probe.status}: ${JSON.stringify(probe.body).slice(0, 200)}`);
        continue;
      }
      answering400.add(op.operationId);
      const declared = op.responses[400];
      if (!declared) problems.push(`${where}: 400 is not declared`);
      else if (declared.validate && !declared.validate(probe.body))
        problems.push(
          `${where}: the 400 document breaks the declared schema: ${JSON.stringify(declared.validate.errors)}`,
        );
      if (!errorDocument(probe.body)) problems.push(`${where}: not an ErrorDocument`);
    }
  }
  assert.equal(problems, []);
  return { probed, answering400 };
}

// ---------------------------------------------------------------------------------------------
const declared = suite("400 answers are declared and valid");

testEachServer(
  declared,
  "/api/v2: every operation answers 400 to bad parameters, and every JSON body operation to malformed, oversized and non-UTF-8 bodies; each 400 is declared and validates, and nothing is written",
  async (server) => {
    const { token } = await setUpAcme(server);
    const tables = await applicationTables(server);
    const { probed, answering400 } = await expectNothingWritten(
      server,
      () => checkSurface(server, tfeSpec as Spec, tfeOperations, token, tfeValidators.ErrorDocument),
      tables,
    );
    const withJsonBody = tfeOperations.filter(
      (op) => op.requestBody && op.requestBody.contentType !== "application/octet-stream",
    );
    assert.ok(withJsonBody.length >= 10, String(withJsonBody.length));
    for (const op of withJsonBody) assert.ok(answering400.has(op.operationId), op.operationId);
    // The operations that can answer 400 declare it, and only those.
    const declaring = (tfeOperations as readonly OperationDescriptor[])
      .filter((op) => op.responses[400])
      .map((op) => op.operationId)
      .sort();
    assert.equal(declaring, [...answering400].sort());
    console.log(`  /api/v2: ${probed} requests, ${answering400.size} of ${tfeOperations.length} operations answer 400`);
  },
);

testEachServer(
  declared,
  "/v1: the same probes on every operation; each 400 is declared and validates, and nothing is written",
  async (server) => {
    const { token } = await setUpAcme(server);
    const tables = await applicationTables(server);
    // The deployment administrator's token reaches every v1 operation's body reading but those only a
    // person may use (step-up, the sensitive downloads); a deployment administrator's session reaches those.
    void token;
    const admin = await createUser(server, { siteAdmin: true });
    const session = await signIn(server, admin.email, admin.password);
    const { probed, answering400 } = await expectNothingWritten(
      server,
      () =>
        checkSurface(server, v1Spec as Spec, v1Operations, server.bootstrapToken, v1Validators.ErrorDocument, session),
      tables,
    );
    console.log(`  /v1: ${probed} requests, ${answering400.size} of ${v1Operations.length} operations answer 400`);
  },
);

// ---------------------------------------------------------------------------------------------
const check = suite("the response check covers errors raised before the handler");

/** An app with one bound operation whose spec declares only 200 and, optionally, a 400 with a validator. */
async function probeApp(
  validateResponses: boolean,
  declared400: Validator | null,
  fn: (baseUrl: string, logged: string[]) => Promise<void>,
  level: "warn" | "info" = "warn",
) {
  const logged: string[] = [];
  const logger = pino({ level }, { write: (line: string) => void logged.push(line) });
  const responses: OperationDescriptor["responses"] = { 200: { contentType: "application/json", validate: null } };
  if (declared400) responses[400] = { contentType: "application/vnd.api+json", validate: declared400 };
  const op: OperationDescriptor = {
    operationId: "probe",
    method: "POST",
    path: "/probe",
    permission: "none",
    authenticated: false,
    runToken: false,
    validatePath: Object.assign(() => true, { errors: null }),
    validateQuery: Object.assign(() => true, { errors: null }),
    requestBody: { contentType: "application/json", required: true, validate: null },
    responses,
  };
  const surface: SurfaceBinding = {
    name: "probe",
    operations: [op],
    handlers: { probe: async () => ({ status: 200, body: { ok: true } }) },
    renderError: renderV1Error,
    prefix: "/probe",
  };
  const services = {
    config: { validateResponses, publicUrl: null, trustedProxies: [] },
    logger,
  } as unknown as Services;
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors (ctx.onerror)
  const http = createServer(buildApp(services, [surface]).callback());
  await new Promise<void>((done) => http.listen(0, "127.0.0.1", done));
  try {
    await fn(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, logged);
  } finally {
    http.closeAllConnections();
    await new Promise((done) => http.close(done));
  }
}

async function post(baseUrl: string, body: string) {
  const response = await fetch(`${baseUrl}/probe`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body,
  });
  return {
    status: response.status,
    body: (await response.json()) as { errors?: Array<{ code: string }>; ok?: boolean },
  };
}

check(
  "dev mode: malformed JSON on an operation that declares no 400 is caught (500 INTERNAL, logged as a spec violation)",
  async () => {
    await probeApp(true, null, async (baseUrl, logged) => {
      const good = await post(baseUrl, "{}");
      assert.is(good.status, 200);
      const caught = await post(baseUrl, "{");
      assert.is(caught.status, 500);
      assert.is(caught.body.errors?.[0].code, "INTERNAL");
      assert.ok(
        logged.some(
          (line) =>
            line.includes("error response violates the spec") && line.includes("probe answered undeclared status 400"),
        ),
        logged.join("\n"),
      );
    });
  },
);

check("dev mode: a declared 400 whose document breaks the declared schema is caught too", async () => {
  const refuses = Object.assign(() => false, {
    errors: [{ instancePath: "", message: "never valid" }],
  }) as unknown as Validator;
  await probeApp(true, refuses, async (baseUrl, logged) => {
    const caught = await post(baseUrl, "{");
    assert.is(caught.status, 500);
    assert.ok(
      logged.some((line) => line.includes("probe 400 response violates the spec")),
      logged.join("\n"),
    );
  });
});

check("dev mode: a declared, valid 400 passes; with the check off the undeclared 400 passes unchanged", async () => {
  const accepts = Object.assign(() => true, { errors: null }) as unknown as Validator;
  await probeApp(true, accepts, async (baseUrl, logged) => {
    const result = await post(baseUrl, "{");
    assert.is(result.status, 400);
    assert.is(result.body.errors?.[0].code, "REQUEST_INVALID");
    assert.equal(logged, []);
  });
  await probeApp(false, null, async (baseUrl, logged) => {
    const result = await post(baseUrl, "{");
    assert.is(result.status, 400);
    assert.is(result.body.errors?.[0].code, "REQUEST_INVALID");
    assert.equal(logged, []);
  });
});

check("a request whose connection closes while its body is read: a warning, never an unhandled error", async () => {
  await probeApp(
    true,
    null,
    async (baseUrl, logged) => {
      const { port } = new URL(baseUrl);
      const socket = connect(Number(port), "127.0.0.1");
      await new Promise<void>((done) => socket.once("connect", done));
      // Half of the declared body, then the connection goes away.
      socket.end(
        'POST /probe HTTP/1.1\r\nHost: probe\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"half":',
      );
      socket.destroy();
      await poll(
        "the warning about the closed connection",
        () =>
          logged.some((line) => line.includes("the connection closed before the request was read whole")) || undefined,
      );
      assert.not.ok(
        logged.some((line) => line.includes("unhandled error")),
        logged.join("\n"),
      );
      // The request's log line has no status to report (none was sent) and says why.
      const request = await poll("the request's log line", () =>
        logged.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.msg === "request"),
      );
      assert.is(request.status, null, JSON.stringify(request));
      assert.is(request.connection_closed, true, JSON.stringify(request));
    },
    "info",
  );
});

declared.run();
check.run();
