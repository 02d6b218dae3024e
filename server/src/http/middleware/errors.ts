import type { IncomingMessage } from "node:http";
import type { Middleware } from "koa";
import type { Logger } from "pino";
import type { OperationDescriptor } from "../../../../generated/operation-table.ts";
import { DomainError, isDomainError } from "../../domain/errors.ts";
import { JSON_API, errorObject, statusOf } from "../jsonapi.ts";

/** Renders a domain error for one API surface (the tfe surface shapes errors for the tofu CLI). */
export type ErrorRenderer = (error: DomainError, requestId: string) => { status: number; body: unknown };

/** What the middleware keep in `ctx.state` for one request. */
export interface RequestState {
  /** Set by the request-id middleware, with the request's child logger. */
  requestId: string;
  log: Logger;
  /** The error shape of the surface that took the request (v1 until one did). */
  renderError?: ErrorRenderer;
  /** The bound operation, once the router matched one. */
  operation?: OperationDescriptor;
  /** Set when the connection closed while the request's body was read: nothing was answered. */
  connectionClosed?: boolean;
}

/** Whether `error` is the request's body stream failing because its connection closed. */
function connectionClosed(request: IncomingMessage, error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return request.destroyed && !request.complete && (code === "ECONNRESET" || code === "ECONNABORTED");
}

/** The v1 rendering: a JSON:API error document whose status comes from the code catalogue. */
export const renderV1Error: ErrorRenderer = (error, requestId) => ({
  status: statusOf(error.code),
  body: { errors: [errorObject(error, requestId)] },
});

/** Options of the error middleware. */
export interface ErrorsOptions {
  /**
   * Check every error response of a bound operation against the operation's declared responses
   * (STACKSHIP_VALIDATE_RESPONSES), whether it came from a handler or from the binding before it
   * (parameters, authentication, body reading and validation).
   */
  validateResponses: boolean;
}

/** Why an error response breaks its operation's contract, or null when it keeps it. */
function contractViolation(operation: OperationDescriptor, status: number, body: unknown): string | null {
  const declared = operation.responses[status];
  if (!declared) return `${operation.operationId} answered undeclared status ${status}`;
  if (declared.validate && !declared.validate(body))
    return `${operation.operationId} ${status} response violates the spec: ${JSON.stringify(declared.validate.errors)}`;
  return null;
}

/**
 * The only place errors become responses. Domain errors keep their code; anything else is a
 * 500 with the request id, logged, and its message never reaches the client. A request whose
 * connection closed before its body was read whole gets no response (there is no one to send it
 * to) and is logged as a warning, not as an unhandled error. With response
 * validation on, an error response its operation does not declare (or whose document breaks the
 * declared schema) is itself an internal error: logged, and answered 500 so that tests fail.
 */
export function errors(options: ErrorsOptions = { validateResponses: false }): Middleware<RequestState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (caught) {
      // The connection closed under the request (the client went away, or a shutdown cut it off):
      // nobody is left to answer, and it is no fault of the code.
      if (connectionClosed(ctx.req, caught)) {
        ctx.state.connectionClosed = true;
        ctx.state.log.warn(
          { err: caught },
          "the connection closed before the request was read whole; nothing was answered",
        );
        return;
      }
      const internal = () =>
        new DomainError(
          "INTERNAL",
          `An unexpected error occurred. Quote request id ${ctx.state.requestId} when reporting it.`,
        );
      const error = isDomainError(caught) ? caught : internal();
      if (!isDomainError(caught)) ctx.state.log.error({ err: caught }, "unhandled error");
      const render: ErrorRenderer = ctx.state.renderError ?? renderV1Error;
      let { status, body } = render(error, ctx.state.requestId);
      const operation = ctx.state.operation;
      if (options.validateResponses && operation && error.code !== "INTERNAL") {
        const violation = contractViolation(operation, status, body);
        if (violation) {
          ctx.state.log.error(
            { operationId: operation.operationId, code: error.code, status },
            `error response violates the spec: ${violation}`,
          );
          ({ status, body } = render(internal(), ctx.state.requestId));
        }
      }
      ctx.status = status;
      if (error.retryAfterSeconds !== undefined) ctx.set("Retry-After", String(error.retryAfterSeconds));
      ctx.type = JSON_API;
      ctx.body = body;
    }
  };
}
