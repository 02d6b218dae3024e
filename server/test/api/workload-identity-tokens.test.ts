import { execFile } from "node:child_process";
import { join } from "node:path";
import { decodeProtectedHeader, errors as joseErrors, type JWTPayload } from "jose";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { REPO_ROOT } from "../../src/config.ts";
import { endRunWithoutPlanCredentials, mintPhaseCredentials } from "../../src/commands/phase-credentials.ts";
import { rotateSigningKeys } from "../../src/commands/signing-keys.ts";
import type { Run } from "../../src/domain/records.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { testEachServer, withTestServer } from "../support/test-server.ts";
import type { V1 } from "../support/documents.ts";
import type { AuditEventRow } from "../../src/store/rows.ts";
import {
  api,
  AWS_PLAN_PROFILE,
  createProfile,
  newRun,
  profileBody,
  rejectionCode,
  relyingParty,
  ROLE,
} from "../support/api-workload-identity.ts";

const wi = suite("workload identity: tokens and signing key rotation");

testEachServer(
  wi,
  "a relying party verifies each phase's token (issuer, audience, expiry, signature) and every claim, per run kind; refusals",
  async (server) => {
    const { token, organizationName, organizationId } = await createOrganizationWithToken(server, "acme", "admin");
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    const project = (await server.services.stores.projects.getById(workspace.relationships.project.data.id))!;
    await createProfile(server, token, workspace.id, AWS_PLAN_PROFILE);
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
