import type { Run } from "../../domain/records.ts";
import type { RequestContext } from "../../http/app.ts";
import { presentUser } from "./presenters.ts";
import type { RunTimeline } from "./run-status.ts";
import type { components } from "../../../../generated/tfe/types.gen.ts";

/** What the run's status timestamps are read from: its phase attempts and its review decision. */
export async function timelineOf(ctx: RequestContext, run: Run): Promise<RunTimeline> {
  const [attempts, review] = await Promise.all([
    ctx.services.stores.attempts.listByRun(run.id),
    ctx.services.stores.reviews.getByRun(run.id),
  ]);
  return { attempts, review };
}

/** The `users` resource of a principal id: a user by display name, a token's principal by its name. */
export async function userResource(ctx: RequestContext, id: string): Promise<components["schemas"]["User"]> {
  const principal = await ctx.services.stores.principals.getById(id);
  if (principal) return presentUser(id, principal.name, true);
  const user = await ctx.services.stores.users.getById(id);
  return presentUser(id, user?.displayName ?? id, user === undefined);
}
