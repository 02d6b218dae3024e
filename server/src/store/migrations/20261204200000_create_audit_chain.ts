import type { Knex } from "knex";
import { auditChainOf, auditEventDigest, GENESIS_DIGEST } from "../../domain/audit-chain.ts";
import { dialectOf } from "../dialect.ts";
import { columnsFor, ID } from "./schema-helpers.ts";
import { isoFromRow } from "../values.ts";

// NOTE: frozen once released; later changes go in a new migration.

const MIGRATION_PAGE = 1000;

/**
 * The tamper-evident audit history (domain/audit-chain.ts).
 *
 * - `audit_events` gains its place in a hash chain: `chain` (the organization id, or
 *   `deployment`), `sequence` (position from 0, unique per chain), `previous_digest`, `digest`.
 * - `audit_chain_heads`: one row per chain, its size and last digest. Recording an event locks
 *   only its chain's row (SELECT … FOR UPDATE on PostgreSQL), so organizations never wait on
 *   each other.
 * - `audit_checkpoints`: the signed notes over a chain prefix; `audit_checkpoint_keys`: the
 *   Ed25519 keys that sign them, private halves sealed with the master key.
 *
 * Existing events are chained here, per chain in (created_at, id) order from the genesis digest,
 * so the history before this migration is covered by the first checkpoint too (it vouches for
 * what the rows held at migration time, not for anything earlier).
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  await knex.schema.alterTable("audit_events", (t) => {
    t.string("chain", ID).nullable();
    t.bigInteger("sequence").nullable();
    t.string("previous_digest", 64).nullable();
    t.string("digest", 64).nullable();
    t.unique(["chain", "sequence"], { indexName: "audit_events_chain_sequence" });
  });
  await knex.schema.createTable("audit_chain_heads", (t) => {
    t.string("chain", ID).notNullable().primary();
    t.bigInteger("size").notNullable();
    t.string("head_digest", 64).notNullable();
  });
  await knex.schema.createTable("audit_checkpoints", (t) => {
    const c = columnsFor(dialect, "audit_checkpoints", t);
    t.string("chain", ID).notNullable();
    t.bigInteger("tree_size").notNullable();
    t.string("head_digest", 64).notNullable();
    t.string("key_name", 255).notNullable();
    t.text("note").notNullable();
    c.timestamp("created_at");
    t.primary(["chain", "tree_size"]);
  });
  await knex.schema.createTable("audit_checkpoint_keys", (t) => {
    const c = columnsFor(dialect, "audit_checkpoint_keys", t);
    t.string("name", 255).notNullable().primary();
    t.string("public_key", 64).notNullable();
    t.text("private_key_sealed").notNullable();
    c.timestamp("created_at");
  });

  // In pages, so a long history is never held in memory at once (the order columns do not change).
  const heads = new Map<string, { size: number; digest: string }>();
  for (let offset = 0; ; offset += MIGRATION_PAGE) {
    const rows = (await knex("audit_events")
      .select("*")
      .orderBy([
        { column: "created_at", order: "asc" },
        { column: "id", order: "asc" },
      ])
      .limit(MIGRATION_PAGE)
      .offset(offset)) as Record<string, unknown>[];
    for (const row of rows) {
      const chain = auditChainOf(row.organization_id as string | null);
      const head = heads.get(chain) ?? { size: 0, digest: GENESIS_DIGEST };
      const digest = auditEventDigest({
        chain,
        sequence: head.size,
        previousDigest: head.digest,
        id: row.id as string,
        organizationId: row.organization_id as string | null,
        actorId: row.actor_id as string | null,
        action: row.action as string,
        targetType: row.target_type as string,
        targetId: row.target_id as string,
        reason: row.reason as string | null,
        data: JSON.parse(row.data as string) as Record<string, unknown>,
        createdAt: isoFromRow(row.created_at as string | Date),
      });
      await knex("audit_events")
        .where({ id: row.id })
        .update({ chain, sequence: head.size, previous_digest: head.digest, digest });
      heads.set(chain, { size: head.size + 1, digest });
    }
    if (rows.length < MIGRATION_PAGE) break;
  }
  for (const [chain, head] of heads)
    await knex("audit_chain_heads").insert({ chain, size: head.size, head_digest: head.digest });
}

/** Drops what `up` added. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable("audit_checkpoint_keys");
  await knex.schema.dropTable("audit_checkpoints");
  await knex.schema.dropTable("audit_chain_heads");
  await knex.schema.alterTable("audit_events", (t) => {
    t.dropUnique(["chain", "sequence"], "audit_events_chain_sequence");
    t.dropColumn("chain");
    t.dropColumn("sequence");
    t.dropColumn("previous_digest");
    t.dropColumn("digest");
  });
}
