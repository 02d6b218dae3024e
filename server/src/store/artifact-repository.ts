import { type ARTIFACT_FORMAT, type ArtifactKind, type ArtifactRef, type RunArtifactKind } from "../domain/artifacts.ts";
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
    ref: { kind: row.kind, key: row.artifact_key, sizeBytes: numberFromRow(row.size_bytes), sha256: row.sha256, format: row.format },
    workspaceId: row.workspace_id,
    runId: row.run_id,
  };
}

/**
 * The descriptor store of the artifacts runs produce (table `artifacts`): each row is an
 * ArtifactRef with its workspace and run, at most one of each kind per run. A reader checks the
 * object against its ref before releasing anything (artifacts/artifact-store.ts).
 */
export class ArtifactRepository extends Repository {
  /** Records a run's artifact; a plan attempt that writes its artifacts again replaces the row of the same key. */
  async recordForRun(ref: ArtifactRef & { kind: RunArtifactKind }, owner: { workspaceId: string; runId: string }, createdAt: Date | string): Promise<ArtifactRecord> {
    const row: ArtifactRow = {
      artifact_key: ref.key,
      workspace_id: owner.workspaceId,
      run_id: owner.runId,
      kind: ref.kind,
      format: ref.format,
      size_bytes: ref.sizeBytes,
      sha256: ref.sha256,
      created_at: isoForWrite(createdAt),
    };
    return translating(this.dialect, async () => {
      await this.db<ArtifactRow>("artifacts").insert(row).onConflict("artifact_key").merge();
      return toRecord(row);
    });
  }

  /** The run's artifact of `kind`, if one was recorded. */
  async forRun(runId: string, kind: RunArtifactKind): Promise<ArtifactRecord | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<ArtifactRow>("artifacts").where({ run_id: runId, kind }).first();
      return row ? toRecord(row) : undefined;
    });
  }

  /** Every artifact recorded for the run. */
  async listForRun(runId: string): Promise<ArtifactRecord[]> {
    return translating(this.dialect, async () => (await this.db<ArtifactRow>("artifacts").where({ run_id: runId }).orderBy("kind")).map(toRecord));
  }
}
