import {
  type ARTIFACT_FORMAT,
  type ArtifactKind,
  type ArtifactRef,
  type RunArtifactKind,
  type VersionArtifactKind,
} from "../domain/artifacts.ts";
import { Repository } from "./repository.ts";
import type { DbTimestamp } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite, numberFromRow } from "./values.ts";

/** artifacts */
interface ArtifactRow {
  artifact_key: string;
  workspace_id: string;
  run_id: string | null;
  kind: ArtifactKind;
  format: typeof ARTIFACT_FORMAT;
  size_bytes: number | string;
  sha256: string;
  created_at: DbTimestamp;
}

/** A recorded artifact: its ref and whose it is. */
export interface ArtifactRecord {
  ref: ArtifactRef;
  workspaceId: string;
  runId: string | null;
}

function toRecord(row: ArtifactRow): ArtifactRecord {
  return {
    ref: {
      kind: row.kind,
      key: row.artifact_key,
      sizeBytes: numberFromRow(row.size_bytes),
      sha256: row.sha256,
      format: row.format,
    },
    workspaceId: row.workspace_id,
    runId: row.run_id,
  };
}

/** The kinds a configuration or state version's object is recorded as (never a run's one-per-kind artifacts). */
const VERSION_KINDS: readonly VersionArtifactKind[] = ["configuration", "state"];

/** How many keys one `byKeys` query names (well under either database's limit on bound values). */
const KEYS_PER_QUERY = 500;

function rowOf(
  ref: ArtifactRef,
  owner: { workspaceId: string; runId: string | null },
  createdAt: Date | string,
): ArtifactRow {
  return {
    artifact_key: ref.key,
    workspace_id: owner.workspaceId,
    run_id: owner.runId,
    kind: ref.kind,
    format: ref.format,
    size_bytes: ref.sizeBytes,
    sha256: ref.sha256,
    created_at: isoForWrite(createdAt),
  };
}

/**
 * The one descriptor store of every stored artifact (table `artifacts`): each row is an
 * ArtifactRef with its workspace and, for a run's artifact or a state a run uploaded, its run.
 * A run has at most one artifact of each run kind (a partial unique index); configuration and
 * state versions reference their row by `artifact_key`. A reader checks the object against its
 * ref before releasing anything (artifacts/artifact-store.ts).
 */
export class ArtifactRepository extends Repository {
  /** Records a run's artifact; a plan attempt that writes its artifacts again replaces the row of the same key. */
  async recordForRun(
    ref: ArtifactRef & { kind: RunArtifactKind },
    owner: { workspaceId: string; runId: string },
    createdAt: Date | string,
  ): Promise<ArtifactRecord> {
    const row = rowOf(ref, owner, createdAt);
    return translating(this.dialect, async () => {
      await this.db<ArtifactRow>("artifacts").insert(row).onConflict("artifact_key").merge();
      return toRecord(row);
    });
  }

  /**
   * Records the object of a configuration or state version (`runId`: the run that uploaded the
   * state, if any). Written once, in the transaction that marks the version uploaded: a second
   * row under the same key is CONSTRAINT_VIOLATION.
   */
  async recordForWorkspace(
    ref: ArtifactRef & { kind: VersionArtifactKind },
    owner: { workspaceId: string; runId: string | null },
    createdAt: Date | string,
  ): Promise<ArtifactRecord> {
    const row = rowOf(ref, owner, createdAt);
    return translating(this.dialect, async () => {
      await this.db<ArtifactRow>("artifacts").insert(row);
      return toRecord(row);
    });
  }

  /** The artifact recorded under this object key, if any. */
  async byKey(key: string): Promise<ArtifactRecord | undefined> {
    return (await this.byKeys([key])).get(key);
  }

  /** The artifacts recorded under these object keys, by key (keys without a row are absent). */
  async byKeys(keys: readonly string[]): Promise<Map<string, ArtifactRecord>> {
    const unique = [...new Set(keys)];
    return translating(this.dialect, async () => {
      const found = new Map<string, ArtifactRecord>();
      for (let start = 0; start < unique.length; start += KEYS_PER_QUERY) {
        const rows = await this.db<ArtifactRow>("artifacts").whereIn(
          "artifact_key",
          unique.slice(start, start + KEYS_PER_QUERY),
        );
        for (const row of rows) found.set(row.artifact_key, toRecord(row));
      }
      return found;
    });
  }

  /**
   * The size of each version's object, from the `artifacts` row that describes it (under the
   * version's key, of `kind`, for its workspace, with its digest); null where none does.
   */
  async versionSizes(
    kind: VersionArtifactKind,
    versions: readonly { key: string | null; workspaceId: string; sha256: string | null }[],
  ): Promise<(number | null)[]> {
    const descriptors = await this.byKeys(versions.flatMap((v) => (v.key === null ? [] : [v.key])));
    return versions.map((v) => {
      const descriptor = v.key === null ? undefined : descriptors.get(v.key);
      const describes =
        descriptor !== undefined &&
        descriptor.ref.kind === kind &&
        descriptor.workspaceId === v.workspaceId &&
        descriptor.ref.sha256 === v.sha256;
      return describes ? descriptor.ref.sizeBytes : null;
    });
  }

  /** The run's artifact of `kind`, if one was recorded. */
  async forRun(runId: string, kind: RunArtifactKind): Promise<ArtifactRecord | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<ArtifactRow>("artifacts").where({ run_id: runId, kind }).first();
      return row ? toRecord(row) : undefined;
    });
  }

  /** Every artifact the run produced (the run kinds; not the states it uploaded). */
  async listForRun(runId: string): Promise<ArtifactRecord[]> {
    return translating(this.dialect, async () =>
      (
        await this.db<ArtifactRow>("artifacts")
          .where({ run_id: runId })
          .whereNotIn("kind", VERSION_KINDS)
          .orderBy("kind")
      ).map(toRecord),
    );
  }
}
