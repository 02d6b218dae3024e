// Run decision attestations, verified by an independent tool: securesystemslib (PyPI, pinned
// below, in a venv this test makes under .stackship-test/, like the schemathesis test) through
// scripts/verify-attestation.py. Every decision of a real run (approve → applied, discard) yields
// an attestation it verifies; flipping one byte of the predicate, of the subject digest, or of
// the saved plan it names is refused.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  cancelRun,
  createPolicyOverride,
  getAttestationKeys,
  listRunAttestations,
  type RunAttestation,
} from "../../../client/src/index.ts";
import { REPO_ROOT } from "../../src/config.ts";
import { runArtifact } from "../../src/commands/run-artifacts.ts";
import { rotateAttestationKeys } from "../../src/commands/attestations.ts";
import type { RunDecisionPredicate } from "../../src/domain/attestations.ts";
import { run as exec } from "../contract/smoke-support.ts";
import { createOrganizationWithToken } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { review } from "../support/review.ts";
import { applyUntil, approvePlan, fixture, startRun, waitToSettle } from "../support/runs.ts";
import { acmeWorkspace, plannedRun } from "../support/scenarios.ts";
import { addMembership, createUser, signIn } from "../support/sessions.ts";
import { newPolicySet, policy } from "../support/policies.ts";
import { testEachServer, withTestServer, type TestServer } from "../support/test-server.ts";

const SECURESYSTEMSLIB_VERSION = "1.3.1";
const VENV = join(REPO_ROOT, ".stackship-test/in-toto-venv");
const VERIFY = join(REPO_ROOT, "scripts/verify-attestation.py");
const PREDICATE_TYPE = "https://stackship.dev/attestations/run-decision/v1";

/** The venv's python with securesystemslib (made once, then reused). */
async function python(): Promise<string> {
  const bin = join(VENV, "bin/python");
  const has =
    existsSync(bin) &&
    (
      await exec(bin, ["-c", "import securesystemslib, cryptography; print(securesystemslib.__version__)"]).catch(
        () => ({ stdout: "" }),
      )
    ).stdout.trim();
  if (has === SECURESYSTEMSLIB_VERSION) return bin;
  await mkdir(join(REPO_ROOT, ".stackship-test"), { recursive: true });
  if (!existsSync(bin)) await exec("python3", ["-m", "venv", VENV]);
  await exec(bin, [
    "-m",
    "pip",
    "install",
    "--quiet",
    "--disable-pip-version-check",
    `securesystemslib[crypto]==${SECURESYSTEMSLIB_VERSION}`,
  ]);
  return bin;
}

interface Verdict {
  ok: boolean;
  output: string;
  predicate?: RunDecisionPredicate;
  subject?: Array<{ name: string; digest: { sha256: string } }>;
}

/** Runs the independent verifier over one envelope (and the subject files it must name). */
async function verify(dir: string, keys: unknown, envelope: unknown, subjects: Buffer[] = []): Promise<Verdict> {
  const work = await mkdtemp(join(dir, "v-"));
  await writeFile(join(work, "keys.json"), JSON.stringify(keys));
  await writeFile(join(work, "envelope.json"), JSON.stringify(envelope));
  const args = [VERIFY, "--keys", join(work, "keys.json"), "--envelope", join(work, "envelope.json")];
  for (const [i, bytes] of subjects.entries()) {
    await writeFile(join(work, `subject-${i}`), bytes);
    args.push("--subject", join(work, `subject-${i}`));
  }
  try {
    const { stdout } = await exec(await python(), args);
    return { ok: true, output: stdout, ...(JSON.parse(stdout) as object) };
  } catch (error) {
    return { ok: false, output: (error as Error).message };
  }
}

type Envelope = RunAttestation["attributes"]["envelope"];

/** The envelope with its statement changed by `edit` (the signature left as it was). */
function tampered(envelope: Envelope, edit: (statementJson: string) => string): Envelope {
  const json = Buffer.from(envelope.payload, "base64").toString("utf8");
  const changed = edit(json);
  assert.is.not(changed, json, "the edit changed the statement");
  return { ...envelope, payload: Buffer.from(changed, "utf8").toString("base64") };
}

/** Flips one byte: the character at `at` becomes another one. */
const flipAt = (text: string, at: number) => text.slice(0, at) + (text[at] === "0" ? "1" : "0") + text.slice(at + 1);

async function attestationsOf(server: TestServer, token: string, runId: string): Promise<RunAttestation[]> {
  return expectStatus(await listRunAttestations({ client: server.v1(token), path: { run_id: runId } }), 200).data;
}

async function publishedKeys(server: TestServer) {
  return expectStatus(await getAttestationKeys({ client: server.v1() }), 200);
}

async function savedPlan(server: TestServer, runId: string): Promise<Buffer> {
  const run = (await server.services.stores.runs.getById(runId))!;
  const plan = await runArtifact(server.services, run, "plan");
  assert.ok(plan, "the run has a saved plan");
  return server.services.artifacts.read(plan, run.workspaceId);
}

const attestations = suite("run decision attestations (verified with securesystemslib)");

testEachServer(
  attestations,
  "approve → applied: decision and outcome attestations verify; a flipped byte of the predicate, the subject or the plan is refused",
  async (server) => {
    const dir = await mkdtemp(join(tmpdir(), "ss-attest-"));
    const { token, planned, run, workspace, organizationName } = await plannedRun(server, "attested");
    await approvePlan(server, token, run.id, planned.attributes.plan_digest!, "CHG-42");
    const applied = await waitToSettle(server, token, run.id, "applied");

    const keys = await publishedKeys(server);
    assert.is(keys.keys.length, 1);
    assert.match(keys.keys[0].public_key_pem, /^-----BEGIN PUBLIC KEY-----/);
    const list = await attestationsOf(server, token, run.id);
    assert.equal(
      list.map((a) => a.attributes.stage),
      ["decision", "outcome"],
    );
    // The review names them by their envelopes' digests.
    const reviewed = await review(server.v1(token), run.id);
    assert.equal(
      reviewed.attributes.stages.approval.attestations.map((a) => [a.id, a.stage, a.envelope_sha256]),
      list.map((a) => [a.id, a.attributes.stage, a.attributes.envelope_sha256]),
    );
    // Review evidence each attempt recorded when it started (issue 30, part 3).
    const e = reviewed.attributes.evidence;
    assert.match(e.build_sha.value ?? "", /^[0-9a-f]{40}$/);
    assert.is(e.runner_release.state, "recorded");
    assert.match(e.sandbox_profile_digest.value ?? "", /^[0-9a-f]{64}$/);
    assert.match(e.opentofu_build.value ?? "", /^[0-9a-f]{64}$/);
    assert.match(e.job_engine_build.value ?? "", /^graphile-worker@\d+\.\d+\.\d+/);
    assert.equal(
      [e.definition_sha, e.protocol],
      [
        { state: "not_recorded", value: null },
        { state: "not_recorded", value: null },
      ],
    );
    assert.equal(
      e.attempts.map((a) => [a.phase, a.workflow_id]),
      e.jobs.map((j) => [j.phase, j.id]),
      "each attempt names the runner job that ran it",
    );
    const plan = await savedPlan(server, run.id);
    assert.is(createHash("sha256").update(plan).digest("hex"), planned.attributes.plan_digest);
    const version = await server.db
      .knex("state_versions")
      .where({ run_id: run.id, status: "finalized" })
      .first<{ id: string; serial: number | string; sha256: string }>();
    assert.ok(version, "the apply published a state version");

    for (const attestation of list) {
      const a = attestation.attributes;
      assert.is(a.predicate_type, PREDICATE_TYPE);
      assert.is(a.key_id, keys.keys[0].kid);
      const verdict = await verify(dir, keys, a.envelope, [plan]);
      assert.ok(verdict.ok, verdict.output);
      const p = verdict.predicate!;
      assert.equal(p.run.workspace, { id: workspace.id, name: "attested" });
      assert.is(p.run.organization.name, organizationName);
      assert.is(p.run.id, run.id);
      assert.is(p.evidence.plan_digest, planned.attributes.plan_digest);
      assert.match(p.evidence.plan_json_digest!, /^[0-9a-f]{64}$/);
      assert.match(p.evidence.dependency_bundle_digest!, /^[0-9a-f]{64}$/);
      assert.is(p.evidence.policy.outcome, "skipped");
      assert.is(p.decision.outcome, "approved");
      assert.is(p.decision.reason, "CHG-42");
      assert.is(p.decision.by.type, "token");
      assert.match(p.decision.by.id!, /^prn-/);
      assert.is(p.run.opentofu_version, applied.attributes.opentofu_version);
    }
    const [decision, outcome] = list.map((a) => a.attributes);
    const decided = await verify(dir, keys, decision.envelope);
    assert.equal(decided.predicate!.apply, { outcome: "pending", published_state_version: null });
    const ended = await verify(dir, keys, outcome.envelope);
    assert.equal(ended.predicate!.apply, {
      outcome: "applied",
      published_state_version: { id: version.id, serial: Number(version.serial), digest: version.sha256 },
    });
    assert.equal(
      ended.subject!.map((s) => s.digest.sha256),
      [planned.attributes.plan_digest, version.sha256],
    );

    // The attacks: each one byte, each refused.
    const predicateFlipped = tampered(outcome.envelope, (json) =>
      flipAt(json, json.indexOf('"serial":') + '"serial":'.length),
    );
    const refusedPredicate = await verify(dir, keys, predicateFlipped);
    assert.not.ok(refusedPredicate.ok, "a changed predicate must not verify");
    assert.match(refusedPredicate.output, /REFUSED: VerificationError/);
    const subjectFlipped = tampered(outcome.envelope, (json) =>
      flipAt(json, json.indexOf(planned.attributes.plan_digest!)),
    );
    const refusedSubject = await verify(dir, keys, subjectFlipped);
    assert.not.ok(refusedSubject.ok, "a changed subject must not verify");
    assert.match(refusedSubject.output, /REFUSED: VerificationError/);
    const otherPlan = Buffer.from(plan);
    otherPlan[otherPlan.length >> 1] ^= 0x01;
    const refusedPlan = await verify(dir, keys, outcome.envelope, [otherPlan]);
    assert.not.ok(refusedPlan.ok, "a plan with one byte flipped is not the attested subject");
    assert.match(refusedPlan.output, /is not a subject of the statement/);
  },
  { runner: true },
);

testEachServer(
  attestations,
  "discard by a signed-in user: one decision attestation naming who and why; a missing one is issued again on listing; others cannot list it",
  async (server) => {
    const dir = await mkdtemp(join(tmpdir(), "ss-attest-"));
    const { token, run, organizationName } = await plannedRun(server, "discarded");
    const user = await createUser(server, { displayName: "Dana Discarder" });
    await addMembership(server, organizationName, user.email, "operator");
    const session = await signIn(server, user.email, user.password);
    const discarded = await session.request("POST", `/v1/runs/${run.id}/actions/discard`, {
      body: { data: { type: "decisions", attributes: { reason: "wrong region" } } },
    });
    assert.is(discarded.status, 202, await discarded.text());

    const keys = await publishedKeys(server);
    const [only, ...rest] = await attestationsOf(server, token, run.id);
    assert.is(rest.length, 0, "a discarded run has one attestation");
    assert.is(only.attributes.stage, "decision");
    const verdict = await verify(dir, keys, only.attributes.envelope, [await savedPlan(server, run.id)]);
    assert.ok(verdict.ok, verdict.output);
    assert.equal(verdict.predicate!.decision.by, { type: "user", id: user.userId, name: "Dana Discarder" });
    assert.is(verdict.predicate!.decision.outcome, "discarded");
    assert.is(verdict.predicate!.decision.reason, "wrong region");
    assert.equal(verdict.predicate!.apply, { outcome: "not_applied", published_state_version: null });
    const stored = JSON.stringify(only.attributes.envelope);
    assert.is(
      only.attributes.envelope_sha256,
      createHash("sha256").update(stored).digest("hex"),
      "the digest names the envelope as issued",
    );
    const reasonFlipped = tampered(only.attributes.envelope, (json) => json.replace("wrong region", "wrong regioN"));
    assert.not.ok((await verify(dir, keys, reasonFlipped)).ok, "a changed reason must not verify");

    // The retry path: an attestation that could not be issued after the decision is issued on listing.
    await server.db.knex("run_attestations").where({ run_id: run.id }).delete();
    const [again] = await attestationsOf(server, token, run.id);
    assert.is(again.attributes.stage, "decision");
    assert.ok((await verify(dir, keys, again.attributes.envelope)).ok);

    // The private halves are sealed at rest (AES-GCM under the master key): no PEM, no key bytes in the row.
    for (const row of await server.db
      .knex("attestation_keys")
      .select<Array<{ private_key_sealed: unknown; public_key_pem: unknown }>>(
        "private_key_sealed",
        "public_key_pem",
      )) {
      assert.not.match(String(row.private_key_sealed), /PRIVATE KEY|BEGIN/);
      assert.match(String(row.public_key_pem), /^-----BEGIN PUBLIC KEY-----/);
    }

    // Rotation with overlap: the new key signs from now on, the old one stays published and what it signed still verifies.
    const rotated = await rotateAttestationKeys(server.services, { publishLeadMs: 0 });
    const both = await publishedKeys(server);
    assert.equal(
      both.keys.map((k) => [k.kid, k.signing]),
      [
        [again.attributes.key_id, false],
        [rotated.added.kid, true],
      ],
    );
    assert.ok(
      (await verify(dir, both, again.attributes.envelope)).ok,
      "an attestation of the superseded key still verifies",
    );
    await server.db.knex("run_attestations").where({ run_id: run.id }).delete();
    const [resigned] = await attestationsOf(server, token, run.id);
    assert.is(resigned.attributes.key_id, rotated.added.kid);
    assert.ok((await verify(dir, both, resigned.attributes.envelope)).ok);
    assert.not.ok(
      (await verify(dir, keys, resigned.attributes.envelope)).ok,
      "the old key alone does not verify what the new one signed",
    );

    // Another organization's token cannot see the run's attestations.
    const other = await createOrganizationWithToken(server, "globex");
    const foreign = await listRunAttestations({ client: server.v1(other.token), path: { run_id: run.id } });
    assert.is(foreign.response.status, 404);
  },
  { runner: true },
);

const SLOW = {
  "main.tf":
    'resource "terraform_data" "slow" {\n  input = "two"\n  provisioner "local-exec" {\n    command = "echo provisioning-started; sleep 60"\n  }\n}\n',
};

testEachServer(
  attestations,
  "approve → needs recovery (apply interrupted): the outcome attestation says needs_recovery with no published state, and verifies",
  async (server) => {
    const dir = await mkdtemp(join(tmpdir(), "ss-attest-"));
    const { token, workspace } = await acmeWorkspace(server, "interrupted");
    const run = await startRun(server, token, workspace.id, SLOW);
    await applyUntil(server, token, run.id);
    expectStatus(
      await cancelRun({
        client: server.v1(token),
        path: { run_id: run.id },
        body: { data: { type: "decisions", attributes: { reason: "stop" } } },
      }),
      202,
    );
    await waitToSettle(server, token, run.id, "needs_recovery");
    const list = await attestationsOf(server, token, run.id);
    assert.equal(
      list.map((a) => a.attributes.stage),
      ["decision", "outcome"],
    );
    const verdict = await verify(dir, await publishedKeys(server), list[1].attributes.envelope, [
      await savedPlan(server, run.id),
    ]);
    assert.ok(verdict.ok, verdict.output);
    assert.equal(verdict.predicate!.apply, { outcome: "needs_recovery", published_state_version: null });
    assert.is(verdict.subject!.length, 1, "no state version was published: the saved plan is the only subject");
  },
  { runner: true },
);

const SOFT_FAIL = `package soft\n\nviolations contains {"title": "Needs tags", "message": "flagged"} if {\n  some rc in input.resource_changes\n  rc.type == "terraform_data"\n}\n`;

testEachServer(
  attestations,
  "policy override: the approval of a soft failure under an override attests the override (id, reason, expiry) and the soft-failed result; it verifies",
  async (server) => {
    const dir = await mkdtemp(join(tmpdir(), "ss-attest-"));
    const { token, organizationName, workspace } = await acmeWorkspace(server, "overridden");
    expectStatus(
      await newPolicySet(server, token, organizationName, "tags", [policy("tagged", "soft_mandatory", SOFT_FAIL)]),
      201,
    );
    const run = await startRun(server, token, workspace.id, fixture("basic"));
    const failed = await waitToSettle(server, token, run.id, "policy_soft_failed", { phase: "policy" });
    const digest = failed.attributes.policy_result_digest!;
    const created = expectStatus(
      await createPolicyOverride({
        client: server.v1(token),
        path: { run_id: run.id },
        body: {
          data: { type: "policy-overrides", attributes: { result_digest: digest, reason: "tags follow in CHG-7" } },
        },
      }),
      201,
    ).data;
    await approvePlan(server, token, run.id, failed.attributes.plan_digest!);
    const [decision] = await attestationsOf(server, token, run.id);
    assert.is(decision.attributes.stage, "decision");
    const verdict = await verify(dir, await publishedKeys(server), decision.attributes.envelope);
    assert.ok(verdict.ok, verdict.output);
    assert.equal(verdict.predicate!.evidence.policy, {
      result_digest: digest,
      outcome: "soft_failed",
      override: { id: created.id, reason: "tags follow in CHG-7", expires_at: created.attributes.expires_at },
    });
    await waitToSettle(server, token, run.id, "applied");
    const stages = (await attestationsOf(server, token, run.id)).map((a) => a.attributes.stage);
    assert.equal(stages, ["decision", "outcome"]);
  },
  { runner: true },
);

attestations(
  "npm run keys:rotate -- --attestation rotates the attestation key of the deployment it is pointed at; the old key stays published",
  async () => {
    await withTestServer("sqlite", async (server) => {
      const before = await publishedKeys(server);
      assert.is(before.keys.length, 1);
      const rotate = (args: string[]) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
          execFile(
            process.execPath,
            ["--import", "tsx", join(REPO_ROOT, "server/src/keys-main.ts"), ...args],
            {
              cwd: REPO_ROOT,
              env: {
                PATH: process.env.PATH,
                STACKSHIP_DATABASE_URL: server.databaseUrl,
                STACKSHIP_DATA_DIR: server.dataDir,
              },
            },
            (error, stdout, stderr) =>
              resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
          );
        });
      const result = await rotate(["--attestation"]);
      assert.is(result.code, 0, result.stderr);
      assert.match(result.stdout, /added attestation key [0-9a-f]{64}: published now, signs from /);
      const after = await publishedKeys(server);
      assert.equal(
        after.keys.map((k) => k.kid),
        [before.keys[0].kid, after.keys[1].kid],
      );
      assert.equal(
        after.keys.map((k) => k.signing),
        [false, true],
      );
      // The workload identity keys were left alone.
      assert.is(
        await server.db
          .knex("workload_identity_keys")
          .count({ n: "*" })
          .first()
          .then((r) => Number(r?.n)),
        0,
      );
    });
  },
);

testEachServer(
  attestations,
  "the first key: many callers finding no key at once leave exactly one signing key",
  async (server) => {
    // Every one of these finds no key and generates one; the unique first-key index lets one be stored.
    const answers = await Promise.all(Array.from({ length: 8 }, () => publishedKeys(server)));
    const stored: Array<{ kid: string }> = await server.db.knex("attestation_keys").select("kid");
    assert.is(stored.length, 1, "one key in the table");
    for (const answer of answers)
      assert.equal(
        answer.keys.map((k) => [k.kid, k.signing]),
        [[stored[0].kid, true]],
      );
  },
);

attestations.run();
