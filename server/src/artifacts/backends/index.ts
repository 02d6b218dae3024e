import type { Knex } from "knex";
import type { ArtifactStoreSetting } from "./setting.ts";
import type { ObjectBackend } from "../object-backend.ts";
import { LocalObjectBackend } from "./local.ts";
import { PostgresObjectBackend } from "./postgres.ts";

/** What the S3 backend module (./s3.ts) exports. */
interface S3BackendModule {
  createS3Backend(url: URL): Promise<ObjectBackend>;
}

/**
 * The object backend the configuration selects (config.ts `artifactStoreSetting`): a local
 * directory, PostgreSQL (the database the services opened), or an S3-compatible store.
 */
export async function objectBackendFromConfig(setting: ArtifactStoreSetting, database: { knex: Knex; dialect: string }): Promise<ObjectBackend> {
  switch (setting.kind) {
    case "local":
      return new LocalObjectBackend(setting.directory);
    case "postgres":
      if (database.dialect !== "postgres") throw new Error("the PostgreSQL artifact backend needs a PostgreSQL database (STACKSHIP_DATABASE_URL)");
      return new PostgresObjectBackend(database.knex);
    case "s3": {
      // Hook for the S3-compatible backend (backends/s3.ts, @aws-sdk/client-s3): loaded only when selected.
      const url = new URL(setting.url);
      let module: S3BackendModule;
      try {
        module = (await import(["./s3", "ts"].join("."))) as S3BackendModule;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND" && String((error as Error).message).includes("s3.ts")) {
          throw new Error("STACKSHIP_ARTIFACT_URL: S3 backend not available in this build");
        }
        throw error;
      }
      return module.createS3Backend(url);
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
