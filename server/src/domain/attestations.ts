/**
 * Run decision attestations: an in-toto Statement v1 whose predicate says what was decided about a
 * run and on what evidence, carried in a DSSE envelope (https://github.com/secure-systems-lab/dsse).
 * Pure: building the statement, the DSSE pre-authentication encoding and the envelope's shape.
 * Signing (ECDSA P-256, SHA-256, DER signatures: what cosign's `--key` and securesystemslib verify)
 * lives in commands/attestations.ts.
 */

export const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
export const RUN_DECISION_PREDICATE_TYPE = "https://stackship.dev/attestations/run-decision/v1";
export const DSSE_PAYLOAD_TYPE = "application/vnd.in-toto+json";
export const ATTESTATION_KEY_ALGORITHM = "ecdsa-p256-sha256" as const;

/**
 * When an attestation is issued: `decision` when a run is approved or discarded, `outcome` when an
 * approved run's apply ended (applied, errored, needs recovery, or recovered).
 */
export type AttestationStage = "decision" | "outcome";

/** One subject of a statement. */
export interface StatementSubject {
  name: string;
  digest: { sha256: string };
}

/** The predicate of `https://stackship.dev/attestations/run-decision/v1` (spec/schemas/stackship.run-decision.v1.json). */
export interface RunDecisionPredicate {
  run: {
    id: string;
    workspace: { id: string; name: string };
    organization: { id: string; name: string };
    configuration_digest: string;
    input_snapshot_digest: string;
    opentofu_version: string;
  };
  evidence: {
    plan_digest: string;
    plan_json_digest: string | null;
    plan_diff_digest: string | null;
    policy: {
      result_digest: string | null;
      outcome: string | null;
      override: { id: string; reason: string; expires_at: string } | null;
    };
    predecessor_state: { version_id: string | null; digest: string | null };
    dependency_bundle_digest: string | null;
  };
  decision: {
    outcome: "approved" | "discarded";
    decided_at: string;
    reason: string | null;
    by: { type: "user" | "token"; id: string | null; name: string | null };
  };
  apply: {
    outcome: "applied" | "errored" | "needs_recovery" | "pending" | "not_applied";
    published_state_version: { id: string; serial: number; digest: string } | null;
  };
}

/** An in-toto Statement v1. */
export interface Statement {
  _type: typeof STATEMENT_TYPE;
  subject: StatementSubject[];
  predicateType: typeof RUN_DECISION_PREDICATE_TYPE;
  predicate: RunDecisionPredicate;
}

/** A DSSE envelope (base64 standard encoding for payload and signatures, as the DSSE spec shows). */
export interface DsseEnvelope {
  payloadType: typeof DSSE_PAYLOAD_TYPE;
  payload: string;
  signatures: Array<{ keyid: string; sig: string }>;
}

/** The statement about a run: the saved plan is always a subject, the published state version after an apply. */
export function runDecisionStatement(predicate: RunDecisionPredicate): Statement {
  const subject: StatementSubject[] = [
    { name: `runs/${predicate.run.id}/plan.tfplan`, digest: { sha256: predicate.evidence.plan_digest } },
  ];
  const published = predicate.apply.published_state_version;
  if (published) subject.push({ name: `state-versions/${published.id}`, digest: { sha256: published.digest } });
  return { _type: STATEMENT_TYPE, subject, predicateType: RUN_DECISION_PREDICATE_TYPE, predicate };
}

/** DSSE's pre-authentication encoding: `DSSEv1 SP LEN(type) SP type SP LEN(body) SP body`. */
export function preAuthenticationEncoding(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload]);
}

/** The statement an envelope carries (no signature check). */
export function statementOf(envelope: DsseEnvelope): Statement {
  return JSON.parse(Buffer.from(envelope.payload, "base64").toString("utf8")) as Statement;
}
