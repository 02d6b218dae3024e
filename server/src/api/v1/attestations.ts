import { issueRunAttestations, publishedAttestationKeys } from "../../commands/attestations.ts";
import type { DsseEnvelope } from "../../domain/attestations.ts";
import type { StoredRunAttestation } from "../../store/index.ts";
import { loadRun } from "../lookup.ts";
import type { H, S } from "./types.ts";

/** The v1 run attestation resource: the envelope exactly as issued, and the SHA-256 of that text. */
export function presentRunAttestation(attestation: StoredRunAttestation): S["RunAttestation"] {
  return {
    type: "run-attestations",
    id: attestation.id,
    attributes: {
      stage: attestation.stage,
      predicate_type: attestation.predicateType,
      key_id: attestation.keyId,
      envelope_sha256: attestation.envelopeDigest,
      created_at: attestation.createdAt,
      envelope: JSON.parse(attestation.envelope) as DsseEnvelope,
    },
  };
}

/** A run's signed attestations and the keys that verify them. */
export const attestationHandlers = {
  async listRunAttestations({ path, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:read");
    // Issues what is due but missing (the retry path of a signing that failed after a decision).
    const attestations = await issueRunAttestations(ctx.services, run.id);
    return { status: 200, body: { data: attestations.map(presentRunAttestation) } };
  },

  async getAttestationKeys({ ctx }) {
    return { status: 200, body: await publishedAttestationKeys(ctx.services) };
  },
} satisfies Partial<H>;
