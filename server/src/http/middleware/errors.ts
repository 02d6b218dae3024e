import type { Middleware } from "koa";
import { DomainError, isDomainError } from "../../domain/errors.ts";
import { JSON_API, errorObject, statusOf } from "../jsonapi.ts";

/** Renders a domain error for one API surface (the tfe surface shapes errors for the tofu CLI). */
export type ErrorRenderer = (error: DomainError, requestId: string) => { status: number; body: unknown };

/** The v1 rendering: a JSON:API error document whose status comes from the code catalogue. */
export const renderV1Error: ErrorRenderer = (error, requestId) => ({
  status: statusOf(error.code),
  body: { errors: [errorObject(error, requestId)] },
});

/**
 * The only place errors become responses. Domain errors keep their code; anything else is a
 * 500 with the request id, logged, and its message never reaches the client.
 */
export function errors(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (caught) {
      const error = isDomainError(caught)
        ? caught
        : new DomainError("INTERNAL", `An unexpected error occurred. Quote request id ${ctx.state.requestId} when reporting it.`);
      if (!isDomainError(caught)) ctx.state.log.error({ err: caught }, "unhandled error");
      const render: ErrorRenderer = ctx.state.renderError ?? renderV1Error;
      const { status, body } = render(error, ctx.state.requestId);
      ctx.status = status;
      if (error.retryAfterSeconds !== undefined) ctx.set("Retry-After", String(error.retryAfterSeconds));
      ctx.type = JSON_API;
      ctx.body = body;
    }
  };
}
