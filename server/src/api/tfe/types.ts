import type { Handlers } from "../../../../generated/tfe/handlers.gen.ts";
import type { components } from "../../../../generated/tfe/types.gen.ts";
import type { RequestContext } from "../../http/app.ts";

/** The handlers of the tfe surface (generated from its spec), bound to the request context. */
export type H = Handlers<RequestContext>;

/** The schemas of the tfe surface's documents. */
export type S = components["schemas"];
