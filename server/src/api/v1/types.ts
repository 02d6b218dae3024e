import type { Handlers } from "../../../../generated/v1/handlers.gen.ts";
import type { components } from "../../../../generated/v1/types.gen.ts";
import type { RequestContext } from "../../http/app.ts";

/** The handlers of the v1 surface (generated from its spec), bound to the request context. */
export type H = Handlers<RequestContext>;

/** The schemas of the v1 surface's documents. */
export type S = components["schemas"];
