// The one artifact model: every stored artifact (uploaded configuration, state version, saved
// plan, plan JSON, redacted plan changes) is an object in the artifact store, written in the
// framed format (artifacts/framed.ts), and known to the rest of the code only by its ArtifactRef.

/** What an artifact is; bound into its encryption, so an object cannot pass as another kind. */
export type ArtifactKind = "configuration" | "state" | "plan" | "plan_json" | "plan_diff" | "plan_json_redacted";

/** The artifact kinds a run produces (at most one of each per run). */
export type RunArtifactKind = Extract<ArtifactKind, "plan" | "plan_json" | "plan_diff" | "plan_json_redacted">;

/** The artifact kinds a configuration or state version holds (one object per version, a run may upload several states). */
export type VersionArtifactKind = Extract<ArtifactKind, "configuration" | "state">;

/** Every kind, for closed-set checks. */
export const ARTIFACT_KINDS: readonly ArtifactKind[] = [
  "configuration",
  "state",
  "plan",
  "plan_json",
  "plan_diff",
  "plan_json_redacted",
];

/** The format every artifact is written in (artifacts/framed.ts FRAMED_FORMAT). */
export const ARTIFACT_FORMAT = "framed-aes256gcm-v1";

/** A stored artifact: where it is, what it must be (plaintext size and SHA-256), and its format. */
export interface ArtifactRef {
  kind: ArtifactKind;
  key: string;
  sizeBytes: number;
  sha256: string;
  format: typeof ARTIFACT_FORMAT;
}

/**
 * The ref of a configuration or state version's object, from its record: the key it references,
 * its digest, and the size its repository read from the object's `artifacts` row (null when that
 * row is missing or describes another object, so the version has no readable object).
 */
export function artifactRefOf(
  kind: ArtifactKind,
  fields: { key: string | null; sizeBytes: number | null; sha256: string | null },
): ArtifactRef | null {
  if (fields.key === null || fields.sizeBytes === null || fields.sha256 === null) return null;
  return { kind, key: fields.key, sizeBytes: fields.sizeBytes, sha256: fields.sha256, format: ARTIFACT_FORMAT };
}
