import { randomUUID } from "node:crypto";
import type { Middleware } from "koa";
import type { Logger } from "pino";
import type { RequestState } from "./errors.ts";

/** Gives every request an id (a sane incoming X-Request-Id is kept) and a child logger. */
export function requestId(logger: Logger): Middleware<RequestState> {
  return async (ctx, next) => {
    const incoming = ctx.get("x-request-id");
    const id = /^[A-Za-z0-9._-]{8,64}$/.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.state.log = logger.child({ request_id: id });
    ctx.set("X-Request-Id", id);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      ctx.state.log.info(
        {
          method: ctx.method,
          path: ctx.path,
          // A request cut off mid-body got no answer: no status to report.
          status: ctx.state.connectionClosed ? null : ctx.status,
          ...(ctx.state.connectionClosed ? { connection_closed: true } : {}),
          ms: Math.round(ms * 10) / 10,
        },
        "request",
      );
    }
  };
}
