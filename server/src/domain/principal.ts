import type { Permission, PrincipalLike } from "./authorization.ts";
import type { User } from "./records.ts";

/** How the caller authenticated: the deployment's bootstrap token, an API token, a run token, a dashboard session, or (no request: a verified webhook) the GitHub App. */
export type PrincipalKind = "bootstrap" | "token" | "run" | "user" | "github_app";

/** The dashboard session a `user` principal signed in with. */
export interface SessionScope {
  id: string;
  createdAt: string;
  expiresAt: string;
  steppedUpAt: string | null;
  csrfToken: string;
  user: User;
}

/** What a run token is scoped to: one run, one phase, the run's workspace. */
export interface RunScope {
  runId: string;
  phase: "plan" | "apply";
  workspaceId: string;
  /** The workspace-lock fence an apply-phase token is bound to; null for plan. */
  fence: number | null;
}

/**
 * What a run token holds on its run's workspace, besides the operations marked
 * `x-stackship-run-token` (which it may call whatever its grants). The sandbox's API channel lets
 * through only the operations these two allow.
 */
export const RUN_TOKEN_PERMISSIONS: readonly Permission[] = ["workspace:read"];

/** The caller of an authenticated request. */
export interface AuthenticatedPrincipal extends PrincipalLike {
  kind: PrincipalKind;
  /** A principal id; for a run token, the run's id (the run is the actor); for a session, the user's id. */
  id: string;
  /** The organization an organization token or a run belongs to; null for the bootstrap administrator. */
  organizationId: string | null;
  /** The API token or run token id; null for the bootstrap administrator. */
  tokenId: string | null;
  /** Set exactly when `kind` is `run`. */
  run?: RunScope;
  /** Set exactly when `kind` is `user`. */
  session?: SessionScope;
}

/** Whether the caller authenticated with a run token. */
export function isRunPrincipal(
  principal: AuthenticatedPrincipal | null | undefined,
): principal is AuthenticatedPrincipal & { kind: "run"; run: RunScope } {
  return principal?.kind === "run" && principal.run !== undefined;
}
