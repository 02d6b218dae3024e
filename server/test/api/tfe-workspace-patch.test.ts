// PATCH of workspaces (and projects) at the TFE HTTP level: what the CLI and the tfe provider send,
// the settings StackShip fixes and refuses to change, tags, and project renames.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { expectNothingWritten } from "../support/database.ts";
import { createWorkspace, pinnedOpenTofuVersion } from "../support/factories.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import { answerAs, firstError, type Tfe } from "../support/documents.ts";
import { api, JSON_API, setUp } from "../support/tfe-runs-fixtures.ts";

/** The clock of the tests that pass it to their server. */
let clock = new Date("2026-03-01T10:00:00.000Z");

/** PATCH /workspaces/:id with a `workspaces` document of these attributes, as go-tfe sends it. */
function patchWorkspace(server: TestServer, token: string, id: string, attributes: Record<string, unknown>) {
  return api(server, token, "PATCH", `/workspaces/${id}`, JSON.stringify({ data: { type: "workspaces", attributes } }));
}

// ---------------------------------------------------------------------------------------------
const patch = suite("PATCH workspace (tfe)");

testEachServer(
  patch,
  "accepts terraform-version: a provided version pins it, anything else keeps the workspace's; never fails",
  async (server) => {
    const { token, workspace } = await setUp(server);
    for (const [body, contentType] of [
      [
        JSON.stringify({ data: { type: "workspaces", attributes: { "terraform-version": pinnedOpenTofuVersion() } } }),
        JSON_API,
      ],
      [JSON.stringify({ data: { type: "workspaces", attributes: { "terraform-version": "0.0.1" } } }), JSON_API],
      [
        JSON.stringify({ data: { type: "workspaces", attributes: { "terraform-version": "latest" } } }),
        "application/json",
      ],
      [undefined, JSON_API],
    ] as const) {
      const patched = answerAs<Tfe["WorkspaceDocument"]>(
        await api(server, token, "PATCH", `/workspaces/${workspace.id}`, body, contentType),
      );
      assert.is(patched.status, 200, JSON.stringify(patched.json));
      assert.is(patched.json.data.type, "workspaces");
      assert.is(patched.json.data.attributes["terraform-version"], pinnedOpenTofuVersion());
    }
  },
);

testEachServer(
  patch,
  "applies name, description and working-directory (audited, updated-at moves, found by the new name) and refuses a taken name with 409, writing nothing",
  async (server) => {
    const { organizationName, token, workspace } = await setUp(server);
    await createWorkspace(server, token, organizationName, { name: "taken" });
    const before = answerAs<Tfe["WorkspaceDocument"]>(await api(server, token, "GET", `/workspaces/${workspace.id}`));
    clock = new Date(clock.getTime() + 60_000);
    const attributes = {
      name: "renamed",
      description: "The app",
      "working-directory": "stacks/app",
      "auto-apply": false,
      "allow-destroy-plan": false,
      "queue-all-runs": true,
      "execution-mode": "remote",
    };
    const patched = answerAs<Tfe["WorkspaceDocument"]>(await patchWorkspace(server, token, workspace.id, attributes));
    assert.is(patched.status, 200, JSON.stringify(patched.json));
    const a = patched.json.data.attributes;
    assert.is(a.name, "renamed");
    assert.is(a.description, "The app");
    assert.is(a["working-directory"], "stacks/app");
    assert.is(a["auto-apply"], false);
    assert.is(a["queue-all-runs"], true);
    assert.is(a["execution-mode"], "remote");
    assert.is(a["created-at"], before.json.data.attributes["created-at"]);
    assert.is(a["updated-at"], clock.toISOString());
    assert.ok(a["updated-at"] > before.json.data.attributes["updated-at"]);

    const byNewName = answerAs<Tfe["WorkspaceDocument"]>(
      await api(server, token, "GET", `/organizations/${organizationName}/workspaces/renamed`),
    );
    assert.is(byNewName.status, 200);
    assert.is(byNewName.json.data.id, workspace.id);
    assert.is((await api(server, token, "GET", `/organizations/${organizationName}/workspaces/app`)).status, 404);
    const audited = (await server.db
      .knex("audit_events")
      .where({ action: "workspace.updated", target_id: workspace.id })) as { data: unknown }[];
    assert.is(audited.length, 1);

    // The same document again changes nothing and moves nothing.
    clock = new Date(clock.getTime() + 60_000);
    const again = answerAs<Tfe["WorkspaceDocument"]>(await patchWorkspace(server, token, workspace.id, attributes));
    assert.is(again.json.data.attributes["updated-at"], a["updated-at"]);

    const taken = await patchWorkspace(server, token, workspace.id, { name: "taken", description: "lost" });
    assert.is(taken.status, 409, JSON.stringify(taken.json));
    assert.is(firstError(taken.json).code, "WORKSPACE_NAME_TAKEN");
    const shown = answerAs<Tfe["WorkspaceDocument"]>(await api(server, token, "GET", `/workspaces/${workspace.id}`));
    assert.is(shown.json.data.attributes.name, "renamed");
    assert.is(shown.json.data.attributes.description, "The app");
  },
  { clock: () => clock },
);

testEachServer(
  patch,
  "refuses auto-apply, destroy plans and every fixed setting's other value with 422 on update and create, writing nothing",
  async (server) => {
    const { organizationName, token, workspace } = await setUp(server);
    const refusals: [Record<string, unknown>, string, RegExp][] = [
      [{ "auto-apply": true, name: "other" }, "RUN_AUTO_APPLY_FORBIDDEN", /without -auto-approve/],
      [{ "auto-apply-run-trigger": true }, "RUN_AUTO_APPLY_FORBIDDEN", /auto-apply-run-trigger/],
      [{ "allow-destroy-plan": true, description: "x" }, "RUN_DESTROY_FORBIDDEN", /allow_destroy_plan = false/],
      [{ "auto-destroy-at": "2030-01-01T00:00:00Z" }, "RUN_DESTROY_FORBIDDEN", /auto-destroy-at/],
      [{ "auto-destroy-activity-duration": "3d" }, "RUN_DESTROY_FORBIDDEN", /auto-destroy-activity-duration/],
      [{ "queue-all-runs": false }, "DOCUMENT_INVALID", /queue-all-runs/],
      [{ "execution-mode": "local" }, "DOCUMENT_INVALID", /execution-mode/],
      [{ "execution-mode": "agent" }, "DOCUMENT_INVALID", /execution-mode/],
      [{ operations: false }, "DOCUMENT_INVALID", /operations/],
      [{ "file-triggers-enabled": false }, "DOCUMENT_INVALID", /file-triggers-enabled/],
      [{ "speculative-enabled": false }, "DOCUMENT_INVALID", /speculative-enabled/],
      [{ "trigger-prefixes": ["modules/"] }, "DOCUMENT_INVALID", /trigger-prefixes/],
      [{ "trigger-patterns": ["**/*.tf"] }, "DOCUMENT_INVALID", /trigger-patterns/],
      [{ "global-remote-state": true }, "DOCUMENT_INVALID", /global-remote-state/],
      [{ "project-remote-state": true }, "DOCUMENT_INVALID", /project-remote-state/],
      [{ "assessments-enabled": true }, "DOCUMENT_INVALID", /assessments-enabled/],
      [{ "working-directory": "../outside" }, "DOCUMENT_INVALID", /working-directory/],
    ];
    const before = answerAs<Tfe["WorkspaceDocument"]>(await api(server, token, "GET", `/workspaces/${workspace.id}`));
    for (const [attributes, code, detail] of refusals) {
      const label = JSON.stringify(attributes);
      const patched = await patchWorkspace(server, token, workspace.id, attributes);
      assert.is(patched.status, 422, label);
      assert.is(firstError(patched.json).code, code, label);
      assert.match(firstError(patched.json).detail!, detail, label);
      const created = await api(
        server,
        token,
        "POST",
        `/organizations/${organizationName}/workspaces`,
        JSON.stringify({ data: { type: "workspaces", attributes: { ...attributes, name: "fresh" } } }),
      );
      assert.is(created.status, 422, label);
      assert.is(firstError(created.json).code, code, label);
    }
    assert.equal(
      ((await api(server, token, "GET", `/workspaces/${workspace.id}`)).json as Tfe["WorkspaceDocument"]).data,
      before.json.data,
    );
    assert.is((await api(server, token, "GET", `/organizations/${organizationName}/workspaces/fresh`)).status, 404);
    assert.equal(await server.db.knex("audit_events").where({ action: "workspace.updated" }), []);
  },
);

testEachServer(
  patch,
  "accepts the settings the tfe provider sends by default as what StackShip does, and shows them so (no drift)",
  async (server) => {
    const { organizationName, token } = await setUp(server);
    // What tfe_workspace (provider 0.79) sends on create with only name, description and working_directory set.
    const providerDefaults = {
      "auto-apply-run-trigger": false,
      "file-triggers-enabled": true,
      "queue-all-runs": true,
      "speculative-enabled": true,
      "structured-run-output-enabled": true,
      "setting-overwrites": { "execution-mode": false, "agent-pool": false },
    };
    const created = answerAs<Tfe["WorkspaceDocument"]>(
      await api(
        server,
        token,
        "POST",
        `/organizations/${organizationName}/workspaces`,
        JSON.stringify({
          data: {
            type: "workspaces",
            attributes: {
              name: "by-provider",
              description: "d",
              "working-directory": "",
              "allow-destroy-plan": false,
              ...providerDefaults,
            },
          },
        }),
      ),
    );
    assert.is(created.status, 201, JSON.stringify(created.json));
    const id = created.json.data.id;
    // What it sends on update (every setting, from its state), and the empty trigger lists.
    const updated = await api(
      server,
      token,
      "PATCH",
      `/workspaces/${id}`,
      JSON.stringify({
        data: {
          type: "workspaces",
          attributes: {
            name: "by-provider",
            "allow-destroy-plan": false,
            "global-remote-state": false,
            "working-directory": "",
            ...providerDefaults,
            "trigger-prefixes": [],
            "trigger-patterns": null,
          },
        },
      }),
    );
    assert.is(updated.status, 200, JSON.stringify(updated.json));
    const a = ((await api(server, token, "GET", `/workspaces/${id}`)).json as Tfe["WorkspaceDocument"]).data
      .attributes as Record<string, unknown>;
    for (const [name, value] of Object.entries(providerDefaults))
      if (name !== "setting-overwrites") assert.equal(a[name], value, name);
    assert.is(a["allow-destroy-plan"], false);
    assert.equal(a["trigger-prefixes"], []);
    assert.equal(a["trigger-patterns"], []);
    assert.is(a["global-remote-state"], false);
    assert.is(a["assessments-enabled"], false);
    assert.is(a["working-directory"], "");
    const consumers = answerAs<Tfe["WorkspaceListDocument"]>(
      await api(server, token, "GET", `/workspaces/${id}/relationships/remote-state-consumers`),
    );
    assert.is(consumers.status, 200);
    assert.equal(consumers.json.data, []);
    assert.is(consumers.json.meta.pagination["total-count"], 0);
  },
);

testEachServer(
  patch,
  "lists a workspace's tags by name and removes tags (absent ones are no error), audited",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const tags = (names: string[]) =>
      JSON.stringify({ data: names.map((name) => ({ type: "tags", attributes: { name } })) });
    const changeTags = async (method: "POST" | "DELETE", names: string[]) =>
      (await api(server, token, method, `/workspaces/${workspace.id}/relationships/tags`, tags(names))).status;
    assert.is(await changeTags("POST", ["tag2", "tag1", "tag3"]), 204);
    const listed = answerAs<Tfe["TagListDocument"]>(
      await api(server, token, "GET", `/workspaces/${workspace.id}/relationships/tags`),
    );
    assert.is(listed.status, 200, JSON.stringify(listed.json));
    assert.equal(
      listed.json.data,
      ["tag1", "tag2", "tag3"].map((name) => ({ type: "tags", id: name, attributes: { name } })),
    );
    assert.is(listed.json.meta.pagination["total-count"], 3);
    const paged = answerAs<Tfe["TagListDocument"]>(
      await api(server, token, "GET", `/workspaces/${workspace.id}/relationships/tags?page[size]=2&page[number]=2`),
    );
    assert.equal(
      paged.json.data.map((tag) => tag.id),
      ["tag3"],
    );

    assert.is(await changeTags("DELETE", ["tag1", "tag2", "never-there"]), 204);
    const after = answerAs<Tfe["WorkspaceDocument"]>(await api(server, token, "GET", `/workspaces/${workspace.id}`));
    assert.equal(after.json.data.attributes["tag-names"], ["tag3"]);
    const removed = (await server.db
      .knex("audit_events")
      .where({ action: "workspace.tags_removed", target_id: workspace.id })) as unknown[];
    assert.is(removed.length, 1);
    const invalid = await api(
      server,
      token,
      "DELETE",
      `/workspaces/${workspace.id}/relationships/tags`,
      JSON.stringify({ data: [{ type: "tags", id: "tag3" }] }),
    );
    assert.ok(invalid.status === 400 || invalid.status === 422, String(invalid.status));
    assert.equal(
      ((await api(server, token, "GET", `/workspaces/${workspace.id}`)).json as Tfe["WorkspaceDocument"]).data
        .attributes["tag-names"],
      ["tag3"],
    );
  },
);

testEachServer(
  patch,
  "PATCH projects/{id} renames a project (audited), refuses a taken name with 409, a description and renaming the Default Project with 422",
  async (server) => {
    const { organizationName, token, workspace } = await setUp(server);
    const defaultProjectId = (
      (await api(server, token, "GET", `/workspaces/${workspace.id}`)).json as Tfe["WorkspaceDocument"]
    ).data.relationships.project.data!.id;
    const keeps = await api(
      server,
      token,
      "PATCH",
      `/projects/${defaultProjectId}`,
      JSON.stringify({ data: { type: "projects", attributes: { name: "elsewhere" } } }),
    );
    assert.is(keeps.status, 422, JSON.stringify(keeps.json));
    assert.match(firstError(keeps.json).detail!, "keeps its name");
    const createProject = (attributes: Record<string, unknown>) =>
      api(
        server,
        token,
        "POST",
        `/organizations/${organizationName}/projects`,
        JSON.stringify({ data: { type: "projects", attributes } }),
      );
    const projectId = answerAs<Tfe["ProjectDocument"]>(await createProject({ name: "apps" })).json.data.id;
    const projectName = async () =>
      ((await api(server, token, "GET", `/projects/${projectId}`)).json as Tfe["ProjectDocument"]).data.attributes.name;
    const other = await createProject({ name: "other" });
    assert.is(other.status, 201, JSON.stringify(other.json));
    const update = async (attributes: Record<string, unknown>) =>
      answerAs<Tfe["ProjectDocument"]>(
        await api(
          server,
          token,
          "PATCH",
          `/projects/${projectId}`,
          JSON.stringify({ data: { type: "projects", attributes } }),
        ),
      );

    const renamed = await update({ name: "platform", description: "" });
    assert.is(renamed.status, 200, JSON.stringify(renamed.json));
    assert.is(renamed.json.data.attributes.name, "platform");
    assert.is(await projectName(), "platform");
    assert.is(
      ((await server.db.knex("audit_events").where({ action: "project.renamed", target_id: projectId })) as unknown[])
        .length,
      1,
    );

    const taken = await update({ name: "other" });
    assert.is(taken.status, 409, JSON.stringify(taken.json));
    assert.is(firstError(taken.json).code, "PROJECT_NAME_TAKEN");
    const described = await update({ name: "again", description: "The platform team" });
    assert.is(described.status, 422, JSON.stringify(described.json));
    assert.is(firstError(described.json).source!.pointer, "/data/attributes/description");
    assert.is(await projectName(), "platform");

    // Create likewise refuses a description rather than dropping it, and creates nothing.
    const describedNew = await expectNothingWritten(
      server,
      () => createProject({ name: "docs", description: "Docs team" }),
      ["projects"],
    );
    assert.is(describedNew.status, 422, JSON.stringify(describedNew.json));
    assert.is(firstError(describedNew.json).code, "DOCUMENT_INVALID");
    assert.is(firstError(describedNew.json).source!.pointer, "/data/attributes/description");
    const plainNew = await createProject({ name: "docs", description: "" });
    assert.is(plainNew.status, 201, JSON.stringify(plainNew.json));
  },
);

patch.run();
