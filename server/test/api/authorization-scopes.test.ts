// Scoped memberships: a role given on the organization, on one project or on one workspace grants
// what that scope implies, inside it, and nothing outside it. One matrix per scope: viewer,
// operator and admin × representative operations (read, write, the admin-only recovery and raw
// plan, the organization-level membership list) inside the scope and just outside it.
//
// Before the fix a project or workspace admin held only the literal `org:admin` at its scope,
// which implies nothing there: it could not even read its own workspace (404 everywhere).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Role } from "../../src/domain/authorization.ts";
import { createToken, createWorkspace } from "../support/factories.ts";
import { seededOrganization, seedRunIn } from "../support/seeded-runs.ts";
import { signedInMember, type TestSession } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

type Place = "inside" | "outside";
type Expected = Record<Role, number>;
const ROLES_: readonly Role[] = ["viewer", "operator", "admin"];
const each = (status: number): Expected => ({ viewer: status, operator: status, admin: status });

/** One representative operation, called on a workspace (and a run in it). */
interface Probe {
  name: string;
  call(session: TestSession, place: { workspaceId: string; runId: string }): Promise<Response>;
}

let counter = 0;
const PROBES: Probe[] = [
  { name: "getWorkspace (workspace:read)", call: (s, p) => s.request("GET", `/v1/workspaces/${p.workspaceId}`) },
  { name: "getRunReview (run:read)", call: (s, p) => s.request("GET", `/v1/runs/${p.runId}/review`) },
  {
    name: "createVariable (workspace:write)",
    call: (s, p) =>
      s.request("POST", `/v1/workspaces/${p.workspaceId}/variables`, {
        body: { data: { type: "variables", attributes: { key: `k_${(counter += 1)}`, value: "v" } } },
      }),
  },
  {
    // The seeded run is not waiting for recovery: whoever may resolve it reaches the state check (409).
    name: "resolveRunRecovery (run:recover)",
    call: (s, p) =>
      s.request("POST", `/v1/runs/${p.runId}/actions/resolve-recovery`, {
        body: {
          data: {
            type: "recovery-resolutions",
            attributes: { resolution: "keep_current_state", reason: "scope matrix" },
          },
        },
      }),
  },
  {
    name: "downloadRawPlan (artifact:read_sensitive)",
    call: (s, p) =>
      s.request("POST", `/v1/runs/${p.runId}/downloads/raw-plan`, {
        body: { data: { type: "download-requests", attributes: { reason: "scope matrix" } } },
      }),
  },
];

/** Expected statuses per probe inside the scope (outside it: see `mismatches`). */
const INSIDE: Record<string, Expected> = {
  "getWorkspace (workspace:read)": each(200),
  "getRunReview (run:read)": each(200),
  "createVariable (workspace:write)": { viewer: 403, operator: 201, admin: 201 },
  "resolveRunRecovery (run:recover)": { viewer: 403, operator: 403, admin: 409 },
  "downloadRawPlan (artifact:read_sensitive)": { viewer: 403, operator: 403, admin: 200 },
};

interface World {
  server: TestServer;
  token: string;
  /** The workspace every scope contains (project P). */
  inside: { workspaceId: string; runId: string };
  /** Same project P, another workspace: outside a workspace scope. */
  sibling: { workspaceId: string; runId: string };
  /** Another project Q of the same organization: outside a project scope. */
  otherProject: { workspaceId: string; runId: string };
  /** Another organization: outside the organization scope. */
  otherOrganization: { workspaceId: string; runId: string };
  projectId: string;
}

async function world(server: TestServer): Promise<World> {
  const { org, workspace } = await seededOrganization(server);
  const otherToken = (await createToken(server, server.bootstrapToken, "other", "admin")).token;
  const project = (await server.services.stores.projects.getByName(org.organizationId, "Default Project"))!;
  const projectQ = await fetch(`${server.baseUrl}/v1/organizations/acme/projects`, {
    method: "POST",
    headers: { Authorization: `Bearer ${org.token}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({ data: { type: "projects", attributes: { name: "q" } } }),
  });
  assert.is(projectQ.status, 201, await projectQ.clone().text());
  const projectQId = ((await projectQ.json()) as { data: { id: string } }).data.id;
  const sibling = await createWorkspace(server, org.token, "acme", { name: "sibling" });
  const elsewhere = await createWorkspace(server, org.token, "acme", { name: "elsewhere" });
  // v1 creates workspaces in the default project; this one moves to project q.
  await server.db.knex("workspaces").where({ id: elsewhere.id }).update({ project_id: projectQId });
  const foreign = await createWorkspace(server, otherToken, "other", { name: "foreign" });
  const place = async (token: string, workspaceId: string) => ({
    workspaceId,
    runId: (await seedRunIn(server, token, workspaceId)).run.id,
  });
  return {
    server,
    token: org.token,
    projectId: project.id,
    inside: await place(org.token, workspace.id),
    sibling: await place(org.token, sibling.id),
    otherProject: await place(org.token, elsewhere.id),
    otherOrganization: await place(otherToken, foreign.id),
  };
}

async function mismatches(w: World, scope: "organization" | "project" | "workspace"): Promise<string[]> {
  const found: string[] = [];
  const outside = scope === "organization" ? w.otherOrganization : scope === "project" ? w.otherProject : w.sibling;
  for (const role of ROLES_) {
    const member = await signedInMember(
      w.server,
      "acme",
      role,
      scope === "project"
        ? { project_id: w.projectId }
        : scope === "workspace"
          ? { workspace_id: w.inside.workspaceId }
          : {},
    );
    for (const probe of PROBES) {
      for (const [where, target, expected] of [
        ["inside", w.inside, INSIDE[probe.name][role]],
        // Outside, the object is invisible (404), unless the caller holds the permission nowhere:
        // then the operation binding refuses before any object is looked at (403).
        ["outside", outside, INSIDE[probe.name][role] === 403 ? 403 : 404],
      ] as [Place, { workspaceId: string; runId: string }, number][]) {
        const response = await probe.call(member.session, target);
        if (response.status !== expected)
          found.push(
            `${scope} ${role}, ${probe.name} ${where}: ${response.status} (expected ${expected}) ${(await response.text()).slice(0, 200)}`,
          );
      }
    }
    // Every member sees the organization, and lists exactly the workspaces its scope covers.
    const organization = await member.session.request("GET", "/v1/organizations/acme");
    if (organization.status !== 200)
      found.push(`${scope} ${role}, getOrganization: ${organization.status} (expected 200)`);
    const listed = await member.session.request("GET", "/v1/organizations/acme/workspaces");
    const ids =
      listed.status === 200
        ? ((await listed.json()) as { data: Array<{ id: string }> }).data.map((w) => w.id).sort()
        : [`status ${listed.status}`];
    const covered =
      scope === "organization"
        ? [w.inside, w.sibling, w.otherProject]
        : scope === "project"
          ? [w.inside, w.sibling]
          : [w.inside];
    const expectedIds = covered.map((place) => place.workspaceId).sort();
    if (JSON.stringify(ids) !== JSON.stringify(expectedIds))
      found.push(`${scope} ${role}, listWorkspaces: ${JSON.stringify(ids)} (expected ${JSON.stringify(expectedIds)})`);
    // The organization's own administration (org:admin on the organization) is an organization admin's only.
    const memberships = await member.session.request("GET", "/v1/organizations/acme/memberships");
    const expected = role !== "admin" ? 403 : scope === "organization" ? 200 : 404;
    if (memberships.status !== expected)
      found.push(`${scope} ${role}, listMemberships: ${memberships.status} (expected ${expected})`);
  }
  return found;
}

const test = suite("authorization by scope");

for (const scope of ["organization", "project", "workspace"] as const) {
  testEachServer(
    test,
    `a ${scope}-scoped viewer, operator and admin get what the scope implies inside it and nothing outside`,
    async (server) => {
      assert.equal(await mismatches(await world(server), scope), []);
    },
  );
}

test.run();
