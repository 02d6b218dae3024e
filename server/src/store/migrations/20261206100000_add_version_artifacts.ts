import type { Knex } from "knex";
import { dialectOf } from "../dialect.ts";

// NOTE: frozen once released; later changes go in a new migration.

/** The kinds whose objects belong to configuration and state versions (several per run, or none). */
const VERSION_KINDS = "'configuration','state'";

/**
 * `artifacts` becomes the one descriptor store (issue 32, part 6): configuration and state
 * versions' objects get a row too (kind `configuration` / `state`), referenced from the version
 * by `artifact_key`; the version tables keep their columns (`config_digest` / `sha256` are the
 * digest runs and state publication bind to, `size_bytes` is no longer read).
 *
 * - The one-of-each-kind-per-run rule covers the run kinds only: a run may upload several state
 *   versions, so `artifacts_run_kind_unique` becomes a partial unique index on both databases.
 * - Every uploaded version (key, size and digest all recorded) gets its row: workspace, the
 *   state's run (null for configurations), size, and as `sha256` the digest the readers verify
 *   the object against (`config_digest` is the SHA-256 of the tarball's bytes, as `sha256` is of
 *   the state's), created when it was uploaded. The format is `framed-aes256gcm-v1`: every
 *   configuration and state object has been written framed since the one artifact model, and
 *   nothing reads another format. A key that already has a row keeps it.
 */
export async function up(knex: Knex): Promise<void> {
  const dialect = dialectOf(knex);
  if (dialect === "sqlite") await knex.raw("drop index artifacts_run_kind_unique");
  else await knex.raw("alter table artifacts drop constraint artifacts_run_kind_unique");
  await knex.raw(
    `create unique index artifacts_run_kind_unique on artifacts (run_id, kind) where kind not in (${VERSION_KINDS})`,
  );
  await knex.raw(
    `insert into artifacts (artifact_key, workspace_id, run_id, kind, format, size_bytes, sha256, created_at)
     select v.artifact_key, v.workspace_id, null, 'configuration', 'framed-aes256gcm-v1', v.size_bytes, v.config_digest, coalesce(v.uploaded_at, v.created_at)
     from configuration_versions v
     where v.artifact_key is not null and v.size_bytes is not null and v.config_digest is not null
       and not exists (select 1 from artifacts a where a.artifact_key = v.artifact_key)`,
  );
  await knex.raw(
    `insert into artifacts (artifact_key, workspace_id, run_id, kind, format, size_bytes, sha256, created_at)
     select v.artifact_key, v.workspace_id, v.run_id, 'state', 'framed-aes256gcm-v1', v.size_bytes, v.sha256, coalesce(v.uploaded_at, v.created_at)
     from state_versions v
     where v.artifact_key is not null and v.size_bytes is not null and v.sha256 is not null
       and not exists (select 1 from artifacts a where a.artifact_key = v.artifact_key)`,
  );
}

/** Drops the versions' rows (their own columns still describe them) and restores the one-of-each-kind rule for every kind. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`delete from artifacts where kind in (${VERSION_KINDS})`);
  await knex.raw("drop index artifacts_run_kind_unique");
  if (dialectOf(knex) === "sqlite")
    await knex.raw("create unique index `artifacts_run_kind_unique` on `artifacts` (`run_id`, `kind`)");
  else await knex.raw("alter table artifacts add constraint artifacts_run_kind_unique unique (run_id, kind)");
}
