// POST /api/v2/runs: the `workspace` relationship must name a workspace. The spec says so
// (ToOneRequired: `data` an object with a non-empty id), so `data: null` or an empty id is a
// 422 DOCUMENT_INVALID pointing at the relationship's data, and nothing is written.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { expectNothingWritten } from "../support/database.ts";
import { seededOrganization } from "../support/seeded-runs.ts";
import { testEachServer } from "../support/test-server.ts";
import { firstError, jsonOf, type Tfe } from "../support/documents.ts";

const test = suite("tfe run workspace relationship");

testEachServer(
  test,
  "data: null and an empty id are refused 422 DOCUMENT_INVALID, writing nothing; a named workspace passes validation",
  async (server) => {
    const { org, workspace } = await seededOrganization(server);
    const post = (data: unknown) =>
      fetch(`${server.baseUrl}/api/v2/runs`, {
        method: "POST",
        headers: { Authorization: `Bearer ${org.token}`, "Content-Type": "application/vnd.api+json" },
        body: JSON.stringify({ data: { type: "runs", attributes: {}, relationships: { workspace: { data } } } }),
      });
    for (const [data, pointer] of [
      [null, "/data/relationships/workspace/data"],
      [{ type: "workspaces", id: "" }, "/data/relationships/workspace/data/id"],
    ] as const) {
      const response = await expectNothingWritten(server, () => post(data));
      assert.is(response.status, 422, JSON.stringify(data));
      const error = firstError(await response.json());
      assert.is(error.code, "DOCUMENT_INVALID");
      assert.is(error.source!.pointer, pointer);
    }
    // One character is enough for validation: the workspace is then looked up (a missing one is 404).
    assert.is((await post({ type: "workspaces", id: "w" })).status, 404);
    // The real workspace is accepted past validation (it has no configuration version yet: not a 422 DOCUMENT_INVALID on the relationship).
    const named = await post({ type: "workspaces", id: workspace.id });
    const body = await jsonOf<Partial<Tfe["ErrorDocument"]>>(named);
    assert.not.ok(
      body.errors?.some((e) => e.source?.pointer?.startsWith("/data/relationships/workspace")),
      JSON.stringify(body),
    );
  },
);

test.run();
