// GET /v1/organizations: the caller's organizations, which the dashboard's switcher reads.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { listOrganizations } from "../../../client/src/index.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { addMembership, createUser, signIn, signedInMember } from "../support/sessions.ts";
import { testEachServer } from "../support/test-server.ts";

const test = suite("list the caller's organizations");

testEachServer(
  test,
  "a person sees exactly the organizations they hold a membership in, by name; tokens their own; a site admin all",
  async (server) => {
    const zeta = await createOrganizationWithToken(server, "zeta", "admin");
    const acme = await createOrganizationWithToken(server, "acme", "admin");
    await createOrganizationWithToken(server, "other", "admin");
    const workspace = await createWorkspace(server, zeta.token, "zeta", { name: "app" });

    const member = await signedInMember(server, "acme", "viewer");
    // A workspace-scoped membership also makes the organization one of theirs.
    await addMembership(server, "zeta", member.email, "operator", { workspace_id: workspace.id });
    const names = (client: ReturnType<typeof server.v1>) =>
      listOrganizations({ client }).then((r) => expectStatus(r, 200).data.map((o) => o.attributes.name));
    assert.equal(await names(member.session.client()), ["acme", "zeta"]);

    const loner = await createUser(server);
    assert.equal(await names((await signIn(server, loner.email, loner.password)).client()), []);

    assert.equal(await names(server.v1(acme.token)), ["acme"]);
    assert.equal(await names(server.admin), ["acme", "other", "zeta"]);
    const siteAdmin = await createUser(server, { siteAdmin: true });
    assert.equal(await names((await signIn(server, siteAdmin.email, siteAdmin.password)).client()), [
      "acme",
      "other",
      "zeta",
    ]);

    const anonymous = await listOrganizations({ client: server.v1() });
    assert.is(anonymous.response.status, 401);
  },
);

test.run();
