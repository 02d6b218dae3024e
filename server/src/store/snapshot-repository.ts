import { canonicalize, sha256Hex } from "../domain/canonical-json.ts";
import { isId, newId } from "../domain/ids.ts";
import type { InputSnapshotDocument } from "../domain/input-snapshot.ts";
import type { InputSnapshot } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import type { InputSnapshotRow, SnapshotSecretRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite } from "./values.ts";
import { rowMapper } from "./columns.ts";

/** A sealed sensitive value referenced from a snapshot document. */
export interface SnapshotSecretInput {
  handle: string;
  ciphertext: string;
}

/** What storing an input snapshot needs. */
export interface CreateSnapshotInput {
  id?: string;
  workspaceId: string;
  inputDigest: string;
  document: InputSnapshotDocument;
  secrets: SnapshotSecretInput[];
  createdAt: Date | string;
}

/** Input snapshots and the sealed secrets they reference. */
export class SnapshotRepository extends Repository {
  /** Stores a snapshot (as canonical JSON) and its secrets in one transaction. */
  async create(input: CreateSnapshotInput): Promise<InputSnapshot> {
    const document = canonicalize(input.document);
    // A digest that does not match the stored bytes would make every later comparison lie.
    if (sha256Hex(document) !== input.inputDigest)
      throw new TypeError("inputDigest is not the digest of the canonical document");
    for (const secret of input.secrets) {
      if (!isId("snapshotSecret", secret.handle)) throw new TypeError(`not a secret handle: ${secret.handle}`);
    }
    const createdAt = isoForWrite(input.createdAt);
    const row: InputSnapshotRow = {
      id: input.id ?? newId("inputSnapshot"),
      workspace_id: input.workspaceId,
      input_digest: input.inputDigest,
      document,
      created_at: createdAt,
    };
    const secretRows: SnapshotSecretRow[] = input.secrets.map((secret) => ({
      handle: secret.handle,
      ciphertext: secret.ciphertext,
      created_at: createdAt,
    }));
    return translating(this.dialect, async () => {
      // On a transaction this becomes a savepoint, so it is atomic either way.
      await this.db.transaction(async (trx) => {
        await trx<InputSnapshotRow>("input_snapshots").insert(row);
        if (secretRows.length > 0) await trx<SnapshotSecretRow>("snapshot_secrets").insert(secretRows);
      });
      return toSnapshot(row);
    });
  }

  /** The snapshot with this id, if any. */
  async getById(id: string): Promise<InputSnapshot | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<InputSnapshotRow>("input_snapshots").where({ id }).first();
      return row && toSnapshot(row);
    });
  }

  /** The ciphertext behind a secret handle, if any. */
  async getSecret(handle: string): Promise<string | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<SnapshotSecretRow>("snapshot_secrets").where({ handle }).first("ciphertext");
      return row?.ciphertext;
    });
  }
}

const toSnapshot = rowMapper<InputSnapshotRow, InputSnapshot>()(
  "id workspace_id input_digest document:json created_at:iso",
);
