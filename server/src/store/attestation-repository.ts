import { newId } from "../domain/ids.ts";
import { rowMapper } from "./columns.ts";
import { Repository } from "./repository.ts";
import type { DbTimestamp } from "./rows.ts";
import { translating } from "./translate-error.ts";

/** attestation_keys */
interface AttestationKeyRow {
  kid: string;
  algorithm: string;
  public_key_pem: string;
  private_key_sealed: string;
  created_at: DbTimestamp;
  signs_from: DbTimestamp;
  /** 1 on the deployment's first key (unique), null on later ones. */
  first_key?: number | null;
}

/** A stored attestation key; the private half stays sealed until the signer opens it. */
export interface StoredAttestationKey {
  kid: string;
  algorithm: string;
  publicKeyPem: string;
  privateKeySealed: string;
  createdAt: string;
  signsFrom: string;
}

const toKey = rowMapper<AttestationKeyRow, StoredAttestationKey>()(
  "kid algorithm public_key_pem private_key_sealed created_at:iso signs_from:iso",
);

/** run_attestations */
interface RunAttestationRow {
  id: string;
  run_id: string;
  stage: string;
  key_id: string;
  predicate_type: string;
  envelope: string;
  envelope_digest: string;
  created_at: DbTimestamp;
}

/** One issued attestation: its DSSE envelope as stored (the exact JSON text that was issued). */
export interface StoredRunAttestation {
  id: string;
  runId: string;
  stage: "decision" | "outcome";
  keyId: string;
  predicateType: string;
  envelope: string;
  /** The SHA-256 of `envelope`'s UTF-8 bytes. */
  envelopeDigest: string;
  createdAt: string;
}

const toAttestation = rowMapper<RunAttestationRow, StoredRunAttestation>()(
  "id run_id stage:as key_id predicate_type envelope envelope_digest created_at:iso",
);

/** The deployment's attestation keys and the attestations they signed. */
export class AttestationRepository extends Repository {
  /**
   * Stores a key. `first` marks the deployment's first key: a second first key (another process
   * that found no key at the same moment) throws CONSTRAINT_VIOLATION and is not stored.
   */
  async addKey(key: StoredAttestationKey, options: { first?: boolean } = {}): Promise<StoredAttestationKey> {
    const row: AttestationKeyRow = { ...toKey.write(key), first_key: options.first ? 1 : null };
    return translating(this.dialect, async () => {
      await this.db<AttestationKeyRow>("attestation_keys").insert(row);
      return toKey(row);
    });
  }

  /** Every stored key, oldest first. */
  async listKeys(): Promise<StoredAttestationKey[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<AttestationKeyRow>("attestation_keys").orderBy([
        { column: "signs_from", order: "asc" },
        { column: "kid", order: "asc" },
      ]);
      return rows.map(toKey);
    });
  }

  /** Records an attestation; a second one for the same run and stage throws CONSTRAINT_VIOLATION. */
  async record(input: Omit<StoredRunAttestation, "id">): Promise<StoredRunAttestation> {
    const row = toAttestation.write({ id: newId("attestation"), ...input });
    return translating(this.dialect, async () => {
      await this.db<RunAttestationRow>("run_attestations").insert(row);
      return toAttestation(row);
    });
  }

  /** The run's attestations, in the order they were issued. */
  async forRun(runId: string): Promise<StoredRunAttestation[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<RunAttestationRow>("run_attestations")
        .where({ run_id: runId })
        .orderBy([
          { column: "created_at", order: "asc" },
          { column: "stage", order: "asc" },
        ]);
      return rows.map(toAttestation);
    });
  }
}
