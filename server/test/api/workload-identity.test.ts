import { suite } from "uvu";
import * as assert from "uvu/assert";
import { countRows } from "../support/database.ts";
import { createOrganizationWithToken, createToken, createWorkspace } from "../support/factories.ts";
import { testEachServer } from "../support/test-server.ts";
import { firstError, type V1 } from "../support/documents.ts";
import { api, AZURE, createProfile, GCP, profileBody, relyingParty, ROLE } from "../support/api-workload-identity.ts";

const wi = suite("workload identity: issuer, federation profiles, tokens");

testEachServer(
  wi,
  "discovery names the JWKS; the issuer is exactly STACKSHIP_PUBLIC_URL; keys are public RSA halves only",
  async (server) => {
    const { config } = await relyingParty(server);
    assert.is(config.issuer, server.baseUrl);
    assert.is(config.jwks_uri, `${server.baseUrl}/.well-known/jwks.json`);
    const full = await api<V1["OpenIdConfiguration"]>(server, null, "GET", "/.well-known/openid-configuration");
    assert.match(full.contentType ?? "", /^application\/json/);
    assert.equal(full.body.id_token_signing_alg_values_supported, ["RS256"]);
    assert.ok(full.body.claims_supported.includes("run_phase"));
    const jwks = await api<V1["JsonWebKeySet"]>(server, null, "GET", "/.well-known/jwks.json");
    assert.is(jwks.status, 200);
    assert.is(jwks.body.keys.length, 1);
    const [key] = jwks.body.keys;
    assert.equal(Object.keys(key).sort(), ["alg", "e", "kid", "kty", "n", "use"]);
    assert.is(key.kty, "RSA");
    // The private half is stored sealed, never as a JWK or PEM.
    const stored = (await server.db.knex("workload_identity_keys").first()) as { private_key_sealed: string };
    assert.not.match(stored.private_key_sealed, /PRIVATE KEY/);
    assert.is(
      server.services.keys.signingKeys.openText(stored.private_key_sealed).startsWith("-----BEGIN PRIVATE KEY-----"),
      true,
    );
  },
  { publicUrlIsBaseUrl: true },
);

testEachServer(
  wi,
  "without STACKSHIP_PUBLIC_URL workload identity is off: discovery and JWKS answer 404 WORKLOAD_IDENTITY_UNAVAILABLE",
  async (server) => {
    for (const path of ["/.well-known/openid-configuration", "/.well-known/jwks.json"]) {
      const answer = await api(server, null, "GET", path);
      assert.is(answer.status, 404);
      assert.is(firstError(answer.body).code, "WORKLOAD_IDENTITY_UNAVAILABLE");
    }
    assert.is(Number((await server.db.knex("workload_identity_keys").count({ n: "*" }).first())!.n), 0);
  },
);

testEachServer(
  wi,
  "federation profiles: create with defaults, refuse bad input writing nothing, any change clears verification, organization admins verify",
  async (server) => {
    const { token, organizationName, tokenId } = await createOrganizationWithToken(server, "acme", "admin");
    const operator = (await createToken(server, token, organizationName, "operator")).token;
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    assert.is(workspace.attributes.plan_requires_credential, false);
    const base = `/v1/workspaces/${workspace.id}/federation-profiles`;

    const aws = await createProfile(server, operator, workspace.id, {
      name: "aws-prod",
      provider: "aws",
      target: { role_arn: ROLE },
      phases: ["apply", "plan"],
    });
    assert.equal(aws.attributes, {
      ...aws.attributes,
      provider: "aws",
      audience: "sts.amazonaws.com",
      target: { role_arn: ROLE },
      phases: ["plan", "apply"],
      verified_at: null,
      verified_by: null,
    });
    const gcp = await createProfile(server, operator, workspace.id, {
      name: "gcp",
      provider: "gcp",
      target: GCP,
      phases: ["plan"],
    });
    assert.is(gcp.attributes.audience, `//iam.googleapis.com/${GCP.workload_identity_provider}`);
    await createProfile(server, operator, workspace.id, {
      name: "azure",
      provider: "azure",
      target: AZURE,
      phases: ["plan"],
    });

    const tables = ["federation_profiles", "audit_events"];
    const before = await countRows(server, tables);
    const refusals: Array<[Record<string, unknown>, number, string]> = [
      [{ name: "x", provider: "generic", target: {}, phases: ["plan"] }, 422, "FEDERATION_PROFILE_INVALID"],
      [
        { name: "x", provider: "aws", target: { client_id: AZURE.client_id, role_arn: ROLE }, phases: ["plan"] },
        422,
        "FEDERATION_PROFILE_INVALID",
      ],
      [
        { name: "x", provider: "azure", target: { client_id: AZURE.client_id }, phases: ["plan"] },
        422,
        "FEDERATION_PROFILE_INVALID",
      ],
      [{ name: "x", provider: "aws", target: { role_arn: "not-an-arn" }, phases: ["plan"] }, 422, "DOCUMENT_INVALID"],
      [{ name: "x", provider: "aws", target: { role_arn: ROLE }, phases: [] }, 422, "DOCUMENT_INVALID"],
      [{ name: "x", provider: "aws", target: { role_arn: ROLE }, phases: ["destroy"] }, 422, "DOCUMENT_INVALID"],
      [{ name: "x", provider: "oracle", target: {}, phases: ["plan"] }, 422, "DOCUMENT_INVALID"],
      [
        { name: "aws-prod", provider: "aws", target: { role_arn: ROLE }, phases: ["plan"] },
        409,
        "FEDERATION_PROFILE_NAME_TAKEN",
      ],
    ];
    for (const [attributes, status, code] of refusals) {
      const refused = await api(server, operator, "POST", base, profileBody(attributes));
      assert.is(refused.status, status, JSON.stringify(attributes));
      assert.is(firstError(refused.body).code, code, JSON.stringify(refused.body));
    }
    assert.equal(await countRows(server, tables), before);

    // Only organization admins verify.
    const denied = await api(server, operator, "POST", `/v1/federation-profiles/${aws.id}/actions/verify`);
    assert.is(denied.status, 403);
    const verified = await api<V1["FederationProfileDocument"]>(
      server,
      token,
      "POST",
      `/v1/federation-profiles/${aws.id}/actions/verify`,
    );
    assert.is(verified.status, 200);
    assert.is(verified.body.data.attributes.verified_by, tokenId);
    assert.match(verified.body.data.attributes.verified_at!, /Z$/);
    assert.is(
      (await api<V1["FederationProfileDocument"]>(server, token, "GET", `${base}/${aws.id}`)).body.data.attributes
        .verified_by,
      tokenId,
    );

    // Any change clears it: a PATCH that changes nothing but the phases' order included.
    const patched = await api<V1["FederationProfileDocument"]>(
      server,
      operator,
      "PATCH",
      `${base}/${aws.id}`,
      profileBody({ phases: ["plan", "apply", "speculative_plan"] }),
    );
    assert.is(patched.status, 200, JSON.stringify(patched.body));
    assert.equal([patched.body.data.attributes.verified_at, patched.body.data.attributes.verified_by], [null, null]);
    const row = (await server.db.knex("federation_profiles").where({ id: aws.id }).first()) as {
      verified_at: string | null;
      verified_by: string | null;
      verified_digest: string | null;
    };
    assert.equal([row.verified_at, row.verified_by, row.verified_digest], [null, null, null]);
    // A provider change is checked as a whole: the aws target does not fit azure.
    const mismatch = await api(server, operator, "PATCH", `${base}/${aws.id}`, profileBody({ provider: "azure" }));
    assert.is(mismatch.status, 422);
    assert.is(firstError(mismatch.body).code, "FEDERATION_PROFILE_INVALID");
    // A verification written behind the API's back for other content does not count.
    await server.db
      .knex("federation_profiles")
      .where({ id: aws.id })
      .update({ verified_at: "2026-12-03T00:00:00.000Z", verified_by: "x", verified_digest: "0".repeat(64) });
    assert.is(
      (await api<V1["FederationProfileDocument"]>(server, token, "GET", `${base}/${aws.id}`)).body.data.attributes
        .verified_at,
      null,
    );

    const listed = await api<V1["FederationProfileListDocument"]>(server, token, "GET", base);
    assert.equal(
      listed.body.data.map((p) => p.attributes.name),
      ["aws-prod", "azure", "gcp"],
    );
    assert.is((await api(server, operator, "DELETE", `${base}/${gcp.id}`)).status, 204);
    assert.is((await api(server, token, "GET", `${base}/${gcp.id}`)).status, 404);

    // The workspace setting.
    const setting = await api<V1["WorkspaceDocument"]>(server, operator, "PATCH", `/v1/workspaces/${workspace.id}`, {
      data: { type: "workspaces", attributes: { plan_requires_credential: true } },
    });
    assert.is(setting.status, 200);
    assert.is(setting.body.data.attributes.plan_requires_credential, true);
    assert.is(
      (
        await api(server, operator, "PATCH", `/v1/workspaces/${workspace.id}`, {
          data: { type: "workspaces", attributes: {} },
        })
      ).status,
      422,
    );
    const audit = await server.db
      .knex("audit_events")
      .whereIn("action", [
        "federation_profile.created",
        "federation_profile.verified",
        "federation_profile.updated",
        "federation_profile.deleted",
        "workspace.updated",
      ])
      .select<{ action: string }[]>("action");
    assert.equal([...new Set(audit.map((a) => a.action))].sort(), [
      "federation_profile.created",
      "federation_profile.deleted",
      "federation_profile.updated",
      "federation_profile.verified",
      "workspace.updated",
    ]);
  },
);

wi.run();
