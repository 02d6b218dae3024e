import { DomainError } from "../../domain/errors.ts";
import { renderMetrics } from "../../metrics/database-gauges.ts";
import type { H } from "./types.ts";

/** Liveness: the process answers and its database does too. */
export const healthHandlers = {
  async getHealth({ ctx }) {
    try {
      await ctx.services.db.knex.raw("select 1");
    } catch (error) {
      ctx.log.error({ err: error }, "health check: database unreachable");
      throw new DomainError("INTERNAL", "The database does not answer.");
    }
    return { status: 200, body: { status: "ok", database: "ok", version: ctx.services.version } };
  },

  /** Prometheus metrics: this process's counters plus the database gauges (see spec/v1/paths/health.yaml). */
  async getMetrics({ ctx }) {
    return {
      status: 200,
      body: new TextEncoder().encode(await renderMetrics(ctx.services.stores, ctx.services.clock())),
    };
  },
} satisfies Partial<H>;
