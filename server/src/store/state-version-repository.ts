import { ARTIFACT_FORMAT } from "../domain/artifacts.ts";
import { ArtifactRepository } from "./artifact-repository.ts";
import type { Executor } from "./dialect.ts";
import { Repository } from "./repository.ts";
import { newPrefixedId } from "./run-token-repository.ts";
import type { StateVersionRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite } from "./values.ts";
import { rowMapper } from "./columns.ts";

/** The states of a state version: uploaded state is `pending` until its publication is confirmed. */
export type StateVersionStatus = "pending" | "finalized" | "discarded";

/** One root-module output of a state version. A sensitive output never has its value stored. */
export interface StateVersionOutput {
  name: string;
  sensitive: boolean;
  /** The cty type as JSON (`"string"`, `["list","string"]`, …), or null when unknown. */
  type: unknown;
  /** The value; always null when `sensitive`. */
  value: unknown;
}

/** A state version: the metadata of one state file of a workspace; the bytes are an encrypted artifact. */
export interface StateVersion {
  id: string;
  workspaceId: string;
  runId: string | null;
  serial: number;
  lineage: string;
  /** Hex MD5 the client declared for the bytes (checked on upload). */
  md5: string;
  /** Hex SHA-256 of the stored bytes; null until uploaded. */
  sha256: string | null;
  /** The object's size from its `artifacts` row; null until uploaded, or when no row describes the object. */
  sizeBytes: number | null;
  status: StateVersionStatus;
  /** The workspace-lock fence the version was accepted under. */
  fence: number;
  artifactKey: string | null;
  /** The outputs, by name, without sensitive values; null when none were declared. */
  outputs: StateVersionOutput[] | null;
  createdAt: string;
  uploadedAt: string | null;
  publishedAt: string | null;
}

/** What creating a pending state version needs. */
export interface CreateStateVersionInput {
  id?: string;
  workspaceId: string;
  runId: string | null;
  serial: number;
  lineage: string;
  md5: string;
  fence: number;
  outputs: StateVersionOutput[] | null;
  createdAt: Date | string;
}

/** What recording an upload needs. */
export interface UploadedState {
  sha256: string;
  sizeBytes: number;
  artifactKey: string;
  uploadedAt: Date | string;
  /** Outputs read from the uploaded state, recorded only when none were declared at creation. */
  outputs?: StateVersionOutput[] | null;
}

/**
 * State versions. An uploaded version references its state's `artifacts` row by `artifact_key`
 * (kind `state`, with the run that uploaded it, if any); that row, written in the same
 * transaction as the upload, is its descriptor: a record's `sizeBytes` is the row's, and is null
 * unless the row describes exactly the version's object (kind `state`, its workspace, its
 * SHA-256), so a version without its descriptor has no readable object. The version's own
 * `size_bytes` column is kept as written, not read.
 */
export class StateVersionRepository extends Repository {
  /** Creates a `pending` state version with no bytes yet. */
  async create(input: CreateStateVersionInput): Promise<StateVersion> {
    const row: StateVersionRow = {
      id: input.id ?? newPrefixedId("sv"),
      workspace_id: input.workspaceId,
      run_id: input.runId,
      serial: input.serial,
      lineage: input.lineage,
      md5: input.md5.toLowerCase(),
      sha256: null,
      size_bytes: null,
      status: "pending",
      fence: input.fence,
      artifact_key: null,
      json_outputs: encodeOutputs(input.outputs),
      created_at: isoForWrite(input.createdAt),
      uploaded_at: null,
      published_at: null,
    };
    return translating(this.dialect, async () => {
      await this.db<StateVersionRow>("state_versions").insert(row);
      return toStateVersion(row);
    });
  }

  /** The state version with this id, if any. */
  async getById(id: string): Promise<StateVersion | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<StateVersionRow>("state_versions").where({ id }).first();
      return row && (await this.described([row]))[0];
    });
  }

  /** The workspace's current state version: the finalized one with the highest serial. */
  async current(workspaceId: string): Promise<StateVersion | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<StateVersionRow>("state_versions")
        .where({ workspace_id: workspaceId, status: "finalized" })
        .orderBy("serial", "desc")
        .first();
      return row && (await this.described([row]))[0];
    });
  }

  /**
   * Records the stored bytes of a pending version that has none yet, and their `artifacts` row,
   * in one transaction. Undefined when the version is not pending or already has bytes (a
   * concurrent upload won); then nothing is written.
   */
  async markUploaded(id: string, upload: UploadedState): Promise<StateVersion | undefined> {
    const uploadedAt = isoForWrite(upload.uploadedAt);
    const patch: Partial<StateVersionRow> = {
      sha256: upload.sha256,
      size_bytes: upload.sizeBytes,
      artifact_key: upload.artifactKey,
      uploaded_at: uploadedAt,
    };
    return translating(this.dialect, () =>
      this.atomically(async (trx) => {
        const updated = await trx<StateVersionRow>("state_versions")
          .where({ id, status: "pending" })
          .whereNull("sha256")
          .update(patch);
        if (updated === 0) return undefined;
        if (upload.outputs !== undefined) {
          await trx<StateVersionRow>("state_versions")
            .where({ id })
            .whereNull("json_outputs")
            .update({ json_outputs: encodeOutputs(upload.outputs) });
        }
        const row = await trx<StateVersionRow>("state_versions").where({ id }).first();
        if (row === undefined) return undefined;
        await new ArtifactRepository(trx, this.dialect).recordForWorkspace(
          {
            kind: "state",
            key: upload.artifactKey,
            sizeBytes: upload.sizeBytes,
            sha256: upload.sha256,
            format: ARTIFACT_FORMAT,
          },
          { workspaceId: row.workspace_id, runId: row.run_id },
          uploadedAt,
        );
        return (await this.described([row], trx))[0];
      }),
    );
  }

  /**
   * Marks an uploaded pending version finalized at `publishedAt`, which makes it current when its
   * serial is the highest. Undefined when it is not pending or has no bytes. A second finalized
   * version with the same serial throws CONSTRAINT_VIOLATION (partial unique index).
   */
  async finalize(id: string, publishedAt: Date | string): Promise<StateVersion | undefined> {
    const published = isoForWrite(publishedAt);
    return translating(this.dialect, async () => {
      const updated = await this.db<StateVersionRow>("state_versions")
        .where({ id, status: "pending" })
        .whereNotNull("sha256")
        .update({ status: "finalized", published_at: published });
      if (updated === 0) return undefined;
      const row = await this.db<StateVersionRow>("state_versions").where({ id }).first();
      return row && (await this.described([row]))[0];
    });
  }

  /** Marks every pending state version of a run discarded (a recovery that keeps the current state); how many. */
  async discardPendingByRun(runId: string): Promise<number> {
    return translating(this.dialect, () =>
      this.db<StateVersionRow>("state_versions")
        .where({ run_id: runId, status: "pending" })
        .update({ status: "discarded" }),
    );
  }

  /** The run's pending state versions, oldest first (what recovery inspects). */
  async listPendingByRun(runId: string): Promise<StateVersion[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<StateVersionRow>("state_versions")
        .where({ run_id: runId, status: "pending" })
        .orderBy([
          { column: "created_at", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return this.described(rows);
    });
  }

  /** Every state version a run created (pending, finalized or discarded), oldest first. */
  async listByRun(runId: string): Promise<StateVersion[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<StateVersionRow>("state_versions")
        .where({ run_id: runId })
        .orderBy([
          { column: "created_at", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return this.described(rows);
    });
  }

  /** The workspace's state versions, newest serial first. */
  async listByWorkspace(workspaceId: string): Promise<StateVersion[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<StateVersionRow>("state_versions")
        .where({ workspace_id: workspaceId })
        .orderBy([
          { column: "serial", order: "desc" },
          { column: "created_at", order: "desc" },
          { column: "id", order: "desc" },
        ]);
      return this.described(rows);
    });
  }

  /** The rows as records, each with its object's size from the `artifacts` row that describes it (see the class). */
  private async described(rows: StateVersionRow[], executor: Executor = this.db): Promise<StateVersion[]> {
    const sizes = await new ArtifactRepository(executor, this.dialect).versionSizes(
      "state",
      rows.map((row) => ({ key: row.artifact_key, workspaceId: row.workspace_id, sha256: row.sha256 })),
    );
    return rows.map((row, i) => toStateVersion({ ...row, size_bytes: sizes[i] }));
  }
}

/** Outputs as stored: sorted by name, and a sensitive output's value is dropped here whatever the caller passed. */
function encodeOutputs(outputs: StateVersionOutput[] | null | undefined): string | null {
  if (outputs === null || outputs === undefined) return null;
  const safe = outputs
    .map((o) => ({
      name: o.name,
      sensitive: o.sensitive,
      type: o.type ?? null,
      value: o.sensitive ? null : (o.value ?? null),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return JSON.stringify(safe);
}

const toStateVersion = rowMapper<StateVersionRow, StateVersion>()(
  "id workspace_id run_id serial:number lineage md5 sha256 size_bytes:number? status:as fence:number artifact_key outputs=json_outputs:json? created_at:iso uploaded_at:iso? published_at:iso?",
);
