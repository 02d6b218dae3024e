import { execFile } from "node:child_process";
import { join } from "node:path";
import { createRemoteJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from "jose";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { REPO_ROOT } from "../../src/config.ts";
import { endRunWithoutPlanCredentials, mintPhaseCredentials } from "../../src/commands/phase-credentials.ts";
import { rotateSigningKeys } from "../../src/commands/signing-keys.ts";
import type { Run } from "../../src/domain/records.ts";
import {
  countRows,
  createOrganizationWithToken,
  createToken,
  createWorkspace,
  uploadConfiguration,
} from "../support/factories.ts";
import { testEachServer, withTestServer, type TestServer } from "../support/test-server.ts";
import { firstError, type V1 } from "../support/documents.ts";
import type { AuditEventRow } from "../../src/store/rows.ts";

const wi = suite("workload identity: issuer, federation profiles, tokens");

const ROLE = "arn:aws:iam::123456789012:role/stackship-plan";
const GCP = {
  workload_identity_provider: "projects/123/locations/global/workloadIdentityPools/stackship/providers/main",
  service_account: "planner@proj-1.iam.gserviceaccount.com",
};
const AZURE = { client_id: "11111111-2222-3333-4444-555555555555", tenant_id: "66666666-7777-8888-9999-000000000000" };

async function api<T = unknown>(
  server: TestServer,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
) {
  const headers: Record<string, string> = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/vnd.api+json";
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: (text ? JSON.parse(text) : null) as T,
    contentType: response.headers.get("content-type"),
  };
}

const profileBody = (attributes: Record<string, unknown>) => ({ data: { type: "federation-profiles", attributes } });

async function createProfile(
  server: TestServer,
  token: string,
  workspaceId: string,
  attributes: Record<string, unknown>,
) {
  const created = await api<V1["FederationProfileDocument"]>(
    server,
    token,
    "POST",
    `/v1/workspaces/${workspaceId}/federation-profiles`,
    profileBody(attributes),
  );
  assert.is(created.status, 201, JSON.stringify(created.body));
  return created.body.data;
}

async function newRun(
  server: TestServer,
  token: string,
  workspaceId: string,
  kind: "plan_and_apply" | "speculative",
): Promise<Run> {
  const { configurationVersion } = await uploadConfiguration(server, token, workspaceId);
  const created = await api<V1["RunDocument"]>(server, token, "POST", `/v1/workspaces/${workspaceId}/runs`, {
    data: {
      type: "runs",
      attributes: { kind },
      relationships: {
        configuration_version: { data: { type: "configuration-versions", id: configurationVersion.id } },
      },
    },
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  return (await server.services.stores.runs.getById(created.body.data.id))!;
}

/** A relying party as a cloud does it: discovery over HTTP, then the JWKS it names, then jose. */
async function relyingParty(server: TestServer) {
  const discovery = await fetch(`${server.baseUrl}/.well-known/openid-configuration`);
  assert.is(discovery.status, 200);
  const config = (await discovery.json()) as { issuer: string; jwks_uri: string };
  return {
    config,
    verify: (token: string, audience: string, currentDate?: Date) =>
      jwtVerify(token, createRemoteJWKSet(new URL(config.jwks_uri)), {
        issuer: config.issuer,
        audience,
        algorithms: ["RS256"],
        currentDate,
      }),
  };
}

async function rejectionCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
  return "accepted";
}

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

testEachServer(
  wi,
  "a relying party verifies each phase's token (issuer, audience, expiry, signature) and every claim, per run kind; refusals",
  async (server) => {
    const { token, organizationName, organizationId } = await createOrganizationWithToken(server, "acme", "admin");
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    const project = (await server.services.stores.projects.getById(workspace.relationships.project.data.id))!;
    await createProfile(server, token, workspace.id, {
      name: "aws-plan",
      provider: "aws",
      target: { role_arn: ROLE },
      phases: ["plan"],
    });
    await createProfile(server, token, workspace.id, {
      name: "aws-apply",
      provider: "aws",
      audience: "sts.example",
      target: { role_arn: ROLE },
      phases: ["apply"],
    });
    const spec = await createProfile(server, token, workspace.id, {
      name: "vault",
      provider: "generic",
      audience: "vault.example",
      target: {},
      phases: ["speculative_plan"],
    });
    const rp = await relyingParty(server);
    const phaseTimeoutMs = 600_000;

    const cases = [
      { kind: "plan_and_apply" as const, phase: "plan" as const, audience: "sts.amazonaws.com", profile: "aws-plan" },
      { kind: "plan_and_apply" as const, phase: "apply" as const, audience: "sts.example", profile: "aws-apply" },
    ];
    for (const c of cases) {
      const run = await newRun(server, token, workspace.id, c.kind);
      const startedAt = server.services.clock();
      const minted = await mintPhaseCredentials(server.services, run, c.phase, { startedAt, phaseTimeoutMs });
      assert.equal(
        minted.tokens.map((t) => t.profile.name),
        [c.profile],
      );
      const { payload, protectedHeader } = await rp.verify(minted.tokens[0].token, c.audience);
      assert.is(protectedHeader.alg, "RS256");
      const iat = Math.floor(startedAt.getTime() / 1000);
      assert.equal(payload, {
        organization_id: organizationId,
        organization_name: "acme",
        project_id: project.id,
        project_name: project.name,
        workspace_id: workspace.id,
        workspace_name: "app",
        run_id: run.id,
        run_phase: c.phase,
        run_kind: c.kind,
        source: "api",
        federation_profile_id: minted.tokens[0].profile.id,
        iss: server.baseUrl,
        aud: c.audience,
        sub: `organization_id:${organizationId}:project_id:${project.id}:workspace_id:${workspace.id}:run_phase:${c.phase}:run_kind:${c.kind}:organization:acme:project:${project.name}:workspace:app`,
        iat,
        nbf: iat,
        exp: Math.floor((startedAt.getTime() + phaseTimeoutMs) / 1000),
        jti: minted.tokens[0].jti,
      } satisfies JWTPayload);
      // Audience, expiry (both sides of exp) and signature, as the cloud checks them.
      assert.is(
        await rejectionCode(rp.verify(minted.tokens[0].token, "someone-else")),
        "ERR_JWT_CLAIM_VALIDATION_FAILED",
      );
      assert.is(
        await rejectionCode(rp.verify(minted.tokens[0].token, c.audience, new Date((payload.exp! - 1) * 1000))),
        "accepted",
      );
      assert.is(
        await rejectionCode(rp.verify(minted.tokens[0].token, c.audience, new Date(payload.exp! * 1000))),
        "ERR_JWT_EXPIRED",
      );
      const [h, p, sig] = minted.tokens[0].token.split(".");
      const forged = Buffer.from(
        JSON.stringify({ ...payload, run_phase: "apply", run_id: "run-0000000000000000" }),
      ).toString("base64url");
      assert.is(
        await rejectionCode(rp.verify(`${h}.${forged}.${sig}`, c.audience)),
        "ERR_JWS_SIGNATURE_VERIFICATION_FAILED",
      );
      assert.ok(p.length > 0);
      // Every mint is audited without the token.
      const audit = await server.db
        .knex("audit_events")
        .where({ action: "workload_identity.tokens_minted", target_id: run.id })
        .first<AuditEventRow | undefined>();
      assert.ok(audit);
      assert.not.ok(String(audit.data).includes(minted.tokens[0].token));
      assert.ok(String(audit.data).includes(minted.tokens[0].jti));
    }

    // A speculative plan: an unverified speculative_plan profile serves nothing; once verified it does.
    const speculative = await newRun(server, token, workspace.id, "speculative");
    const none = await mintPhaseCredentials(server.services, speculative, "plan", {
      startedAt: server.services.clock(),
      phaseTimeoutMs,
    });
    assert.equal([none.tokens, none.refusal], [[], "no_profile"]);
    assert.is((await api(server, token, "POST", `/v1/federation-profiles/${spec.id}/actions/verify`)).status, 200);
    const some = await mintPhaseCredentials(server.services, speculative, "plan", {
      startedAt: server.services.clock(),
      phaseTimeoutMs,
    });
    assert.equal(
      some.tokens.map((t) => t.profile.name),
      ["vault"],
    );
    const { payload } = await rp.verify(some.tokens[0].token, "vault.example");
    assert.equal(
      [payload.sub, payload.run_kind, payload.run_phase],
      [
        `organization_id:${organizationId}:project_id:${project.id}:workspace_id:${workspace.id}:run_phase:plan:run_kind:speculative:organization:acme:project:${project.name}:workspace:app`,
        "speculative",
        "plan",
      ],
    );
    // A speculative run has no apply; its plan never gets plan or apply profiles.
    assert.equal(
      (
        await mintPhaseCredentials(server.services, speculative, "apply", {
          startedAt: server.services.clock(),
          phaseTimeoutMs,
        })
      ).tokens,
      [],
    );
    // Changed after verification: nothing again.
    assert.is(
      (
        await api(
          server,
          token,
          "PATCH",
          `/v1/workspaces/${workspace.id}/federation-profiles/${spec.id}`,
          profileBody({ audience: "vault2.example" }),
        )
      ).status,
      200,
    );
    assert.equal(
      (
        await mintPhaseCredentials(server.services, speculative, "plan", {
          startedAt: server.services.clock(),
          phaseTimeoutMs,
        })
      ).tokens,
      [],
    );
    // A fork pull request gets nothing, whatever is configured (the GitHub source records commit.fork).
    const everything = await createProfile(server, token, workspace.id, {
      name: "everything",
      provider: "aws",
      target: { role_arn: ROLE },
      phases: ["plan", "apply", "speculative_plan"],
    });
    assert.is(
      (await api(server, token, "POST", `/v1/federation-profiles/${everything.id}/actions/verify`)).status,
      200,
    );
    const fork = { ...speculative, source: "github_pull_request", commit: { sha: "f".repeat(40), fork: true } } as Run;
    assert.equal(
      await mintPhaseCredentials(server.services, fork, "plan", { startedAt: server.services.clock(), phaseTimeoutMs }),
      { tokens: [], refusal: "fork_pull_request" },
    );
    const sameRepo = {
      ...speculative,
      source: "github_pull_request",
      commit: { sha: "e".repeat(40), fork: false },
    } as Run;
    const pr = await mintPhaseCredentials(server.services, sameRepo, "plan", {
      startedAt: server.services.clock(),
      phaseTimeoutMs,
    });
    assert.equal(
      pr.tokens.map((t) => t.profile.name),
      ["everything"],
    );
    const prClaims = (await rp.verify(pr.tokens[0].token, "sts.amazonaws.com")).payload;
    assert.equal([prClaims.source, prClaims.commit_sha], ["github_pull_request", "e".repeat(40)]);

    // A workspace that requires a credential for plans: the fork run ends before its plan, the same-repository one does not.
    assert.is(
      (
        await api(server, token, "PATCH", `/v1/workspaces/${workspace.id}`, {
          data: { type: "workspaces", attributes: { plan_requires_credential: true } },
        })
      ).status,
      200,
    );
    assert.is(await endRunWithoutPlanCredentials(server.services, sameRepo), false);
    assert.is((await server.services.stores.runs.getById(speculative.id))!.status, "pending");
    assert.is(await endRunWithoutPlanCredentials(server.services, fork), true);
    const ended = (await server.services.stores.runs.getById(speculative.id))!;
    assert.equal(
      [ended.status, ended.execution.statusReason],
      ["plan_credentials_required", "plan_credentials_required"],
    );
    const refusal = await server.db
      .knex("audit_events")
      .where({ action: "run.plan_credentials_required", target_id: speculative.id })
      .first<AuditEventRow | undefined>();
    assert.match(String(refusal!.data), /fork_pull_request/);
    // Terminal: a second look changes nothing.
    assert.is(await endRunWithoutPlanCredentials(server.services, ended), false);
  },
  { publicUrlIsBaseUrl: true },
);

wi(
  "rotation on a controllable clock: the new key is published before it signs, the old one stays until its last token expired, then a token it signed is refused",
  async () => {
    let now = new Date("2026-12-03T12:00:00.000Z");
    await withTestServer(
      "sqlite",
      async (server) => {
        const { token, organizationName } = await createOrganizationWithToken(server, "acme", "admin");
        const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
        await createProfile(server, token, workspace.id, {
          name: "aws",
          provider: "aws",
          target: { role_arn: ROLE },
          phases: ["plan"],
        });
        const run = await newRun(server, token, workspace.id, "plan_and_apply");
        const rp = await relyingParty(server);
        const kids = async () =>
          (await api<V1["JsonWebKeySet"]>(server, null, "GET", "/.well-known/jwks.json")).body.keys
            .map((k) => k.kid)
            .sort();
        const mint = async () =>
          (
            await mintPhaseCredentials(server.services, run, "plan", {
              startedAt: server.services.clock(),
              phaseTimeoutMs: 600_000,
            })
          ).tokens[0].token;
        const [k1] = await kids();
        const first = await mint();

        now = new Date("2026-12-03T12:00:10.000Z");
        const rotation = await rotateSigningKeys(server.services, { publishLeadMs: 300_000 });
        const k2 = rotation.added.kid;
        assert.equal(await kids(), [k1, k2].sort());
        // Until the lead is over, k1 still signs (k2 is only published).
        now = new Date("2026-12-03T12:05:09.999Z");
        const lastOfK1 = await mint();
        assert.is(decodeProtectedHeader(lastOfK1).kid, k1);
        now = new Date("2026-12-03T12:05:10.000Z");
        const byK2 = await mint();
        assert.is(decodeProtectedHeader(byK2).kid, k2);
        await rp.verify(byK2, "sts.amazonaws.com", now);
        // k1's last token expires at 12:15:09; k1 is published up to then, and not from then on.
        now = new Date("2026-12-03T12:15:08.999Z");
        assert.equal(await kids(), [k1, k2].sort());
        await rp.verify(lastOfK1, "sts.amazonaws.com", new Date("2026-12-03T12:06:00.000Z"));
        now = new Date("2026-12-03T12:15:09.000Z");
        assert.equal(await kids(), [k2]);
        // A token signed by the rotated-out key is refused even at a time it would still be valid.
        assert.is(
          await rejectionCode(rp.verify(first, "sts.amazonaws.com", new Date("2026-12-03T12:01:00.000Z"))),
          "ERR_JWKS_NO_MATCHING_KEY",
        );
        // The next rotation deletes it; its private half is gone from the database.
        const again = await rotateSigningKeys(server.services, { publishLeadMs: 0 });
        assert.equal(again.removed, [k1]);
        assert.is(await server.db.knex("workload_identity_keys").where({ kid: k1 }).first(), undefined);
        assert.ok(joseErrors.JWKSNoMatchingKey);
      },
      { clock: () => now, publicUrlIsBaseUrl: true },
    );
  },
);

wi("npm run keys:rotate rotates the key of the deployment it is pointed at", async () => {
  await withTestServer(
    "sqlite",
    async (server) => {
      const before = (await api<V1["JsonWebKeySet"]>(server, null, "GET", "/.well-known/jwks.json")).body.keys.length;
      assert.is(before, 1);
      // Asynchronously: the server answers in this process while the script runs.
      const keysRotate = (args: string[], env: Record<string, string>) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
          execFile(
            process.execPath,
            ["--import", "tsx", join(REPO_ROOT, "server/src/keys-main.ts"), ...args],
            { cwd: REPO_ROOT, env: { PATH: process.env.PATH, ...env } },
            (error, stdout, stderr) =>
              resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
          );
        });
      const env = {
        STACKSHIP_DATABASE_URL: server.databaseUrl,
        STACKSHIP_DATA_DIR: server.dataDir,
        STACKSHIP_PUBLIC_URL: server.baseUrl,
      };
      const result = await keysRotate(["--lead-seconds", "60"], env);
      assert.is(result.code, 0, result.stderr);
      assert.match(result.stdout, /added key .*: published now, signs from /);
      assert.is((await api<V1["JsonWebKeySet"]>(server, null, "GET", "/.well-known/jwks.json")).body.keys.length, 2);
      const bad = await keysRotate(["--lead-seconds", "-1"], env);
      assert.is(bad.code, 1);
      assert.match(bad.stderr, /--lead-seconds/);
      assert.is((await api<V1["JsonWebKeySet"]>(server, null, "GET", "/.well-known/jwks.json")).body.keys.length, 2);
    },
    { publicUrlIsBaseUrl: true },
  );
});

wi.run();
