import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  isAllowed,
  isAllowedSomewhereIn,
  isPermission,
  isRole,
  PERMISSIONS,
  permissionsForRole,
  type GrantLike,
  type PrincipalLike,
} from "./authorization.ts";

const ORG = "org-aaaaaaaaaaaaaaaa";
const OTHER_ORG = "org-bbbbbbbbbbbbbbbb";
const PROJECT = "prj-aaaaaaaaaaaaaaaa";
const OTHER_PROJECT = "prj-bbbbbbbbbbbbbbbb";
const WORKSPACE = "ws-aaaaaaaaaaaaaaaa";
const OTHER_WORKSPACE = "ws-bbbbbbbbbbbbbbbb";

const workspaceTarget = { organizationId: ORG, projectId: PROJECT, workspaceId: WORKSPACE };

function holder(...grants: GrantLike[]): PrincipalLike {
  return { siteAdmin: false, grants };
}

const roles = suite("permissionsForRole");

roles("viewer reads, operator also creates, approves and cancels runs and writes workspaces, admin administers", () => {
  assert.equal([...permissionsForRole("viewer")].sort(), ["artifact:read", "run:read", "workspace:read"]);
  assert.equal([...permissionsForRole("operator")].sort(), [
    "artifact:read",
    "run:approve",
    "run:cancel",
    "run:create",
    "run:read",
    "state:read",
    "workspace:read",
    "workspace:write",
  ]);
  assert.equal([...permissionsForRole("admin")], ["org:admin"]);
});

roles(
  "an admin of a project or a workspace holds every permission at that scope; other roles are the same at every scope",
  () => {
    for (const scope of ["project", "workspace"] as const) {
      assert.equal([...permissionsForRole("admin", scope)], [...PERMISSIONS], scope);
      assert.equal(permissionsForRole("operator", scope), permissionsForRole("operator"), scope);
      assert.equal(permissionsForRole("viewer", scope), permissionsForRole("viewer"), scope);
    }
    assert.equal([...permissionsForRole("admin", "organization")], ["org:admin"]);
  },
);

roles("isRole and isPermission accept only members", () => {
  assert.ok(isRole("operator"));
  assert.not.ok(isRole("owner"));
  assert.ok(isPermission("run:create"));
  assert.not.ok(isPermission("run:apply"));
});

const allowed = suite("isAllowed");

allowed("a site admin may do anything anywhere, with no grants", () => {
  const admin = { siteAdmin: true, grants: [] };
  for (const permission of PERMISSIONS) assert.ok(isAllowed(admin, permission, { organizationId: OTHER_ORG }));
});

allowed("no grants, no access", () => {
  assert.not.ok(isAllowed(holder(), "run:read", workspaceTarget));
});

allowed("an organization grant covers the organization and everything in it", () => {
  const principal = holder({ scopeKind: "organization", scopeId: ORG, permission: "run:read" });
  assert.ok(isAllowed(principal, "run:read", { organizationId: ORG }));
  assert.ok(isAllowed(principal, "run:read", { organizationId: ORG, projectId: PROJECT }));
  assert.ok(isAllowed(principal, "run:read", workspaceTarget));
});

allowed("an organization grant does not cover another organization", () => {
  const principal = holder({ scopeKind: "organization", scopeId: ORG, permission: "run:read" });
  assert.not.ok(isAllowed(principal, "run:read", { organizationId: OTHER_ORG }));
});

allowed("a grant carries only its own permission", () => {
  const principal = holder({ scopeKind: "organization", scopeId: ORG, permission: "run:read" });
  assert.not.ok(isAllowed(principal, "run:create", workspaceTarget));
  assert.not.ok(isAllowed(principal, "workspace:read", workspaceTarget));
  assert.not.ok(isAllowed(principal, "org:admin", workspaceTarget));
});

allowed("a project grant covers its project and its workspaces only", () => {
  const principal = holder({ scopeKind: "project", scopeId: PROJECT, permission: "run:create" });
  assert.ok(isAllowed(principal, "run:create", { organizationId: ORG, projectId: PROJECT }));
  assert.ok(isAllowed(principal, "run:create", workspaceTarget));
  assert.not.ok(isAllowed(principal, "run:create", { organizationId: ORG }), "the organization itself");
  assert.not.ok(
    isAllowed(principal, "run:create", { organizationId: ORG, projectId: OTHER_PROJECT, workspaceId: OTHER_WORKSPACE }),
  );
});

allowed("a workspace grant covers that workspace only", () => {
  const principal = holder({ scopeKind: "workspace", scopeId: WORKSPACE, permission: "workspace:write" });
  assert.ok(isAllowed(principal, "workspace:write", workspaceTarget));
  assert.not.ok(isAllowed(principal, "workspace:write", { organizationId: ORG, projectId: PROJECT }));
  assert.not.ok(isAllowed(principal, "workspace:write", { ...workspaceTarget, workspaceId: OTHER_WORKSPACE }));
});

allowed("a scope id only matches at its own level", () => {
  // An id that happens to equal the organization id, granted at workspace level, is not an organization grant.
  const principal = holder({ scopeKind: "workspace", scopeId: ORG, permission: "run:read" });
  assert.not.ok(isAllowed(principal, "run:read", { organizationId: ORG }));
});

allowed("org:admin at organization scope implies every permission inside that organization", () => {
  const principal = holder({ scopeKind: "organization", scopeId: ORG, permission: "org:admin" });
  for (const permission of PERMISSIONS) {
    assert.ok(isAllowed(principal, permission, workspaceTarget), permission);
    assert.ok(isAllowed(principal, permission, { organizationId: ORG }), permission);
    assert.not.ok(isAllowed(principal, permission, { organizationId: OTHER_ORG }), `${permission} elsewhere`);
  }
});

allowed("org:admin granted at project or workspace scope implies nothing else", () => {
  const principal = holder(
    { scopeKind: "project", scopeId: PROJECT, permission: "org:admin" },
    { scopeKind: "workspace", scopeId: WORKSPACE, permission: "org:admin" },
  );
  assert.not.ok(isAllowed(principal, "run:create", workspaceTarget));
  assert.ok(isAllowed(principal, "org:admin", workspaceTarget), "only the literal permission");
});

allowed(
  "isAllowedSomewhereIn: the organization itself, or a project or workspace grant that names the organization",
  () => {
    const scoped = holder({
      scopeKind: "project",
      scopeId: PROJECT,
      permission: "workspace:read",
      organizationId: ORG,
    });
    assert.ok(isAllowedSomewhereIn(scoped, "workspace:read", ORG));
    assert.not.ok(isAllowedSomewhereIn(scoped, "workspace:read", OTHER_ORG));
    assert.not.ok(isAllowedSomewhereIn(scoped, "workspace:write", ORG));
    assert.not.ok(
      isAllowed(scoped, "workspace:read", { organizationId: ORG }),
      "the organization itself stays out of reach",
    );
    // A scoped grant that does not name its organization (an old row) proves nothing.
    assert.not.ok(
      isAllowedSomewhereIn(
        holder({ scopeKind: "workspace", scopeId: WORKSPACE, permission: "workspace:read" }),
        "workspace:read",
        ORG,
      ),
    );
    assert.ok(
      isAllowedSomewhereIn(
        holder({ scopeKind: "organization", scopeId: ORG, permission: "org:admin" }),
        "workspace:read",
        ORG,
      ),
    );
  },
);

allowed("any one matching grant among many is enough", () => {
  const principal = holder(
    { scopeKind: "organization", scopeId: OTHER_ORG, permission: "run:create" },
    { scopeKind: "workspace", scopeId: OTHER_WORKSPACE, permission: "run:create" },
    { scopeKind: "workspace", scopeId: WORKSPACE, permission: "run:create" },
  );
  assert.ok(isAllowed(principal, "run:create", workspaceTarget));
});

allowed("an unknown permission string in a grant matches nothing", () => {
  const principal = holder({ scopeKind: "organization", scopeId: ORG, permission: "run:*" });
  for (const permission of PERMISSIONS) assert.not.ok(isAllowed(principal, permission, workspaceTarget));
});

roles.run();
allowed.run();
