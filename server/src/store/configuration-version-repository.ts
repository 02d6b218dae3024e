import { ARTIFACT_FORMAT } from "../domain/artifacts.ts";
import { DomainError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { ConfigurationVersion } from "../domain/records.ts";
import { ArtifactRepository } from "./artifact-repository.ts";
import type { Knex } from "knex";
import { Repository } from "./repository.ts";
import type { Executor } from "./dialect.ts";
import type { ConfigurationVersionRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite } from "./values.ts";
import { rowMapper } from "./columns.ts";

/** What creating a configuration version needs; it starts `pending`. */
export interface CreateConfigurationVersionInput {
  id?: string;
  organizationId: string;
  workspaceId: string;
  speculative: boolean;
  source: string;
  createdAt: Date | string;
}

/** What is recorded once a configuration version's bytes are stored. */
export interface UploadedConfiguration {
  configDigest: string;
  sizeBytes: number;
  artifactKey: string;
  uploadedAt: Date | string;
}

/**
 * Configuration versions. An uploaded version references its tarball's `artifacts` row by
 * `artifact_key`; that row (written in the same transaction as the upload) is its descriptor:
 * a record's `sizeBytes` is the row's, and is null unless the row describes exactly the
 * version's object (kind `configuration`, its workspace, its digest), so a version without its
 * descriptor has no readable object. The version's own `size_bytes` column is kept as written,
 * not read.
 */
export class ConfigurationVersionRepository extends Repository {
  /** Creates a pending configuration version. */
  async create(input: CreateConfigurationVersionInput): Promise<ConfigurationVersion> {
    const row = toConfigurationVersion.write({
      ...input,
      id: input.id ?? newId("configurationVersion"),
      status: "pending",
      configDigest: null,
      sizeBytes: null,
      artifactKey: null,
      uploadedAt: null,
    });
    return translating(this.dialect, async () => {
      await this.db<ConfigurationVersionRow>("configuration_versions").insert(row);
      return toConfigurationVersion(row);
    });
  }

  /** The configuration version with this id, if any. */
  async getById(id: string): Promise<ConfigurationVersion | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<ConfigurationVersionRow>("configuration_versions").where({ id }).first();
      return row && (await this.described([row]))[0];
    });
  }

  /** The workspace's configuration versions, newest first (speculative ones too). */
  async listByWorkspace(workspaceId: string): Promise<ConfigurationVersion[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<ConfigurationVersionRow>("configuration_versions")
        .where({ workspace_id: workspaceId })
        .orderBy([
          { column: "created_at", order: "desc" },
          { column: "id", order: "desc" },
        ]);
      return this.described(rows);
    });
  }

  /**
   * The workspace's most recently uploaded configuration version, if any. Speculative uploads
   * (pull requests, `tofu plan` from a laptop) are skipped unless asked for, so a run that names
   * no configuration version never picks up unreviewed code.
   */
  async latestUploaded(
    workspaceId: string,
    options: { includeSpeculative?: boolean } = {},
  ): Promise<ConfigurationVersion | undefined> {
    return translating(this.dialect, async () => {
      const query = this.db<ConfigurationVersionRow>("configuration_versions").where({
        workspace_id: workspaceId,
        status: "uploaded",
      });
      if (options.includeSpeculative !== true) query.where({ speculative: false });
      const row = await query
        .orderBy([
          { column: "uploaded_at", order: "desc" },
          { column: "created_at", order: "desc" },
          { column: "id", order: "desc" },
        ])
        .first();
      return row && (await this.described([row]))[0];
    });
  }

  /**
   * Records the upload of a pending configuration version and its object's `artifacts` row
   * (`configDigest` is the SHA-256 of the tarball's bytes, the object's digest), atomically: a
   * second upload throws CONFIGURATION_VERSION_ALREADY_UPLOADED, an unknown id NOT_FOUND.
   */
  async markUploaded(id: string, upload: UploadedConfiguration): Promise<ConfigurationVersion> {
    const uploadedAt = isoForWrite(upload.uploadedAt);
    if (!Number.isSafeInteger(upload.sizeBytes) || upload.sizeBytes < 0)
      throw new TypeError("sizeBytes must be a non-negative integer");
    return translating(this.dialect, () => this.atomically((trx) => this.uploadIn(trx, id, upload, uploadedAt)));
  }

  /** markUploaded's writes, in one transaction. */
  private async uploadIn(
    trx: Knex.Transaction,
    id: string,
    upload: UploadedConfiguration,
    uploadedAt: string,
  ): Promise<ConfigurationVersion> {
    // The status condition makes the transition a compare-and-set, so two concurrent uploads
    // cannot both succeed.
    const updated = await trx<ConfigurationVersionRow>("configuration_versions")
      .where({ id, status: "pending" })
      .update({
        status: "uploaded",
        config_digest: upload.configDigest,
        size_bytes: upload.sizeBytes,
        artifact_key: upload.artifactKey,
        uploaded_at: uploadedAt,
      });
    const row = await trx<ConfigurationVersionRow>("configuration_versions").where({ id }).first();
    if (row === undefined) throw new DomainError("NOT_FOUND", "No such configuration version.");
    if (updated === 0) {
      throw new DomainError(
        "CONFIGURATION_VERSION_ALREADY_UPLOADED",
        row.status === "errored"
          ? "The configuration version has errored; create a new one and upload to it."
          : "The configuration version has already been uploaded; configuration versions are immutable.",
      );
    }
    await new ArtifactRepository(trx, this.dialect).recordForWorkspace(
      {
        kind: "configuration",
        key: upload.artifactKey,
        sizeBytes: upload.sizeBytes,
        sha256: upload.configDigest,
        format: ARTIFACT_FORMAT,
      },
      { workspaceId: row.workspace_id, runId: null },
      uploadedAt,
    );
    return (await this.described([row], trx))[0];
  }

  /** The rows as records, each with its object's size from the `artifacts` row that describes it (see the class). */
  private async described(
    rows: ConfigurationVersionRow[],
    executor: Executor = this.db,
  ): Promise<ConfigurationVersion[]> {
    const sizes = await new ArtifactRepository(executor, this.dialect).versionSizes(
      "configuration",
      rows.map((row) => ({ key: row.artifact_key, workspaceId: row.workspace_id, sha256: row.config_digest })),
    );
    return rows.map((row, i) => toConfigurationVersion({ ...row, size_bytes: sizes[i] }));
  }
}

const toConfigurationVersion = rowMapper<ConfigurationVersionRow, ConfigurationVersion>()(
  "id organization_id workspace_id status:as speculative:boolean source config_digest size_bytes:number? artifact_key created_at:iso uploaded_at:iso?",
);
