// The workspace document's meta.permissions: what the caller may do with it (the dashboard shows
// only those controls). Viewer: nothing; operator: write; organization admin: write and verify.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createWorkspace as createWorkspaceCall, getWorkspace, updateWorkspace } from "../../../client/src/index.ts";
import * as v1Validators from "../../../generated/v1/validators.gen.js";
import { createOrganizationWithToken, createToken, createWorkspace } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { testEachServer } from "../support/test-server.ts";

const test = suite("workspace permissions");

testEachServer(
  test,
  "meta.permissions says write for operators and admins, verify for organization admins only",
  async (server) => {
    const org = await createOrganizationWithToken(server, "acme", "admin");
    const workspace = await createWorkspace(server, org.token, "acme", { name: "app" });
    const read = async (token: string) => {
      const document = expectStatus(
        await getWorkspace({ client: server.v1(token), path: { workspace_id: workspace.id } }),
        200,
      );
      assert.ok(v1Validators.WorkspaceDocument(document), JSON.stringify(v1Validators.WorkspaceDocument.errors));
      return document.meta.permissions;
    };
    assert.equal(await read((await createToken(server, org.token, "acme", "viewer")).token), {
      write: false,
      verify_federation_profiles: false,
    });
    const operator = (await createToken(server, org.token, "acme", "operator")).token;
    assert.equal(await read(operator), { write: true, verify_federation_profiles: false });
    assert.equal(await read(org.token), { write: true, verify_federation_profiles: true });

    // The create and update answers carry it too.
    const created = expectStatus(
      await createWorkspaceCall({
        client: server.v1(operator),
        path: { organization_name: "acme" },
        body: { data: { type: "workspaces", attributes: { name: "other" } } },
      }),
      201,
    );
    assert.equal(created.meta.permissions, { write: true, verify_federation_profiles: false });
    const updated = expectStatus(
      await updateWorkspace({
        client: server.v1(org.token),
        path: { workspace_id: workspace.id },
        body: { data: { type: "workspaces", attributes: { plan_requires_credential: true } } },
      }),
      200,
    );
    assert.equal(updated.meta.permissions, { write: true, verify_federation_profiles: true });
  },
);

test.run();
