import type { PrincipalLike } from "../domain/authorization.ts";

/** The caller of an authenticated request. */
export interface AuthenticatedPrincipal extends PrincipalLike {
  id: string;
  /** The organization an organization token belongs to; null for the bootstrap administrator. */
  organizationId: string | null;
  tokenId: string | null;
}
