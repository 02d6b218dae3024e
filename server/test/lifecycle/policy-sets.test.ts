import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createPolicySetVersion, listPolicySets } from "../../../client/src/index.ts";
import { createOrganizationWithToken, createToken, createWorkspace } from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { FIND_NOTHING, FLAG_EVERY_DATA, newPolicySet, policy } from "../support/policies.ts";
import { testEachServer } from "../support/test-server.ts";

const sets = suite("policy sets");

testEachServer(sets, "create, list and version policy sets; refusals have their own codes", async (server) => {
  const { token, organizationName } = await createOrganizationWithToken(server, "acme");
  const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
  const created = expectStatus(
    await newPolicySet(server, token, organizationName, "baseline", [policy("quiet", "advisory", FIND_NOTHING)]),
    201,
  ).data;
  assert.match(created.id, /^pset-/);
  assert.is(created.attributes.global, true);
  assert.is(created.attributes.current_version.version, 1);
  assert.match(created.attributes.current_version.digest, /^[0-9a-f]{64}$/);
  assert.equal(
    created.attributes.current_version.policies.map((p) => [p.name, p.enforcement_level, p.package]),
    [["quiet", "advisory", "quiet"]],
  );

  const attached = expectStatus(
    await newPolicySet(
      server,
      token,
      organizationName,
      "app-only",
      [policy("flag", "soft_mandatory", FLAG_EVERY_DATA("x.y", "t"))],
      { workspace_ids: [workspace.id] },
    ),
    201,
  ).data;
  assert.equal(attached.attributes.workspace_ids, [workspace.id]);

  // A new version is immutable and digested apart; the same content digests the same.
  const v2 = expectStatus(
    await createPolicySetVersion({
      client: server.v1(token),
      path: { policy_set_id: created.id },
      body: {
        data: {
          type: "policy-set-versions",
          attributes: { policies: [policy("quiet", "hard_mandatory", FIND_NOTHING)] },
        },
      },
    }),
    201,
  ).data;
  assert.is(v2.attributes.current_version.version, 2);
  assert.is.not(v2.attributes.current_version.digest, created.attributes.current_version.digest);

  const listed = expectStatus(
    await listPolicySets({ client: server.v1(token), path: { organization_name: organizationName } }),
    200,
  ).data;
  assert.equal(
    listed.map((s) => [s.attributes.name, s.attributes.current_version.version]),
    [
      ["app-only", 1],
      ["baseline", 2],
    ],
  );

  expectV1Error(
    await newPolicySet(server, token, organizationName, "baseline", [policy("quiet", "advisory", FIND_NOTHING)]),
    409,
    "POLICY_SET_NAME_TAKEN",
  );
  expectV1Error(
    await newPolicySet(server, token, organizationName, "nopkg", [policy("p", "advisory", "violations := set()\n")]),
    422,
    "POLICY_SOURCE_INVALID",
  );
  expectV1Error(
    await newPolicySet(server, token, organizationName, "both", [policy("p", "advisory", FIND_NOTHING)], {
      global: true,
      workspace_ids: [workspace.id],
    }),
    422,
    "POLICY_SET_ATTACHMENT_INVALID",
  );
  expectV1Error(
    await newPolicySet(server, token, organizationName, "nowhere", [policy("p", "advisory", FIND_NOTHING)], {}),
    422,
    "POLICY_SET_ATTACHMENT_INVALID",
  );
  expectV1Error(
    await newPolicySet(server, token, organizationName, "level", [
      { name: "p", enforcement_level: "mandatory" as never, source: FIND_NOTHING },
    ]),
    422,
    "DOCUMENT_INVALID",
  );
  const { token: operator } = await createToken(server, token, organizationName, "operator");
  expectV1Error(
    await newPolicySet(server, operator, organizationName, "op", [policy("p", "advisory", FIND_NOTHING)]),
    403,
    "FORBIDDEN",
  );
});

sets.run();
