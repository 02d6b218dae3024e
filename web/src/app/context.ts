// The two @lit/context contexts every page consumes: the API client (the generated SDK from
// client/, same origin, cookie session plus CSRF header) and the session (user, CSRF token,
// organizations and the current one).
import { createContext } from "@lit/context";
import type { Client } from "@stackship/client";
import type { Session } from "./session.ts";

/** The v1 SDK client every read and change goes through. */
export const apiContext = createContext<Client>(Symbol("ss-api-client"));

/** The signed-in session (null while signed out or not yet known). */
export const sessionContext = createContext<Session | null>(Symbol("ss-session"));
