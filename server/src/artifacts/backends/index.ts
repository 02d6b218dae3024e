import type { Knex } from "knex";
import type { ArtifactStoreSetting } from "./setting.ts";
import type { ObjectBackend } from "../object-backend.ts";
import { LocalObjectBackend } from "./local.ts";
import { PostgresObjectBackend } from "./postgres.ts";

/**
 * The object backend the configuration selects (config.ts `artifactStoreSetting`): a local
 * directory, PostgreSQL (the database the services opened), or an S3-compatible store.
 */
export async function objectBackendFromConfig(
  setting: ArtifactStoreSetting,
  database: { knex: Knex; dialect: string },
): Promise<ObjectBackend> {
  switch (setting.kind) {
    case "local":
      return new LocalObjectBackend(setting.directory);
    case "postgres":
      if (database.dialect !== "postgres")
        throw new Error("the PostgreSQL artifact backend needs a PostgreSQL database (STACKSHIP_DATABASE_URL)");
      return new PostgresObjectBackend(database.knex);
    case "s3": {
      // Loaded only when selected (@aws-sdk/client-s3 is large).
      const { createS3Backend } = await import("./s3.ts");
      return createS3Backend(new URL(setting.url));
    }
  }
}

/** How the startup line names the backend (no credentials: an s3 URL is shown without its query or user info). */
export function describeArtifactStore(setting: ArtifactStoreSetting): string {
  switch (setting.kind) {
    case "local":
      return `local directory ${setting.directory}`;
    case "postgres":
      return "PostgreSQL (the database, table artifact_objects)";
    case "s3": {
      const url = new URL(setting.url);
      return `S3-compatible bucket ${url.hostname}${url.pathname === "/" ? "" : url.pathname}${url.searchParams.get("endpoint") ? ` at ${new URL(url.searchParams.get("endpoint")!).origin}` : ""}`;
    }
  }
}
