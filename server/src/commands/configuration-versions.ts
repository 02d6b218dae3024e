import { sharedBytes } from "../artifacts/upload-inspection.ts";
import { artifactRefOf, type ArtifactRef } from "../domain/artifacts.ts";
import { DomainError } from "../domain/errors.ts";
import type { ConfigurationVersion, Workspace } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import { signToken, verifyToken } from "../domain/signed-tokens.ts";
import type { Services } from "./services.ts";
import { audited } from "./audited.ts";
import { sha256Hex } from "../domain/canonical-json.ts";

/** How long an upload URL stays valid. */
export const UPLOAD_URL_TTL_SECONDS = 3600;

/** A signed, expiring token naming one configuration version (domain/signed-tokens.ts, purpose configuration-upload). */
export function signUploadToken(key: Buffer, configurationVersionId: string, expiresAt: Date): string {
  return signToken(key, "configuration-upload", { cv: configurationVersionId }, expiresAt);
}

/** The configuration version a token names; a forged, tampered or expired token is 404. */
export function verifyUploadToken(key: Buffer, token: string, now: Date): string {
  const claims = verifyToken(key, "configuration-upload", token, ["cv"], now);
  if (claims === null)
    throw new DomainError(
      "NOT_FOUND",
      "This upload URL is invalid or has expired. Create a new configuration version to get a fresh one.",
    );
  return claims.cv;
}

/** The absolute upload URL of a pending configuration version. */
export function uploadUrl(
  services: Services,
  baseUrl: string,
  configurationVersion: ConfigurationVersion,
): string | null {
  if (configurationVersion.status !== "pending") return null;
  const expiresAt = new Date(services.clock().getTime() + UPLOAD_URL_TTL_SECONDS * 1000);
  return `${baseUrl}/uploads/configuration-versions/${signUploadToken(services.keys.uploadUrl, configurationVersion.id, expiresAt)}`;
}

/** Creates a pending configuration version. */
export function createConfigurationVersion(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  input: { speculative: boolean; source: "api" | "tfe-api" | "github" },
): Promise<ConfigurationVersion> {
  return audited(
    services,
    { organizationId: workspace.organizationId, actorId: actor.id },
    async (stores, record, now) => {
      const configurationVersion = await stores.configurationVersions.create({
        organizationId: workspace.organizationId,
        workspaceId: workspace.id,
        speculative: input.speculative,
        source: input.source,
        createdAt: now,
      });
      await record("configuration_version.created", ["configuration-versions", configurationVersion.id], {
        workspace_id: workspace.id,
        speculative: input.speculative,
      });
      return configurationVersion;
    },
  );
}

/**
 * Refuses anything that is not a gzip-compressed tar archive a sandbox may unpack: inflated and
 * checked streaming on a worker thread (artifacts/upload-inspection.ts), never on the event loop.
 */
async function assertTarGz(services: Services, bytes: Uint8Array): Promise<void> {
  const invalid = (why: string) =>
    new DomainError("CONFIGURATION_UPLOAD_INVALID", `The upload must be a .tar.gz of the configuration: ${why}.`);
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) throw invalid("it is not gzip-compressed");
  const result = await services.uploadInspector.inspect(bytes);
  if (!result.ok) throw invalid(result.refusal);
}

/**
 * Stores the uploaded bytes (encrypted) and marks the configuration version uploaded with their
 * SHA-256 and size. Immutable: a second upload is refused and the stored bytes stay.
 */
export async function uploadConfiguration(
  services: Services,
  token: string,
  body: Uint8Array,
): Promise<ConfigurationVersion> {
  const now = services.clock();
  const id = verifyUploadToken(services.keys.uploadUrl, token, now);
  const current = await services.stores.configurationVersions.getById(id);
  if (!current) throw new DomainError("NOT_FOUND", "This upload URL is invalid or has expired.");
  if (current.status !== "pending") {
    throw new DomainError(
      "CONFIGURATION_VERSION_ALREADY_UPLOADED",
      `Configuration version ${id} is already uploaded and immutable. Create a new configuration version instead.`,
    );
  }
  // Shared with the inspection worker as they are (no copy crosses threads).
  const shared = sharedBytes(body);
  await assertTarGz(services, shared);
  const bytes = Buffer.from(shared.buffer, shared.byteOffset, shared.byteLength);
  // Keyed by content, so a concurrent second upload never overwrites the winner's bytes.
  const key = `configuration-versions/${id}/${sha256Hex(bytes)}.tar.gz`;
  const descriptor = await services.artifacts.write(
    { kind: "configuration", workspaceId: current.workspaceId, key },
    bytes,
  );
  try {
    return await audited(
      services,
      { organizationId: current.organizationId, actorId: null, at: now },
      async (stores, record) => {
        const uploaded = await stores.configurationVersions.markUploaded(id, {
          configDigest: descriptor.sha256,
          sizeBytes: descriptor.sizeBytes,
          artifactKey: key,
          uploadedAt: now,
        });
        await record("configuration_version.uploaded", ["configuration-versions", id], {
          config_digest: descriptor.sha256,
          size_bytes: descriptor.sizeBytes,
        });
        return uploaded;
      },
    );
  } catch (error) {
    // A concurrent upload won the race: drop these bytes unless they are the recorded ones.
    const after = await services.stores.configurationVersions.getById(id);
    if (after?.configDigest !== descriptor.sha256) await services.artifacts.delete(key);
    throw error;
  }
}

/**
 * The ref of an uploaded configuration version's tarball: its `artifacts` row (the repository
 * gives the record a size only when that row describes the version's object); null until it is
 * uploaded.
 */
export function configurationArtifact(version: ConfigurationVersion): ArtifactRef | null {
  return artifactRefOf("configuration", {
    key: version.artifactKey,
    sizeBytes: version.sizeBytes,
    sha256: version.configDigest,
  });
}
