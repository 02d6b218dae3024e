import type { Knex } from "knex";
import {
  auditChainOf,
  auditEventDigest,
  auditEventFields,
  GENESIS_DIGEST,
  type AuditCheckpoint,
  type ChainedAuditEvent,
} from "../domain/audit-chain.ts";
import { canonicalize } from "../domain/canonical-json.ts";
import { newId } from "../domain/ids.ts";
import type { AuditEvent } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import type { AuditEventRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite, isoFromRow, numberFromRow } from "./values.ts";
import { rowMapper } from "./columns.ts";

/** What recording an audit event needs. */
export interface RecordAuditEventInput {
  id?: string;
  organizationId: string | null;
  actorId: string | null;
  action: string;
  targetType: string;
  targetId: string;
  reason?: string | null;
  /** Plain JSON data; stored as canonical JSON. */
  data?: Record<string, unknown>;
  createdAt: Date | string;
}

/** Who made an audited change, in which organization, and when. */
export interface AuditActor {
  organizationId: string | null;
  actorId: string | null;
  createdAt: Date | string;
}

/** A chain's head: how many events it has and the digest of the last. */
export interface AuditChainHead {
  chain: string;
  size: number;
  digest: string;
}

/** A stored checkpoint key (Ed25519; the private half sealed by the caller). */
export interface StoredAuditCheckpointKey {
  name: string;
  /** base64 of the raw 32-byte public key. */
  publicKey: string;
  privateKeySealed: string;
  createdAt: string;
}

interface ChainHeadRow {
  chain: string;
  size: number | string;
  head_digest: string;
}

/**
 * The audit trail, a hash chain per organization (domain/audit-chain.ts). Each event is appended
 * to its chain in the caller's transaction (or in one of its own): the chain's head row is
 * locked (SELECT … FOR UPDATE on PostgreSQL; SQLite has one writer at a time), the event stores
 * the head's digest as its previous digest, and the head moves on. Only writers to the same
 * chain wait for each other.
 */
export class AuditRepository extends Repository {
  /** Records an audit event, appended to its organization's chain. */
  async record(input: RecordAuditEventInput): Promise<AuditEvent> {
    const data = canonicalize(input.data ?? {});
    const event: AuditEvent = {
      id: input.id ?? newId("auditEvent"),
      organizationId: input.organizationId,
      actorId: input.actorId,
      action: input.action,
      targetType: input.targetType,
      targetId: input.targetId,
      reason: input.reason ?? null,
      data: JSON.parse(data) as Record<string, unknown>,
      createdAt: isoForWrite(input.createdAt),
    };
    return translating(this.dialect, () =>
      this.inOwnOrCallerTransaction(async (trx) => {
        const head = await this.lockHead(trx, auditChainOf(event.organizationId));
        const chained = { ...event, chain: head.chain, sequence: head.size, previousDigest: head.digest };
        const digest = auditEventDigest(chained);
        const row: AuditEventRow = { ...auditEventFields(chained), data, digest };
        await trx<AuditEventRow>("audit_events").insert(row);
        await trx<ChainHeadRow>("audit_chain_heads")
          .where({ chain: head.chain })
          .update({ size: head.size + 1, head_digest: digest });
        return event;
      }),
    );
  }

  /** Runs `fn` in the transaction this repository was given, or in a new one. */
  private inOwnOrCallerTransaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    const executor = this.db as Knex.Transaction;
    if (executor.isTransaction === true) return fn(executor);
    return (this.db as Knex).transaction(fn);
  }

  /** The chain's head, created at the genesis if new, locked until the transaction ends. */
  private async lockHead(trx: Knex.Transaction, chain: string): Promise<AuditChainHead> {
    await trx<ChainHeadRow>("audit_chain_heads")
      .insert({ chain, size: 0, head_digest: GENESIS_DIGEST })
      .onConflict("chain")
      .ignore();
    const query = trx<ChainHeadRow>("audit_chain_heads").where({ chain }).first();
    const row = this.dialect === "postgres" ? await query.forUpdate() : await query;
    if (row === undefined) throw new Error(`audit chain head ${chain} vanished`);
    return { chain, size: numberFromRow(row.size), digest: row.head_digest };
  }

  /** A chain's head (size 0 at the genesis when it has no event yet). */
  async head(chain: string): Promise<AuditChainHead> {
    return translating(this.dialect, async () => {
      const row = await this.db<ChainHeadRow>("audit_chain_heads").where({ chain }).first();
      return row === undefined
        ? { chain, size: 0, digest: GENESIS_DIGEST }
        : { chain, size: numberFromRow(row.size), digest: row.head_digest };
    });
  }

  /** Every chain that has events, with its head. */
  async heads(): Promise<AuditChainHead[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<ChainHeadRow>("audit_chain_heads").where("size", ">", 0).orderBy("chain");
      return rows.map((row) => ({ chain: row.chain, size: numberFromRow(row.size), digest: row.head_digest }));
    });
  }

  /** A chain's events from position `from`, in chain order, at most `limit`. */
  async listChain(
    chain: string,
    { from = 0, limit }: { from?: number; limit?: number } = {},
  ): Promise<ChainedAuditEvent[]> {
    return translating(this.dialect, async () => {
      const query = this.db<AuditEventRow>("audit_events")
        .where({ chain })
        .andWhere("sequence", ">=", from)
        .orderBy("sequence", "asc");
      const rows = limit === undefined ? await query : await query.limit(limit);
      return rows.map(toChainedAuditEvent);
    });
  }

  /** When the chain's event at `sequence` was recorded, if it exists. */
  async createdAtOf(chain: string, sequence: number): Promise<string | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<AuditEventRow>("audit_events").where({ chain, sequence }).first("created_at");
      return row === undefined ? undefined : isoFromRow(row.created_at);
    });
  }

  /** Stores a signed checkpoint. */
  async addCheckpoint(checkpoint: AuditCheckpoint): Promise<void> {
    return translating(this.dialect, async () => {
      await this.db("audit_checkpoints")
        .insert({
          chain: checkpoint.chain,
          tree_size: checkpoint.treeSize,
          head_digest: checkpoint.headDigest,
          key_name: checkpoint.keyName,
          note: checkpoint.note,
          created_at: isoForWrite(checkpoint.createdAt),
        })
        .onConflict(["chain", "tree_size"])
        .ignore();
    });
  }

  /** A chain's checkpoints, smallest first, from tree size `from`, at most `limit`. */
  async listCheckpoints(
    chain: string,
    { from = 0, limit }: { from?: number; limit?: number } = {},
  ): Promise<AuditCheckpoint[]> {
    return translating(this.dialect, async () => {
      const query = this.db("audit_checkpoints")
        .where({ chain })
        .andWhere("tree_size", ">=", from)
        .orderBy("tree_size", "asc");
      const rows = (limit === undefined ? await query : await query.limit(limit)) as Record<string, unknown>[];
      return rows.map(toCheckpoint);
    });
  }

  /** The tree size of a chain's newest checkpoint (0: none). */
  async lastCheckpointSize(chain: string): Promise<number> {
    return translating(this.dialect, async () => {
      const row = (await this.db("audit_checkpoints").where({ chain }).max({ size: "tree_size" }).first()) as
        { size: number | string | null } | undefined;
      return row?.size === null || row?.size === undefined ? 0 : numberFromRow(row.size);
    });
  }

  /** The checkpoint keys, oldest first. */
  async checkpointKeys(): Promise<StoredAuditCheckpointKey[]> {
    return translating(this.dialect, async () => {
      const rows = (await this.db("audit_checkpoint_keys").orderBy([
        { column: "created_at", order: "asc" },
        { column: "name", order: "asc" },
      ])) as Record<string, unknown>[];
      return rows.map((row) => ({
        name: row.name as string,
        publicKey: row.public_key as string,
        privateKeySealed: row.private_key_sealed as string,
        createdAt: isoFromRow(row.created_at as string | Date),
      }));
    });
  }

  /** Adds a checkpoint key unless one of that name exists. */
  async addCheckpointKey(key: StoredAuditCheckpointKey): Promise<void> {
    return translating(this.dialect, async () => {
      await this.db("audit_checkpoint_keys")
        .insert({
          name: key.name,
          public_key: key.publicKey,
          private_key_sealed: key.privateKeySealed,
          created_at: isoForWrite(key.createdAt),
        })
        .onConflict("name")
        .ignore();
    });
  }

  /** Records `action` on one resource (its JSON:API type and id) by `by`: record() in one line. */
  async recordAction(
    by: AuditActor,
    action: string,
    target: readonly [type: string, id: string],
    data?: Record<string, unknown>,
  ): Promise<AuditEvent> {
    return this.record({ ...by, action, targetType: target[0], targetId: target[1], data });
  }

  /** The organization's audit events, oldest first. */
  async listByOrganization(organizationId: string): Promise<AuditEvent[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<AuditEventRow>("audit_events")
        .where({ organization_id: organizationId })
        .orderBy([
          { column: "created_at", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return rows.map(toAuditEvent);
    });
  }
}

function toChainedAuditEvent(row: AuditEventRow): ChainedAuditEvent {
  return {
    ...toAuditEvent(row),
    chain: row.chain ?? "",
    sequence: row.sequence === null ? -1 : numberFromRow(row.sequence),
    previousDigest: row.previous_digest ?? "",
    digest: row.digest ?? "",
  };
}

function toCheckpoint(row: Record<string, unknown>): AuditCheckpoint {
  return {
    chain: row.chain as string,
    treeSize: numberFromRow(row.tree_size as number | string),
    headDigest: row.head_digest as string,
    keyName: row.key_name as string,
    note: row.note as string,
    createdAt: isoFromRow(row.created_at as string | Date),
  };
}

const toAuditEvent = rowMapper<AuditEventRow, AuditEvent>()(
  "id organization_id actor_id action target_type target_id reason data:json created_at:iso",
);
