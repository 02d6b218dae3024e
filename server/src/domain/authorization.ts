/** Every permission a grant can carry. */
export const PERMISSIONS = [
  "org:admin",
  "workspace:read",
  "workspace:write",
  "workspace:delete",
  "run:read",
  "run:create",
  "run:approve",
  "run:cancel",
  "run:recover",
  "policy:override_soft",
  "artifact:read",
  "artifact:read_sensitive",
  "state:read",
  "state:recover",
] as const;
/** A permission. */
export type Permission = (typeof PERMISSIONS)[number];

/** The built-in roles an API token or a membership carries. */
export const ROLES = ["viewer", "operator", "admin"] as const;
/** A role: a named set of permissions. */
export type Role = (typeof ROLES)[number];

/** The levels of the authorization boundary, outermost first. */
export const SCOPE_KINDS = ["organization", "project", "workspace"] as const;
/** A scope kind. */
export type ScopeKind = (typeof SCOPE_KINDS)[number];

const VIEWER: readonly Permission[] = ["workspace:read", "run:read", "artifact:read"];
const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  viewer: VIEWER,
  // The raw plan (artifact:read_sensitive), emergency state (state:recover) and workspace:delete
  // are sensitive: only admins hold them, and destroy capabilities exist for nobody.
  operator: [...VIEWER, "run:create", "workspace:write", "run:approve", "run:cancel", "state:read"],
  // run:recover (resolving an uncertain apply) is kept to organization admins, and so is
  // policy:override_soft (overriding a soft-mandatory policy failure): an operator may approve a
  // plan, but waiving the organization's own policy is an admin's decision.
  // org:admin implies every permission inside the organization (see isAllowed).
  admin: ["org:admin"],
};

/** A grant as authorization sees it. `permission` is a string because rows are not trusted. */
export interface GrantLike {
  scopeKind: ScopeKind;
  scopeId: string;
  permission: string;
  /** The organization a project or workspace scope lies in, when known (memberships). */
  organizationId?: string;
}

/** Who is asking: a site admin, or a principal holding grants. */
export interface PrincipalLike {
  siteAdmin: boolean;
  grants: readonly GrantLike[];
}

/** The object being acted on, with every level of its boundary that applies. */
export interface AuthorizationTarget {
  organizationId: string;
  projectId?: string;
  workspaceId?: string;
}

/** Whether `value` is one of PERMISSIONS. */
export function isPermission(value: unknown): value is Permission {
  return typeof value === "string" && (PERMISSIONS as readonly string[]).includes(value);
}

/** Whether the permission hands out unredacted plan or state bytes (sessions need a fresh step-up). */
export function isSensitivePermission(permission: Permission): boolean {
  return permission === "artifact:read_sensitive" || permission === "state:recover";
}

/** Whether `value` is one of ROLES. */
export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

/**
 * The permissions a role grants at a scope, in a fixed order. An organization admin holds
 * `org:admin`, which implies every permission in the organization (see isAllowed). Below the
 * organization `org:admin` implies nothing but itself, so an admin of a project or a workspace
 * holds every permission, spelled out, at that scope only: what an organization admin may do
 * there (force-unlock, recovery, raw plans included), and nothing outside it (the
 * organization-level operations check `org:admin` on the organization, which it does not cover).
 */
export function permissionsForRole(role: Role, scope: ScopeKind = "organization"): readonly Permission[] {
  if (role === "admin" && scope !== "organization") return PERMISSIONS;
  return ROLE_PERMISSIONS[role];
}

/**
 * Whether the principal may use `permission` on the target: always for a site admin; otherwise
 * when a grant scoped to the target's organization, project or workspace carries that permission,
 * or an organization-scoped `org:admin` grant covers the target's organization.
 */
export function isAllowed(principal: PrincipalLike, permission: Permission, target: AuthorizationTarget): boolean {
  if (principal.siteAdmin) return true;
  return principal.grants.some((grant) => {
    if (!scopeCoversTarget(grant, target)) return false;
    if (grant.permission === permission) return true;
    return grant.permission === "org:admin" && grant.scopeKind === "organization";
  });
}

/**
 * Whether the principal holds `permission` anywhere: a site admin always; otherwise a grant of
 * that permission at any scope, or an organization-scoped `org:admin`. This is the check the
 * operation binding makes before any handler runs (from the operation's
 * `x-stackship-permission`); it looks at no object, so its answer never depends on whether the
 * addressed object exists. Handlers then check the object itself (`isAllowed` on its target).
 */
export function holdsAnywhere(principal: PrincipalLike, permission: Permission): boolean {
  if (principal.siteAdmin) return true;
  return principal.grants.some(
    (grant) =>
      grant.permission === permission || (grant.permission === "org:admin" && grant.scopeKind === "organization"),
  );
}

/**
 * Whether the principal may use `permission` somewhere inside the organization: on the
 * organization itself (isAllowed), or on a project or workspace of it through a grant that names
 * the organization (a scoped membership). Organization-level lists use it to let a scoped member
 * see the organization, then filter each item with isAllowed.
 */
export function isAllowedSomewhereIn(
  principal: PrincipalLike,
  permission: Permission,
  organizationId: string,
): boolean {
  if (isAllowed(principal, permission, { organizationId })) return true;
  return principal.grants.some(
    (grant) =>
      grant.organizationId === organizationId && grant.scopeKind !== "organization" && grant.permission === permission,
  );
}

/**
 * What an operation's `x-stackship-permission` may say: a permission, `session` (a signed-in
 * dashboard session), `site:admin` (a deployment administrator), `authenticated` (any caller who
 * authenticated; the handler shows only what that caller may see), or `none` (no authentication).
 */
export const OPERATION_REQUIREMENTS = ["none", "authenticated", "session", "site:admin", ...PERMISSIONS] as const;
/** An operation's `x-stackship-permission`. */
export type OperationRequirement = (typeof OPERATION_REQUIREMENTS)[number];

function scopeCoversTarget(grant: GrantLike, target: AuthorizationTarget): boolean {
  switch (grant.scopeKind) {
    case "organization":
      return grant.scopeId === target.organizationId;
    case "project":
      return target.projectId !== undefined && grant.scopeId === target.projectId;
    case "workspace":
      return target.workspaceId !== undefined && grant.scopeId === target.workspaceId;
    default: {
      const unknownScope: never = grant.scopeKind;
      void unknownScope;
      return false;
    }
  }
}
