import type { Dialect, Executor } from './dialect.ts';
import { translating } from './translate-error.ts';
import { isoForWrite, isoFromRow, numberFromRow } from './values.ts';

/** The kinds of framed artifacts. */
export type FramedArtifactKind = 'plan_json';

/** The descriptor of a framed artifact: what the object must be before any byte of it is released. */
export interface ArtifactDescriptorRecord {
  artifactKey: string;
  workspaceId: string;
  runId: string | null;
  kind: FramedArtifactKind;
  format: string;
  sizeBytes: number;
  sha256: string;
  createdAt: string;
}

interface ArtifactDescriptorRow {
  artifact_key: string;
  workspace_id: string;
  run_id: string | null;
  kind: string;
  format: string;
  size_bytes: number | string;
  sha256: string;
  created_at: string | Date;
}

function toRecord(row: ArtifactDescriptorRow): ArtifactDescriptorRecord {
  return {
    artifactKey: row.artifact_key,
    workspaceId: row.workspace_id,
    runId: row.run_id,
    kind: row.kind as FramedArtifactKind,
    format: row.format,
    sizeBytes: numberFromRow(row.size_bytes),
    sha256: row.sha256,
    createdAt: isoFromRow(row.created_at),
  };
}

/** Descriptors of framed artifacts (table `artifact_descriptors`). */
export class ArtifactDescriptorRepository {
  constructor(
    private readonly db: Executor,
    private readonly dialect: Dialect,
  ) {}

  /** Records a descriptor; a run has at most one artifact of each kind. */
  async record(descriptor: Omit<ArtifactDescriptorRecord, 'createdAt'> & { createdAt: Date | string }): Promise<ArtifactDescriptorRecord> {
    const row: ArtifactDescriptorRow = {
      artifact_key: descriptor.artifactKey,
      workspace_id: descriptor.workspaceId,
      run_id: descriptor.runId,
      kind: descriptor.kind,
      format: descriptor.format,
      size_bytes: descriptor.sizeBytes,
      sha256: descriptor.sha256,
      created_at: isoForWrite(descriptor.createdAt),
    };
    return translating(this.dialect, async () => {
      await this.db<ArtifactDescriptorRow>('artifact_descriptors').insert(row);
      return toRecord(row);
    });
  }

  /** The run's artifact of `kind`, if one was recorded. */
  async findByRun(runId: string, kind: FramedArtifactKind): Promise<ArtifactDescriptorRecord | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<ArtifactDescriptorRow>('artifact_descriptors').where({ run_id: runId, kind }).first();
      return row ? toRecord(row) : undefined;
    });
  }
}
