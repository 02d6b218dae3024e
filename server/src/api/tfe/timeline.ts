import type { Run } from "../../domain/records.ts";
import type { RequestContext } from "../../http/app.ts";
import type { RunTimeline } from "./presenters.ts";

/** What the run's status timestamps are read from: its phase attempts and its review decision. */
export async function timelineOf(ctx: RequestContext, run: Run): Promise<RunTimeline> {
  const [attempts, review] = await Promise.all([ctx.services.stores.attempts.listByRun(run.id), ctx.services.stores.reviews.getByRun(run.id)]);
  return { attempts, review };
}
