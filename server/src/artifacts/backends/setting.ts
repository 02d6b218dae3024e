/** The artifact backend configured (config.ts parses STACKSHIP_ARTIFACT_URL into it; index.ts builds it). */
export type ArtifactStoreSetting =
  { kind: "local"; directory: string } | { kind: "postgres" } | { kind: "s3"; url: string };
