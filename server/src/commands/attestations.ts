import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import {
  ATTESTATION_KEY_ALGORITHM,
  DSSE_PAYLOAD_TYPE,
  preAuthenticationEncoding,
  RUN_DECISION_PREDICATE_TYPE,
  runDecisionStatement,
  type AttestationStage,
  type DsseEnvelope,
  type RunDecisionPredicate,
} from "../domain/attestations.ts";
import { isDomainError } from "../domain/errors.ts";
import type { Run, RunReview } from "../domain/records.ts";
import type { Services } from "./services.ts";
import { inTransaction, type StoredAttestationKey, type StoredRunAttestation } from "../store/index.ts";
import { sha256Hex } from "../domain/canonical-json.ts";
import { signingKeyAt } from "../domain/workload-identity.ts";

/**
 * Run decision attestations: the deployment's ECDSA P-256 attestation keys (made, sealed with the
 * master key, rotated with overlap) and the issuing of one DSSE envelope per run and stage.
 *
 * When: right after the decision's transaction commits (approve, discard) and right after an
 * approved run's apply ended, never inside it, so a failure to sign never blocks or undoes a
 * decision. Issuing is idempotent (one envelope per run and stage, a unique index), so any later
 * call completes what an earlier one missed: listing a run's attestations does, which is the retry
 * path. Signing is local (no external service).
 */

/** A fresh ECDSA P-256 key, the private half sealed; its key id is the SHA-256 of its SubjectPublicKeyInfo (DER). */
function newAttestationKey(services: Services, createdAt: Date, signsFrom: Date): StoredAttestationKey {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return {
    kid: sha256Hex(publicKey.export({ type: "spki", format: "der" })),
    algorithm: ATTESTATION_KEY_ALGORITHM,
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
    privateKeySealed: services.keys.attestationKeys.sealText(
      privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    ),
    createdAt: createdAt.toISOString(),
    signsFrom: signsFrom.toISOString(),
  };
}

/** The stored keys, creating the first one (signing at once). */
async function keysWithOne(services: Services): Promise<StoredAttestationKey[]> {
  const keys = await services.stores.attestations.listKeys();
  if (keys.length > 0) return keys;
  const now = services.clock();
  try {
    await services.stores.attestations.addKey(newAttestationKey(services, now, now), { first: true });
  } catch (error) {
    if (!isDomainError(error, "CONSTRAINT_VIOLATION")) throw error;
  }
  return services.stores.attestations.listKeys();
}

/** The key that signs at `now`: the newest whose `signs_from` has come (else the first key). */
function attestationKeyAt(keys: StoredAttestationKey[], now: Date): StoredAttestationKey {
  return signingKeyAt(keys, now) ?? keys[0];
}

/**
 * The published attestation keys: every stored key, the one about to sign included. Superseded
 * keys stay published so every attestation they signed stays verifiable.
 */
export async function publishedAttestationKeys(services: Services) {
  const keys = await keysWithOne(services);
  const signing = attestationKeyAt(keys, services.clock());
  return {
    keys: keys.map((key) => ({
      kid: key.kid,
      algorithm: ATTESTATION_KEY_ALGORITHM,
      public_key_pem: key.publicKeyPem,
      created_at: key.createdAt,
      signs_from: key.signsFrom,
      signing: key.kid === signing.kid,
    })),
  };
}

/**
 * Rotation: a new key is published now and signs from `now + publishLeadMs`; earlier keys stay
 * published (verifiers need them for what they signed).
 */
export async function rotateAttestationKeys(services: Services, { publishLeadMs }: { publishLeadMs: number }) {
  if (!Number.isFinite(publishLeadMs) || publishLeadMs < 0)
    throw new Error("the publish lead must be zero or more milliseconds");
  const now = services.clock();
  const existing = await services.stores.attestations.listKeys();
  const key = newAttestationKey(services, now, existing.length === 0 ? now : new Date(now.getTime() + publishLeadMs));
  await inTransaction(services.db, async (stores) => {
    await stores.attestations.addKey(key);
    await stores.audit.record({
      organizationId: null,
      actorId: null,
      action: "attestation.key_rotated",
      targetType: "attestation-keys",
      targetId: key.kid,
      data: { kid: key.kid, signs_from: key.signsFrom },
      createdAt: now,
    });
  });
  return {
    added: { kid: key.kid, signsFrom: key.signsFrom },
    published: (await services.stores.attestations.listKeys()).map((k) => k.kid),
  };
}

const opened = new Map<string, KeyObject>();

function privateKeyOf(services: Services, key: StoredAttestationKey): KeyObject {
  let found = opened.get(key.kid);
  if (!found) {
    found = createPrivateKey(services.keys.attestationKeys.openText(key.privateKeySealed));
    opened.set(key.kid, found);
  }
  return found;
}

/** Signs a statement into a DSSE envelope (ECDSA P-256 over SHA-256 of the PAE, DER signature). */
export function signEnvelope(privateKey: KeyObject, keyId: string, statement: object): DsseEnvelope {
  const payload = Buffer.from(JSON.stringify(statement), "utf8");
  const sig = sign("sha256", preAuthenticationEncoding(DSSE_PAYLOAD_TYPE, payload), privateKey);
  return {
    payloadType: DSSE_PAYLOAD_TYPE,
    payload: payload.toString("base64"),
    signatures: [{ keyid: keyId, sig: sig.toString("base64") }],
  };
}

/** The apply outcome an approved run's status records, or null while its apply has not ended. */
function applyOutcomeOf(run: Run): "applied" | "errored" | "needs_recovery" | null {
  if (run.status === "applied") return "applied";
  if (run.status === "needs_recovery") return "needs_recovery";
  if ((run.status === "errored" || run.status === "canceled") && run.execution.applyStatus !== "pending")
    return "errored";
  return null;
}

async function predicateOf(
  services: Services,
  run: Run,
  review: RunReview,
  stage: AttestationStage,
): Promise<RunDecisionPredicate | null> {
  const stores = services.stores;
  const x = run.execution;
  if (x.planDigest === null) return null;
  const [workspace, organization, overrides, users, principal, versions] = await Promise.all([
    stores.workspaces.getById(run.workspaceId),
    stores.organizations.getById(run.organizationId),
    stores.policyResults.listOverrides(run.id, 50),
    review.actorId === null ? Promise.resolve(new Map<string, string>()) : stores.users.displayNames([review.actorId]),
    review.actorId === null ? Promise.resolve(undefined) : stores.principals.getById(review.actorId),
    stage === "outcome" ? stores.stateVersions.listByRun(run.id) : Promise.resolve([]),
  ]);
  const override =
    x.policyOutcome === "soft_failed"
      ? overrides.overrides.find((o) => o.resultDigest === x.policyResultDigest)
      : undefined;
  // The state version the apply published: the run's finalized one with the highest serial.
  const published = versions
    .filter((v) => v.status === "finalized" && v.sha256 !== null)
    .sort((a, b) => b.serial - a.serial)[0];
  const userName = review.actorId === null ? undefined : users.get(review.actorId);
  return {
    run: {
      id: run.id,
      workspace: { id: run.workspaceId, name: workspace?.name ?? "" },
      organization: { id: run.organizationId, name: organization?.name ?? "" },
      configuration_digest: run.configDigest,
      input_snapshot_digest: run.inputDigest,
      opentofu_version: run.opentofuVersion,
    },
    evidence: {
      plan_digest: x.planDigest,
      plan_json_digest: review.planJsonDigest,
      plan_diff_digest: review.planDiffDigest,
      policy: {
        result_digest: review.policyResultDigest,
        outcome: x.policyOutcome,
        override: override ? { id: override.id, reason: override.reason, expires_at: override.expiresAt } : null,
      },
      predecessor_state: { version_id: x.predecessorStateVersionId, digest: review.predecessorStateDigest },
      dependency_bundle_digest: review.dependencyBundleDigest,
    },
    decision: {
      outcome: review.decision as "approved" | "discarded",
      decided_at: review.decidedAt,
      reason: review.reason,
      by:
        userName !== undefined
          ? { type: "user", id: review.actorId, name: userName }
          : { type: "token", id: review.actorId, name: principal?.name ?? null },
    },
    apply:
      stage === "decision"
        ? { outcome: review.decision === "approved" ? "pending" : "not_applied", published_state_version: null }
        : {
            outcome: applyOutcomeOf(run) ?? "pending",
            published_state_version: published
              ? { id: published.id, serial: published.serial, digest: published.sha256! }
              : null,
          },
  };
}

/** The stages due for a run now: `decision` once approved or discarded, `outcome` once an approved run's apply ended. */
function dueStages(run: Run, review: RunReview | undefined): AttestationStage[] {
  if (!review || (review.decision !== "approved" && review.decision !== "discarded")) return [];
  return review.decision === "approved" && applyOutcomeOf(run) !== null ? ["decision", "outcome"] : ["decision"];
}

/**
 * Issues the attestations due for a run that are not issued yet. Idempotent: a concurrent issuer
 * that got there first wins the unique index, and this one keeps what it stored. Returns the
 * run's attestations when nothing was due (null when it issued, so they must be read again).
 */
async function issueMissing(services: Services, runId: string): Promise<StoredRunAttestation[] | null> {
  const stores = services.stores;
  const [run, review, existing] = await Promise.all([
    stores.runs.getById(runId),
    stores.reviews.getByRun(runId),
    stores.attestations.forRun(runId),
  ]);
  const missing = run ? dueStages(run, review).filter((stage) => !existing.some((a) => a.stage === stage)) : [];
  if (!run || missing.length === 0) return existing;
  const now = services.clock();
  const [keys, predicates] = await Promise.all([
    keysWithOne(services),
    Promise.all(missing.map((stage) => predicateOf(services, run, review!, stage))),
  ]);
  const key = attestationKeyAt(keys, now);
  for (const [i, stage] of missing.entries()) {
    const predicate = predicates[i];
    if (predicate === null) continue;
    const envelope = JSON.stringify(
      signEnvelope(privateKeyOf(services, key), key.kid, runDecisionStatement(predicate)),
    );
    try {
      await stores.attestations.record({
        runId,
        stage,
        keyId: key.kid,
        predicateType: RUN_DECISION_PREDICATE_TYPE,
        envelope,
        envelopeDigest: sha256Hex(envelope),
        createdAt: now.toISOString(),
      });
    } catch (error) {
      if (!isDomainError(error, "CONSTRAINT_VIOLATION")) throw error;
    }
  }
  return null;
}

/** The run's attestations, issuing first any that are due but missing (the retry path). */
export async function issueRunAttestations(services: Services, runId: string): Promise<StoredRunAttestation[]> {
  return (await issueMissing(services, runId)) ?? services.stores.attestations.forRun(runId);
}

/**
 * Issues what is due after a decision or an apply's end without ever failing the caller: the
 * decision is already committed, and listing the run's attestations retries what failed here.
 */
export async function attestAfterDecision(services: Services, runId: string): Promise<void> {
  try {
    await issueMissing(services, runId);
  } catch (error) {
    services.logger.warn(
      { runId, err: error },
      "the run's attestation could not be issued now; listing its attestations retries",
    );
  }
}
