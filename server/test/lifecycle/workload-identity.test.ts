import { execFileSync } from "node:child_process";
import { readStateBytes } from "../../src/commands/state-versions.ts";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { suite } from "uvu";
import * as assert from "uvu/assert";

import { openSigningKey, signWorkloadToken } from "../../src/commands/signing-keys.ts";
import { tokenClaims } from "../../src/domain/workload-identity.ts";
import { readPlanJson } from "../../src/runner/plan-json.ts";
import { databaseText, leakForms } from "../support/database.ts";
import { createOrganizationWithToken, createWorkspace, sha256 } from "../support/factories.ts";
import { approvePlan, readLog, startRun, waitForPlanned, waitForStatus, waitToSettle } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import { api, AWS_PLAN_PROFILE, createProfile, ROLE } from "../support/api-workload-identity.ts";
import type { components } from "../../../generated/v1/types.gen.ts";

// Real bubblewrap and tofu: a phase's tokens reach its sandbox (the configuration reads the token
// files, printing only their existence and SHA-256) and nothing else; plan_credentials_required.

const wi = suite("workload identity with real tofu");

const PHASE_TIMEOUT_S = 120; // the test server's runner phase limit

const PROBE = {
  "main.tf": `
variable "aws_token_file" {
  default = "/work/.stackship-identity/aws-plan.jwt"
}
variable "vault_token_file" {
  default = "/work/.stackship-identity/vault.jwt"
}
resource "terraform_data" "probe" {
  input = "probe"
}
output "aws_token_present" {
  value = fileexists(var.aws_token_file)
}
output "aws_token_sha256" {
  value = fileexists(var.aws_token_file) ? sha256(file(var.aws_token_file)) : ""
}
output "vault_token_sha256" {
  value = fileexists(var.vault_token_file) ? sha256(file(var.vault_token_file)) : ""
}
# Unknown until the resource exists, so evaluated in the apply's sandbox, not taken from the plan.
output "apply_aws_token_present" {
  value = terraform_data.probe.id == "" ? false : fileexists(var.aws_token_file)
}
output "apply_vault_token_sha256" {
  value = terraform_data.probe.id == "" ? "" : (fileexists(var.vault_token_file) ? sha256(file(var.vault_token_file)) : "")
}
`,
};

/** Outputs as a plan's planned_values and a state file hold them. */
interface Outputs {
  outputs: Record<string, { value: unknown }>;
}

/** The audit record of a mint (names the key, the expiry and each token's profile and jti). */
interface MintRecord {
  phase: string;
  kid: string;
  expires_at: string;
  tokens: Array<{ federation_profile_id: string; jti: string; audience: string }>;
}

/**
 * The tokens a run's phase was given, rebuilt exactly: the mint's audit record names the key,
 * the expiry and each token's profile and jti (never the token); RS256 signing is deterministic.
 */
async function tokensOf(server: TestServer, runId: string, phase: "plan" | "apply"): Promise<Map<string, string>> {
  const rows = await server.db
    .knex<{ action: string; target_id: string; data: unknown }>("audit_events")
    .where({ action: "workload_identity.tokens_minted", target_id: runId });
  const record = rows
    .map((r) => (typeof r.data === "string" ? JSON.parse(r.data) : r.data) as MintRecord)
    .find((d) => d.phase === phase);
  const out = new Map<string, string>();
  if (!record) return out;
  const run = (await server.services.stores.runs.getById(runId))!;
  const { id: workspaceId, name: workspaceName } = (await server.services.stores.workspaces.getById(run.workspaceId))!;
  const { id: organizationId, name: organizationName } = (await server.services.stores.organizations.getById(
    run.organizationId,
  ))!;
  const { id: projectId, name: projectName } = (await server.services.stores.projects.getById(run.projectId))!;
  const scope = { organizationId, organizationName, projectId, projectName, workspaceId, workspaceName };
  const key = (await server.services.stores.signingKeys.list()).find((k) => k.kid === record.kid)!;
  const privateKey = await openSigningKey(server.services, key);
  const exp = Date.parse(record.expires_at) / 1000;
  for (const t of record.tokens) {
    const profile = (await server.services.stores.federationProfiles.getById(t.federation_profile_id))!;
    const claims = tokenClaims(scope, run, phase, profile, t.jti);
    const token = await signWorkloadToken(privateKey, key.kid, server.services.config.publicUrl!, t.audience, claims, {
      iat: exp - PHASE_TIMEOUT_S,
      nbf: exp - PHASE_TIMEOUT_S,
      exp,
    });
    out.set(profile.name, token);
  }
  return out;
}

/** Every file under a directory, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

testEachServer(
  wi,
  "a phase's tokens reach its sandbox (plan: plan profiles, apply: apply profiles) and nothing else: logs, review, audit, plan, plan-diff, state, artifacts, database",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "cloudy" });
    await createProfile(server, token, workspace.id, AWS_PLAN_PROFILE);
    await createProfile(server, token, workspace.id, {
      name: "vault",
      provider: "generic",
      audience: "vault.example",
      target: {},
      phases: ["plan", "apply"],
    });

    const run = await startRun(server, token, workspace.id, PROBE);
    const planned = await waitForPlanned(server, token, run.id);
    const stored = (await server.services.stores.runs.getById(run.id))!.execution;
    const planJsonText = (
      await readPlanJson(server.services, (await server.services.stores.runs.getById(run.id))!)
    ).toString("utf8");
    const outputs = (JSON.parse(planJsonText) as { planned_values: Outputs }).planned_values.outputs;

    const planTokens = await tokensOf(server, run.id, "plan");
    assert.equal([...planTokens.keys()].sort(), ["aws-plan", "vault"]);
    // The exact tokens were in the sandbox: their SHA-256 is what tofu read from the files.
    assert.is(outputs.aws_token_present.value, true);
    assert.is(outputs.aws_token_sha256.value, sha256(planTokens.get("aws-plan")!));
    assert.is(outputs.vault_token_sha256.value, sha256(planTokens.get("vault")!));
    // And they are what a relying party accepts.
    const jwks = createRemoteJWKSet(new URL(`${server.baseUrl}/.well-known/jwks.json`));
    const verified = await jwtVerify(planTokens.get("aws-plan")!, jwks, {
      issuer: server.baseUrl,
      audience: "sts.amazonaws.com",
    });
    assert.is(verified.payload.run_phase, "plan");

    await approvePlan(server, token, run.id, planned.attributes.plan_digest!);
    await waitForStatus(server, token, run.id, ["applied", "errored", "needs_recovery"]).then((r) =>
      assert.is(r.attributes.status, "applied", r.attributes.status_reason ?? ""),
    );
    const applyTokens = await tokensOf(server, run.id, "apply");
    // The apply got only the apply profile's token: no aws file in its sandbox.
    assert.equal([...applyTokens.keys()], ["vault"]);
    const stateVersion = await server.services.stores.stateVersions.current(workspace.id);
    const stateText = (await readStateBytes(server.services, stateVersion!)).toString("utf8");
    const state = JSON.parse(stateText) as Outputs;
    assert.is(state.outputs.apply_aws_token_present.value, false);
    assert.is(state.outputs.apply_vault_token_sha256.value, sha256(applyTokens.get("vault")!));
    assert.is(
      (await jwtVerify(applyTokens.get("vault")!, jwks, { issuer: server.baseUrl, audience: "vault.example" })).payload
        .run_phase,
      "apply",
    );

    // Nowhere but the sandboxes: search every stored place by value.
    const planLog = await readLog(server, token, run.id, "plan");
    const applyLog = await readLog(server, token, run.id, "apply");
    assert.ok(planLog.includes("terraform_data.probe"));
    const review = JSON.stringify((await api(server, token, "GET", `/v1/runs/${run.id}/review`)).body);
    const planChanges = JSON.stringify((await api(server, token, "GET", `/v1/runs/${run.id}/plan-changes`)).body);
    const planRef = (await server.services.stores.artifacts.forRun(run.id, "plan"))!.ref;
    assert.is(planRef.sha256, stored.planDigest);
    const tfplan = await server.services.artifacts.read(planRef, workspace.id);
    const tfplanFile = join(tmpdir(), `wi-${run.id}.tfplan`);
    writeFileSync(tfplanFile, tfplan);
    const tfplanText = execFileSync("unzip", ["-p", tfplanFile], { maxBuffer: 64 * 1024 * 1024 }).toString("latin1");
    const places: Record<string, string> = {
      planLog,
      applyLog,
      review,
      planChanges,
      planJson: planJsonText,
      state: stateText,
      tfplan: tfplanText,
      database: await databaseText(server),
      dataDir: filesUnder(server.dataDir)
        .map((file) => readFileSync(file).toString("latin1"))
        .join("\n"),
    };
    assert.ok(places.database.includes("workload_identity.tokens_minted"), "the mints are audited");
    const all = [...planTokens.values(), ...applyTokens.values()];
    for (const secret of all) {
      const [header, payload, signature] = secret.split(".");
      for (const [where, text] of Object.entries(places)) {
        for (const form of [...leakForms(secret), payload, signature]) {
          assert.not.ok(text.includes(form), `a token (or its payload/signature) is in ${where}`);
        }
        assert.ok(header.length > 0);
      }
    }
  },
  { runner: true, publicUrlIsBaseUrl: true },
);

testEachServer(
  wi,
  "plan_credentials_required end to end: the run ends before any sandbox starts, the review links to the cloud access page; a verified speculative_plan profile lets it plan",
  async (server) => {
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    const workspace = await createWorkspace(server, token, organizationName, { name: "strict" });
    assert.is(
      (
        await api(server, token, "PATCH", `/v1/workspaces/${workspace.id}`, {
          data: { type: "workspaces", attributes: { plan_requires_credential: true } },
        })
      ).status,
      200,
    );
    // Configured for speculative plans, but not verified: a speculative run may not have it.
    const profileId = (
      await createProfile(server, token, workspace.id, {
        name: "aws-plan",
        provider: "aws",
        target: { role_arn: ROLE },
        phases: ["speculative_plan"],
      })
    ).id;

    const blocked = await startRun(server, token, workspace.id, PROBE, "speculative");
    await waitToSettle(server, token, blocked.id, "plan_credentials_required", {
      reason: "plan_credentials_required",
    });
    assert.is(
      await server.db.knex("run_attempts").where({ run_id: blocked.id }).first(),
      undefined,
      "no attempt, so no sandbox",
    );
    assert.is(
      await server.db
        .knex("audit_events")
        .where({ action: "workload_identity.tokens_minted", target_id: blocked.id })
        .first(),
      undefined,
    );
    const refusal = await server.db
      .knex<{ action: string; target_id: string; data: unknown }>("audit_events")
      .where({ action: "run.plan_credentials_required", target_id: blocked.id })
      .first();
    assert.match(String(refusal!.data), /no_profile/);
    const review = (
      await api<components["schemas"]["RunReviewDocument"]>(server, token, "GET", `/v1/runs/${blocked.id}/review`)
    ).body.data.attributes;
    const reason = review.terminal_reason as Extract<
      components["schemas"]["RunReviewTerminalReason"],
      { state: "recorded" }
    >;
    assert.is(reason.code, "plan_credentials_required");
    assert.equal(reason.guidance, {
      code: "plan_credentials_required",
      sentence: "Set up the workspace's cloud access, then start a new run.",
      target: "workspace_cloud_access",
      workspace_id: workspace.id,
    });

    // Verified, the same kind of run plans with its token.
    assert.is((await api(server, token, "POST", `/v1/federation-profiles/${profileId}/actions/verify`)).status, 200);
    const allowed = await startRun(server, token, workspace.id, PROBE, "speculative");
    await waitToSettle(server, token, allowed.id, "planned_and_finished");
    const planJson = JSON.parse(
      (await readPlanJson(server.services, (await server.services.stores.runs.getById(allowed.id))!)).toString("utf8"),
    ) as { planned_values: Outputs };
    assert.is(planJson.planned_values.outputs.aws_token_present.value, true);
    assert.is(
      planJson.planned_values.outputs.aws_token_sha256.value,
      sha256((await tokensOf(server, allowed.id, "plan")).get("aws-plan")!),
    );

    // A plan_and_apply run has no `plan` profile here (only speculative_plan): it may not have one either.
    const noPlanProfile = await startRun(server, token, workspace.id, PROBE, "plan_and_apply");
    assert.is(
      (
        await waitForStatus(server, token, noPlanProfile.id, [
          "plan_credentials_required",
          "awaiting_approval",
          "errored",
        ])
      ).attributes.status,
      "plan_credentials_required",
    );
    // Without the requirement, the same run plans (with no token).
    assert.is(
      (
        await api(server, token, "PATCH", `/v1/workspaces/${workspace.id}`, {
          data: { type: "workspaces", attributes: { plan_requires_credential: false } },
        })
      ).status,
      200,
    );
    const free = await startRun(server, token, workspace.id, PROBE, "plan_and_apply");
    assert.is(
      (await waitForStatus(server, token, free.id, ["plan_credentials_required", "awaiting_approval", "errored"]))
        .attributes.status,
      "awaiting_approval",
    );
    assert.is(
      await server.db
        .knex("audit_events")
        .where({ action: "workload_identity.tokens_minted", target_id: free.id })
        .first(),
      undefined,
    );
  },
  { runner: true, publicUrlIsBaseUrl: true },
);

wi.run();
