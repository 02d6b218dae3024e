import { DomainError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { ConfigurationVersion } from "../domain/records.ts";
import { Repository } from "./repository.ts";
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

/** Configuration versions. */
export class ConfigurationVersionRepository extends Repository {
  /** Creates a pending configuration version. */
  async create(input: CreateConfigurationVersionInput): Promise<ConfigurationVersion> {
    const row: ConfigurationVersionRow = {
      id: input.id ?? newId("configurationVersion"),
      organization_id: input.organizationId,
      workspace_id: input.workspaceId,
      status: "pending",
      speculative: input.speculative,
      source: input.source,
      config_digest: null,
      size_bytes: null,
      artifact_key: null,
      created_at: isoForWrite(input.createdAt),
      uploaded_at: null,
    };
    return translating(this.dialect, async () => {
      await this.db<ConfigurationVersionRow>("configuration_versions").insert(row);
      return toConfigurationVersion(row);
    });
  }

  /** The configuration version with this id, if any. */
  async getById(id: string): Promise<ConfigurationVersion | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<ConfigurationVersionRow>("configuration_versions").where({ id }).first();
      return row && toConfigurationVersion(row);
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
      return rows.map(toConfigurationVersion);
    });
  }

  /**
   * The workspace's most recently uploaded configuration version, if any. Speculative uploads
   * (pull requests, `tofu plan` from a laptop) are skipped unless asked for, so a run that names
   * no configuration version never picks up unreviewed code.
   */
  async latestUploaded(workspaceId: string, options: { includeSpeculative?: boolean } = {}): Promise<ConfigurationVersion | undefined> {
    return translating(this.dialect, async () => {
      const query = this.db<ConfigurationVersionRow>("configuration_versions").where({ workspace_id: workspaceId, status: "uploaded" });
      if (options.includeSpeculative !== true) query.where({ speculative: false });
      const row = await query
        .orderBy([
          { column: "uploaded_at", order: "desc" },
          { column: "created_at", order: "desc" },
          { column: "id", order: "desc" },
        ])
        .first();
      return row && toConfigurationVersion(row);
    });
  }

  /**
   * Records the upload of a pending configuration version, atomically: a second upload throws
   * CONFIGURATION_VERSION_ALREADY_UPLOADED, an unknown id NOT_FOUND.
   */
  async markUploaded(id: string, upload: UploadedConfiguration): Promise<ConfigurationVersion> {
    const uploadedAt = isoForWrite(upload.uploadedAt);
    if (!Number.isSafeInteger(upload.sizeBytes) || upload.sizeBytes < 0) throw new TypeError("sizeBytes must be a non-negative integer");
    return translating(this.dialect, async () => {
      // The status condition makes the transition a compare-and-set, so two concurrent uploads
      // cannot both succeed.
      const updated = await this.db<ConfigurationVersionRow>("configuration_versions").where({ id, status: "pending" }).update({
        status: "uploaded",
        config_digest: upload.configDigest,
        size_bytes: upload.sizeBytes,
        artifact_key: upload.artifactKey,
        uploaded_at: uploadedAt,
      });
      const row = await this.db<ConfigurationVersionRow>("configuration_versions").where({ id }).first();
      if (row === undefined) throw new DomainError("NOT_FOUND", "No such configuration version.");
      if (updated === 0) {
        throw new DomainError(
          "CONFIGURATION_VERSION_ALREADY_UPLOADED",
          row.status === "errored"
            ? "The configuration version has errored; create a new one and upload to it."
            : "The configuration version has already been uploaded; configuration versions are immutable.",
        );
      }
      return toConfigurationVersion(row);
    });
  }
}

const toConfigurationVersion = rowMapper<ConfigurationVersionRow, ConfigurationVersion>()(
  "id organization_id workspace_id status:as speculative:boolean source config_digest size_bytes:number? artifact_key created_at:iso uploaded_at:iso?",
);
