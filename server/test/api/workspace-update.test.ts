// PATCH /v1/workspaces/{id}: rename, description and working directory (the dashboard's general
// settings), applied together with the switches, audited with before and after, refused whole.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createProject, getWorkspace, listWorkspaces, updateWorkspace } from "../../../client/src/index.ts";
import { expectNothingWritten } from "../support/database.ts";
import { createWorkspace } from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { seededOrganization } from "../support/seeded-runs.ts";
import { signedInMember } from "../support/sessions.ts";
import { testEachServer } from "../support/test-server.ts";
import type { AuditEventRow } from "../../src/store/rows.ts";

const update = suite("updateWorkspace general settings (/v1)");

testEachServer(
  update,
  "renames, describes and moves the working directory; the new name lists and the change is audited",
  async (server) => {
    const { org, workspace } = await seededOrganization(server);
    const patch = (attributes: Record<string, unknown>) =>
      updateWorkspace({
        client: server.v1(org.token),
        path: { workspace_id: workspace.id },
        body: { data: { type: "workspaces", attributes } } as never,
      });
    const renamed = expectStatus(
      await patch({ name: "app-prod", description: "the app", working_directory: "infra/prod" }),
      200,
    ).data;
    assert.equal(
      [renamed.attributes.name, renamed.attributes.description, renamed.attributes.working_directory],
      ["app-prod", "the app", "infra/prod"],
    );
    const names = expectStatus(
      await listWorkspaces({ client: server.v1(org.token), path: { organization_name: "acme" } }),
      200,
    ).data.map((w) => w.attributes.name);
    assert.ok(names.includes("app-prod") && !names.includes("app"), names.join(","));
    const event = await server.db
      .knex("audit_events")
      .where({ target_id: workspace.id, action: "workspace.updated" })
      .first<AuditEventRow | undefined>();
    assert.ok(event, "audited");
    assert.is(expectStatus(await patch({ description: null }), 200).data.attributes.description, null);
    assert.is(
      expectStatus(await getWorkspace({ client: server.v1(org.token), path: { workspace_id: workspace.id } }), 200).data
        .attributes.name,
      "app-prod",
    );
  },
);

testEachServer(
  update,
  "a taken name, a bad name or working directory, and a viewer are refused, writing nothing",
  async (server) => {
    const { org, workspace } = await seededOrganization(server);
    await createWorkspace(server, org.token, "acme", { name: "taken" });
    const patch = (attributes: Record<string, unknown>, client = server.v1(org.token)) =>
      updateWorkspace({
        client,
        path: { workspace_id: workspace.id },
        body: { data: { type: "workspaces", attributes } } as never,
      });
    const tables = ["workspaces", "audit_events"];
    expectV1Error(
      await expectNothingWritten(server, () => patch({ name: "taken" }), tables),
      409,
      "WORKSPACE_NAME_TAKEN",
    );
    expectV1Error(
      await expectNothingWritten(server, () => patch({ name: "has space" }), tables),
      422,
      "DOCUMENT_INVALID",
    );
    expectV1Error(
      await expectNothingWritten(server, () => patch({ working_directory: "../escape" }), tables),
      422,
      "DOCUMENT_INVALID",
    );
    expectV1Error(
      await expectNothingWritten(server, () => patch({ working_directory: "/abs" }), tables),
      422,
      "DOCUMENT_INVALID",
    );
    const viewer = await signedInMember(server, "acme", "viewer");
    expectV1Error(
      await expectNothingWritten(server, () => patch({ name: "mine" }, viewer.session.client()), tables),
      403,
      "FORBIDDEN",
    );
  },
);

testEachServer(
  update,
  "an administrator moves a workspace to another project: project-scoped members gain and lose it; others may not move it",
  async (server) => {
    const { org, workspace } = await seededOrganization(server);
    const project = expectStatus(
      await createProject({
        client: server.v1(org.token),
        path: { organization_name: "acme" },
        body: { data: { type: "projects", attributes: { name: "payments" } } },
      }),
      201,
    ).data;
    const scoped = await signedInMember(server, "acme", "viewer", { project_id: project.id });
    const sees = async () =>
      (await getWorkspace({ client: scoped.session.client(), path: { workspace_id: workspace.id } })).response.status;
    assert.is(await sees(), 404, "not in the payments project yet");
    const operator = await signedInMember(server, "acme", "operator");
    const move = (client: ReturnType<typeof server.v1>, projectId: string) =>
      updateWorkspace({
        client,
        path: { workspace_id: workspace.id },
        body: {
          data: { type: "workspaces", attributes: { project_id: projectId, structured_run_output_enabled: true } },
        },
      });
    const tables = ["workspaces", "audit_events"];
    expectV1Error(
      await expectNothingWritten(server, () => move(operator.session.client(), project.id), tables),
      403,
      "FORBIDDEN",
    );
    expectV1Error(
      await expectNothingWritten(server, () => move(server.v1(org.token), "prj-0000000000000000"), tables),
      404,
      "NOT_FOUND",
    );
    const moved = expectStatus(await move(server.v1(org.token), project.id), 200).data;
    assert.is(moved.relationships.project.data.id, project.id);
    assert.is(await sees(), 200, "the payments project's viewer now reaches it");
    const event = (
      await server.db
        .knex("audit_events")
        .where({ target_id: workspace.id, action: "workspace.updated" })
        .select<AuditEventRow[]>("*")
    ).find((e) => String(e.data).includes("project_id"));
    assert.ok(event, "the move is audited");
  },
);

update.run();
