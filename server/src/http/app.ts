import Router from "@koa/router";
import Koa from "koa";
import { Readable } from "node:stream";
import type { Logger } from "pino";
import type { OperationDescriptor, OperationTable } from "../../../generated/operation-table.ts";
import { DomainError } from "../domain/errors.ts";
import type { Services } from "../commands/services.ts";
import { observeHttpRequest } from "../metrics/registry.ts";
import { serveDashboard } from "./dashboard.ts";
import { lenderOf } from "../artifacts/lent-chunks.ts";
import { SESSION_COOKIE } from "../domain/sessions.ts";
import { authenticate } from "./middleware/authenticate.ts";
import { authorizeOperation } from "./operation-access.ts";
import { clientAddressOf } from "./client-address.ts";
import { compress } from "./middleware/compress.ts";
import { errors, renderV1Error, type ErrorRenderer, type RequestState } from "./middleware/errors.ts";
import { requestId } from "./middleware/request-id.ts";
import { parseJson, readBody, validateDocument, validateParameters } from "./middleware/validate.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";

/** What every handler receives besides its validated input. */
export interface RequestContext {
  principal: AuthenticatedPrincipal | null;
  requestId: string;
  /** The absolute base URL clients reached this server at (for upload and self links). */
  baseUrl: string;
  /** The raw query string, without `?` ("" when there is none). */
  querystring: string;
  /** The request headers (lower-case names), for the operations that read one (the GitHub webhook's signature). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  services: Services;
  log: Logger;
  /** The client's address: the socket's peer, or X-Forwarded-For's when the peer is a trusted proxy (client-address.ts). */
  clientAddress?: string;
  /** True when this request arrived over TLS (the HTTPS listener), whatever STACKSHIP_PUBLIC_URL says. */
  secureConnection?: boolean;
  /** The `stackship_session` cookie the request carried (v1 only), whatever authenticated it. */
  presentedSessionCookie?: string | null;
}

/**
 * Any surface's handler. The binding validated its input against the operation before the call;
 * method syntax keeps the parameter bivariant, so every operation's typed handler fits.
 */
interface AnyHandlerShape {
  handle(input: {
    path: Record<string, unknown>;
    query: Record<string, unknown>;
    body: unknown;
    ctx: RequestContext;
  }): Promise<{ status: number; body: unknown; headers?: Record<string, string> }>;
}
type AnyHandler = AnyHandlerShape["handle"];

/** One API surface: its generated operation table, the handlers implementing it, its error shape. */
export interface SurfaceBinding {
  name: string;
  operations: OperationTable;
  handlers: Record<string, AnyHandler>;
  renderError: ErrorRenderer;
  /** Where unmatched requests under this prefix get this surface's error shape. */
  prefix: string;
  /** Told when a raw body (x-stackship-raw-body) was refused as too large, before the error goes out (e.g. to audit it). */
  rawBodyRefused?: (
    operationId: string,
    headers: Readonly<Record<string, string | string[] | undefined>>,
    services: Services,
    limit: number,
  ) => Promise<void>;
}

const JSON_BODY_LIMIT = 1024 * 1024;
/** The largest configuration upload accepted, in bytes (64 MiB). */
export const UPLOAD_LIMIT = 64 * 1024 * 1024;

function koaPath(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, ":$1");
}

function baseUrlOf(ctx: Koa.Context, services: Services, principal: AuthenticatedPrincipal | null): string {
  // A run's sandboxed tofu reaches the API only through its loopback channel, so the URLs it is
  // handed (state uploads) must name the address it called, never STACKSHIP_PUBLIC_URL.
  if (principal?.kind === "run") return `${ctx.protocol}://${ctx.host}`;
  return services.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`;
}

async function readRequestBody(
  ctx: Koa.Context,
  op: OperationDescriptor,
  surface: SurfaceBinding,
  services: Services,
): Promise<unknown> {
  if (!op.requestBody) return undefined;
  const rawBody = op.requestBody.raw;
  if (rawBody) {
    // Handed over unparsed: the handler authenticates the bytes (a signature) before reading them.
    let tooLarge = false;
    const bytes = await readBody(ctx, rawBody.maxBytes, () => {
      tooLarge = true;
      return new DomainError(
        rawBody.tooLargeCode as DomainError["code"],
        `The request body exceeds the limit of ${rawBody.maxBytes} bytes.`,
      );
    }).catch(async (error: unknown) => {
      if (tooLarge) await surface.rawBodyRefused?.(op.operationId, ctx.headers, services, rawBody.maxBytes);
      throw error;
    });
    return new Uint8Array(bytes);
  }
  if (op.requestBody.contentType === "application/octet-stream") {
    const raw = await readBody(
      ctx,
      UPLOAD_LIMIT,
      () =>
        new DomainError(
          "CONFIGURATION_UPLOAD_TOO_LARGE",
          `The upload exceeds the limit of ${UPLOAD_LIMIT} bytes (64 MiB).`,
        ),
    );
    return new Uint8Array(raw);
  }
  const raw = await readBody(
    ctx,
    JSON_BODY_LIMIT,
    () => new DomainError("REQUEST_INVALID", `The request body exceeds ${JSON_BODY_LIMIT} bytes.`),
  );
  const body = parseJson(raw);
  if (body === undefined && op.requestBody.required) {
    throw new DomainError("DOCUMENT_INVALID", "This operation needs a JSON:API request document.", {
      source: { pointer: "" },
    });
  }
  if (body !== undefined && op.requestBody.validate) validateDocument(op.requestBody.validate, body);
  return body;
}

function bindOperation(
  router: Router<RequestState>,
  surface: SurfaceBinding,
  op: OperationDescriptor,
  services: Services,
) {
  const handler = surface.handlers[op.operationId];
  if (!handler) throw new Error(`no handler for ${surface.name} operation ${op.operationId}`);
  router.register(koaPath(op.path), [op.method], async (ctx) => {
    ctx.state.renderError = surface.renderError;
    // The error middleware checks error responses against this operation's declared ones.
    ctx.state.operation = op;
    const path: Record<string, unknown> = { ...ctx.params };
    validateParameters(op.validatePath, path, "path");
    const query: Record<string, unknown> = { ...(ctx.query as Record<string, unknown>) };
    validateParameters(op.validateQuery, query, "query");
    const principal = op.authenticated ? await authenticate(ctx, services, { sessions: surface.name === "v1" }) : null;
    if (principal) await authorizeOperation(services, op, principal, path);
    const body = await readRequestBody(ctx, op, surface, services);
    const result = await handler({
      path,
      query,
      body,
      ctx: {
        principal,
        requestId: ctx.state.requestId,
        baseUrl: baseUrlOf(ctx, services, principal),
        querystring: ctx.querystring,
        headers: ctx.headers,
        services,
        log: ctx.state.log,
        clientAddress: clientAddressOf(
          ctx.req.socket.remoteAddress,
          ctx.headers["x-forwarded-for"],
          services.config.trustedProxies,
        ),
        secureConnection: (ctx.req.socket as { encrypted?: boolean }).encrypted === true,
        presentedSessionCookie: surface.name === "v1" ? (ctx.cookies.get(SESSION_COOKIE) ?? null) : null,
      },
    });
    const response = op.responses[result.status];
    if (!response) throw new Error(`${op.operationId} returned undeclared status ${result.status}`);
    if (services.config.validateResponses && response.validate && !response.validate(result.body)) {
      ctx.state.log.error(
        { operationId: op.operationId, errors: response.validate.errors },
        "response violates the spec",
      );
      throw new Error(
        `${op.operationId} ${result.status} response violates the spec: ${JSON.stringify(response.validate.errors)}`,
      );
    }
    for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
    ctx.status = result.status;
    if (response.contentType && result.body !== undefined) {
      ctx.type = response.contentType;
      // Raw bytes (an application/octet-stream response) are sent exactly as they are.
      if (result.body instanceof Readable) sendStream(ctx, result.body);
      else
        ctx.body =
          result.body instanceof Uint8Array
            ? Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength)
            : JSON.stringify(result.body);
    }
  });
}

/**
 * A streamed body that fails after the headers went out can no longer become an error document:
 * the connection is destroyed, so the client sees a failed, truncated response, never a
 * complete-looking one.
 */
function sendStream(ctx: Koa.Context, body: Readable): void {
  // Piped here rather than by Koa, which would report the failure as an unhandled app error
  // (the handler logs it); the socket closes without an error of its own.
  ctx.respond = false;
  if (body.destroyed) {
    ctx.res.destroy();
    return;
  }
  if (ctx.method === "HEAD") {
    body.destroy();
    ctx.res.end();
    return;
  }
  body.once("error", () => ctx.res.destroy());
  ctx.res.once("close", () => body.destroy());
  // Chunks a stream produces in one go are written to the socket in one go.
  let corked = false;
  body.on("data", () => {
    if (corked) return;
    corked = true;
    ctx.res.cork();
    process.nextTick(() => {
      corked = false;
      ctx.res.uncork();
    });
  });
  const release = lenderOf(body);
  if (!release) {
    body.pipe(ctx.res);
    return;
  }
  // Lent chunks (lent-chunks.ts): each one goes back to the body once the socket has written it.
  // The body bounds how many it lends, which is the backpressure; pausing on a full socket too
  // keeps its buffer small.
  body.on("data", (chunk: Buffer) => {
    if (!ctx.res.write(chunk, () => release(chunk))) body.pause();
  });
  ctx.res.on("drain", () => body.resume());
  body.once("end", () => ctx.res.end());
}

/** Socket errors that only mean the client closed the connection early. */
const CLIENT_WENT_AWAY = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "ERR_STREAM_PREMATURE_CLOSE"]);

/** HTTP latency by operation id for /metrics, measured around the error middleware so errors count with their status. */
async function timeRequests(ctx: Koa.ParameterizedContext<RequestState>, next: Koa.Next): Promise<void> {
  const started = performance.now();
  try {
    await next();
  } finally {
    const operation = ctx.state.operation;
    observeHttpRequest(operation?.operationId ?? "unmatched", ctx.status, (performance.now() - started) / 1000);
  }
}

/** Builds the Koa application: request id → errors → the generated routes of every surface. */
export function buildApp(services: Services, surfaces: SurfaceBinding[]): Koa {
  const app = new Koa({ proxy: false });
  // Koa reports the socket errors of a response already under way (a client that went away
  // mid-stream) on the app; its default prints them to stderr. They go to the log instead.
  app.on("error", (error: NodeJS.ErrnoException, ctx?: Koa.Context) => {
    // The request's own logger (request-id.ts puts it in ctx.state), so the line carries its request id.
    const log = (ctx?.state as Partial<RequestState> | undefined)?.log ?? services.logger;
    if (CLIENT_WENT_AWAY.has(error.code ?? ""))
      log.debug({ err: error.message }, "the client went away before the response was complete");
    else log.error({ err: error }, "response failed");
  });
  app.use(requestId(services.logger));
  app.use(timeRequests);
  app.use(compress());
  app.use(errors({ validateResponses: services.config.validateResponses }));
  const router = new Router<RequestState>();
  for (const surface of surfaces) for (const op of surface.operations) bindOperation(router, surface, op, services);
  app.use(router.routes());
  app.use(async (ctx) => {
    // The dashboard's pages and hashed assets (never under the API prefixes).
    if (services.config.dashboardDir && serveDashboard(ctx, services.config.dashboardDir)) return;
    const surface = surfaces.find((s) => ctx.path.startsWith(s.prefix));
    ctx.state.renderError = surface?.renderError ?? renderV1Error;
    const methods = [...new Set(router.match(ctx.path, ctx.method).path.flatMap((layer) => layer.methods))].filter(
      (m) => m !== "HEAD",
    );
    if (methods.length > 0) {
      // RFC 9110 §15.5.6: a 405 names the methods the resource does allow.
      ctx.set("Allow", methods.join(", "));
      throw new DomainError("METHOD_NOT_ALLOWED", `${ctx.method} is not supported on ${ctx.path}.`);
    }
    throw new DomainError("NOT_FOUND", `No route for ${ctx.method} ${ctx.path}.`);
  });
  return app;
}
