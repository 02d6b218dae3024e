import { suite } from "uvu";
import * as assert from "uvu/assert";
import { DomainError } from "./errors.ts";
import { RUN_REASONS, transition } from "./run-lifecycle.ts";
import { RUN_STATUSES } from "./run.ts";
import {
  isForkRun,
  isVerified,
  profileDigest,
  profilesServing,
  publishedKeysAt,
  retiredKeysAt,
  signingKeyAt,
  sourceClaim,
  subjectOf,
  tokenClaims,
  tokenLifetime,
  validateProfileContent,
  type FederationProfile,
  type SigningKeySchedule,
} from "./workload-identity.ts";

const test = suite("workload identity rules");

const ROLE = "arn:aws:iam::123456789012:role/stackship";

function profile(name: string, phases: FederationProfile["phases"], verified = false): FederationProfile {
  const content = validateProfileContent({ name, provider: "aws", target: { role_arn: ROLE }, phases });
  return {
    id: `fp-${name.padEnd(16, "0").slice(0, 16)}`,
    organizationId: "org-0000000000000001",
    workspaceId: "ws-0000000000000001",
    ...content,
    verifiedAt: verified ? "2026-12-03T10:00:00.000Z" : null,
    verifiedBy: verified ? "admin@example.com" : null,
    verifiedDigest: verified ? profileDigest(content) : null,
    createdAt: "2026-12-03T09:00:00.000Z",
    updatedAt: "2026-12-03T09:00:00.000Z",
  };
}

function invalid(fn: () => unknown, pointer: string) {
  try {
    fn();
  } catch (error) {
    assert.instance(error, DomainError);
    assert.is((error as DomainError).code, "FEDERATION_PROFILE_INVALID");
    assert.is((error as DomainError).source?.pointer, pointer);
    return;
  }
  assert.unreachable("expected FEDERATION_PROFILE_INVALID");
}

test("each provider takes exactly its own target members; audiences default per provider, generic must name one", () => {
  assert.is(
    validateProfileContent({ name: "a", provider: "aws", target: { role_arn: ROLE }, phases: ["apply", "plan"] })
      .audience,
    "sts.amazonaws.com",
  );
  const gcp = validateProfileContent({
    name: "g",
    provider: "gcp",
    target: {
      workload_identity_provider: "projects/1/locations/global/workloadIdentityPools/pool/providers/prov",
      service_account: "stackship@p.iam.gserviceaccount.com",
    },
    phases: ["plan"],
  });
  assert.is(gcp.audience, "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/pool/providers/prov");
  assert.is(
    validateProfileContent({
      name: "z",
      provider: "azure",
      target: { client_id: "c", tenant_id: "t" },
      phases: ["plan"],
    }).audience,
    "api://AzureADTokenExchange",
  );
  assert.is(
    validateProfileContent({ name: "x", provider: "generic", audience: "vault", target: {}, phases: ["plan"] })
      .audience,
    "vault",
  );
  // Phases come back in a fixed order.
  assert.equal(
    validateProfileContent({
      name: "a",
      provider: "aws",
      target: { role_arn: ROLE },
      phases: ["speculative_plan", "apply", "plan"],
    }).phases,
    ["plan", "apply", "speculative_plan"],
  );
  invalid(
    () => validateProfileContent({ name: "x", provider: "generic", target: {}, phases: ["plan"] }),
    "/data/attributes/audience",
  );
  invalid(
    () => validateProfileContent({ name: "a", provider: "aws", target: {}, phases: ["plan"] }),
    "/data/attributes/target",
  );
  invalid(
    () =>
      validateProfileContent({
        name: "a",
        provider: "aws",
        target: { role_arn: ROLE, client_id: "c" },
        phases: ["plan"],
      }),
    "/data/attributes/target/client_id",
  );
  invalid(
    () => validateProfileContent({ name: "z", provider: "azure", target: { client_id: "c" }, phases: ["plan"] }),
    "/data/attributes/target",
  );
  invalid(
    () =>
      validateProfileContent({
        name: "x",
        provider: "generic",
        audience: "v",
        target: { role_arn: ROLE },
        phases: ["plan"],
      }),
    "/data/attributes/target/role_arn",
  );
  invalid(
    () => validateProfileContent({ name: "a", provider: "aws", target: { role_arn: ROLE }, phases: [] }),
    "/data/attributes/phases",
  );
});

test("verification holds only for the profile as it was verified", () => {
  const verified = profile("a", ["speculative_plan"], true);
  assert.ok(isVerified(verified));
  assert.not.ok(isVerified({ ...verified, audience: "other" }));
  assert.not.ok(isVerified({ ...verified, target: { role_arn: "arn:aws:iam::123456789012:role/other" } }));
  assert.not.ok(isVerified({ ...verified, phases: ["speculative_plan", "apply"] }));
  assert.not.ok(isVerified({ ...verified, name: "b" }));
  assert.not.ok(isVerified({ ...verified, verifiedAt: null }));
  // The phases' order is not a change.
  assert.is(
    profileDigest({ ...verified, phases: ["plan", "apply"] }),
    profileDigest({ ...verified, phases: ["apply", "plan"] }),
  );
});

test("which profiles serve which phase of which run", () => {
  const plan = profile("p-plan", ["plan"]);
  const apply = profile("p-apply", ["apply"]);
  const specUnverified = profile("s-unverified", ["speculative_plan"]);
  const specVerified = profile("s-verified", ["speculative_plan"], true);
  const all = [specVerified, apply, plan, specUnverified];
  const names = (r: ReturnType<typeof profilesServing>) => r.profiles.map((p) => p.name);
  const api = { kind: "plan_and_apply" as const, source: "api" };
  assert.equal(names(profilesServing(api, "plan", all)), ["p-plan"]);
  assert.equal(names(profilesServing(api, "apply", all)), ["p-apply"]);
  const speculative = { kind: "speculative" as const, source: "cli" };
  assert.equal(names(profilesServing(speculative, "plan", all)), ["s-verified"]);
  assert.equal(profilesServing(speculative, "plan", [plan, specUnverified]), { profiles: [], refusal: "no_profile" });
  assert.equal(profilesServing(speculative, "apply", all).profiles, []);
  // A verified profile changed afterwards no longer serves speculative plans.
  assert.equal(profilesServing(speculative, "plan", [{ ...specVerified, audience: "changed" }]).refusal, "no_profile");
  // Same-repository pull request: only verified speculative_plan profiles.
  const pull = {
    kind: "speculative" as const,
    source: "github_pull_request",
    commit: { sha: "a".repeat(40), fork: false },
  };
  assert.equal(names(profilesServing(pull, "plan", all)), ["s-verified"]);
  // Fork pull requests get nothing, whatever is configured; so does a pull request whose fork flag was not recorded.
  const everything = profile("every", ["plan", "apply", "speculative_plan"], true);
  assert.equal(profilesServing({ ...pull, commit: { sha: "a".repeat(40), fork: true } }, "plan", [everything]), {
    profiles: [],
    refusal: "fork_pull_request",
  });
  assert.equal(
    profilesServing({ kind: "speculative", source: "github_pull_request", commit: null }, "plan", [everything]).refusal,
    "fork_pull_request",
  );
  assert.equal(
    profilesServing(
      { kind: "plan_and_apply", source: "github_push", commit: { sha: "b".repeat(40), fork: false } },
      "plan",
      [everything],
    ).profiles.length,
    1,
  );
  assert.ok(isForkRun({ kind: "plan_and_apply", source: "github_push", commit: { sha: "b".repeat(40), fork: true } }));
  assert.not.ok(isForkRun({ kind: "plan_and_apply", source: "api" }));
});

test("subject and claims name organization, project, workspace, phase, kind and source", () => {
  const scope = {
    organizationId: "org-1",
    organizationName: "acme",
    projectId: "prj-1",
    projectName: "core",
    workspaceId: "ws-1",
    workspaceName: "app",
  };
  assert.is(
    subjectOf(scope, "plan", "speculative"),
    "organization_id:org-1:project_id:prj-1:workspace_id:ws-1:run_phase:plan:run_kind:speculative:organization:acme:project:core:workspace:app",
  );
  // Same names, another workspace (renamed into the name, or re-created): another subject.
  assert.is.not(
    subjectOf({ ...scope, workspaceId: "ws-2" }, "plan", "speculative"),
    subjectOf(scope, "plan", "speculative"),
  );
  // A name cannot imitate the ids, even under the recommended condition's wildcard: its colons are encoded.
  const tricky = subjectOf(
    { ...scope, projectId: "prj-2", workspaceId: "ws-9", projectName: "x:workspace_id:ws-1:run_phase:apply:%" },
    "apply",
    "plan_and_apply",
  );
  assert.is(
    tricky,
    "organization_id:org-1:project_id:prj-2:workspace_id:ws-9:run_phase:apply:run_kind:plan_and_apply:organization:acme:project:x%3Aworkspace_id%3Aws-1%3Arun_phase%3Aapply%3A%25:workspace:app",
  );
  const condition = /^organization_id:org-1:project_id:.*:workspace_id:ws-1:run_phase:apply:.*$/; // StringLike "organization_id:org-1:project_id:*:workspace_id:ws-1:run_phase:apply:*"
  assert.not.ok(condition.test(tricky));
  assert.ok(condition.test(subjectOf(scope, "apply", "plan_and_apply")));
  const p = profile("p", ["plan"]);
  const claims = tokenClaims(scope, { id: "run-1", kind: "plan_and_apply", source: "tfe-api" }, "apply", p, "j");
  assert.equal(claims, {
    sub: "organization_id:org-1:project_id:prj-1:workspace_id:ws-1:run_phase:apply:run_kind:plan_and_apply:organization:acme:project:core:workspace:app",
    jti: "j",
    organization_id: "org-1",
    organization_name: "acme",
    project_id: "prj-1",
    project_name: "core",
    workspace_id: "ws-1",
    workspace_name: "app",
    run_id: "run-1",
    run_phase: "apply",
    run_kind: "plan_and_apply",
    source: "cli",
    federation_profile_id: p.id,
  });
  assert.is(
    tokenClaims(
      scope,
      { id: "run-1", kind: "speculative", source: "github_pull_request", commit: { sha: "c".repeat(40), fork: false } },
      "plan",
      p,
      "j",
    ).commit_sha,
    "c".repeat(40),
  );
  assert.is(sourceClaim({ kind: "speculative", source: "api" }), "api");
});

test("a token expires no later than the phase wall-clock limit", () => {
  const start = new Date("2026-12-03T12:00:00.999Z");
  const life = tokenLifetime(start, 3_600_000);
  assert.is(life.iat, Math.floor(start.getTime() / 1000));
  assert.is(life.nbf, life.iat);
  assert.ok(life.exp * 1000 <= start.getTime() + 3_600_000);
  assert.ok(life.exp * 1000 > start.getTime() + 3_600_000 - 1000);
});

test("key schedule: a rotated-in key is published before it signs; the old one stays until its last token expired", () => {
  const t = (s: string) => new Date(`2026-12-03T${s}.000Z`);
  const k1: SigningKeySchedule = {
    kid: "k1",
    createdAt: t("10:00:00").toISOString(),
    signsFrom: t("10:00:00").toISOString(),
    lastTokenExpiresAt: t("12:30:00").toISOString(),
  };
  const k2: SigningKeySchedule = {
    kid: "k2",
    createdAt: t("11:00:00").toISOString(),
    signsFrom: t("12:00:00").toISOString(),
    lastTokenExpiresAt: null,
  };
  const keys = [k1, k2];
  const kids = (list: SigningKeySchedule[]) => list.map((k) => k.kid).sort();
  // Before the lead is over: k1 signs, k2 is already published.
  assert.is(signingKeyAt(keys, t("11:59:59"))?.kid, "k1");
  assert.equal(kids(publishedKeysAt(keys, t("11:59:59"))), ["k1", "k2"]);
  // From the lead's end: k2 signs; k1 stays while a token it signed is valid (both sides of 12:30).
  assert.is(signingKeyAt(keys, t("12:00:00"))?.kid, "k2");
  assert.equal(kids(publishedKeysAt(keys, t("12:29:59"))), ["k1", "k2"]);
  assert.equal(kids(publishedKeysAt(keys, t("12:30:00"))), ["k2"]);
  assert.equal(kids(retiredKeysAt(keys, t("12:30:00"))), ["k1"]);
  assert.equal(retiredKeysAt(keys, t("12:29:59")), []);
  // A superseded key that never signed is retired at once.
  assert.equal(kids(publishedKeysAt([{ ...k1, lastTokenExpiresAt: null }, k2], t("12:00:00"))), ["k2"]);
  assert.is(signingKeyAt([k2], t("11:00:00")), undefined);
});

test("plan_credentials_required is entered only from pending, with its own reason, and is terminal", () => {
  assert.equal(
    transition({ status: "pending", kind: "speculative", hasChanges: null }, { type: "plan_credentials_unavailable" }),
    {
      status: "plan_credentials_required",
      reason: "plan_credentials_required",
    },
  );
  assert.ok(RUN_REASONS.includes("plan_credentials_required"));
  for (const status of RUN_STATUSES.filter((s) => s !== "pending")) {
    assert.throws(
      () => transition({ status, kind: "plan_and_apply", hasChanges: null }, { type: "plan_credentials_unavailable" }),
      (error: DomainError) => error.code === "RUN_TRANSITION_INVALID",
    );
  }
  for (const type of ["plan_started", "cancel_requested"] as const) {
    assert.throws(
      () => transition({ status: "plan_credentials_required", kind: "speculative", hasChanges: null }, { type }),
      (error: DomainError) => error.code === "RUN_TRANSITION_INVALID",
    );
  }
});

test.run();
