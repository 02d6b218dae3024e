import { readFileSync } from "node:fs";
import { join } from "node:path";
import type Koa from "koa";
import pino, { type Logger } from "pino";
import { tfeSurface } from "./api/tfe/index.ts";
import { v1Surface } from "./api/v1/index.ts";
import { LocalArtifactStore } from "./artifacts/artifact-store.ts";
import { deriveKeys, loadMasterKey } from "./artifacts/keys.ts";
import { REPO_ROOT, pinnedToolVersions, type Config } from "./config.ts";
import { buildApp } from "./http/app.ts";
import { hostPlatform, type Services } from "./services.ts";
import { createStores, migrateLatest, openDatabase, type Database } from "./store/index.ts";

/** Optional replacements, for tests: a fixed clock, a quiet logger, an already open database. */
export interface ServerOverrides {
  clock?: () => Date;
  logger?: Logger;
  /** Used instead of opening `config.databaseUrl`; the caller keeps ownership and closes it. */
  database?: Database;
}

/** A ready StackShip: migrated database, services and the Koa app (not yet listening). */
export interface StackShip {
  app: Koa;
  services: Services;
  close(): Promise<void>;
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(REPO_ROOT, "server/package.json"), "utf8")) as { version: string }).version;
}

/** Opens and migrates the database and wires every service; `onProgress` narrates slow steps. */
export async function createStackShip(config: Config, overrides: ServerOverrides = {}, onProgress?: (message: string) => void): Promise<StackShip> {
  const logger = overrides.logger ?? pino({ level: config.logLevel });
  const db = overrides.database ?? (await openDatabase(config.databaseUrl));
  const owned = overrides.database === undefined;
  try {
    await migrateLatest(db, onProgress);
  } catch (error) {
    if (owned) await db.close();
    throw error;
  }
  const keys = deriveKeys(loadMasterKey(config.dataDir, config.encryptionKey));
  const services: Services = {
    config,
    logger,
    db,
    stores: createStores(db.knex, db.dialect),
    artifacts: new LocalArtifactStore(join(config.dataDir, "artifacts"), keys.artifacts),
    keys,
    clock: overrides.clock ?? (() => new Date()),
    opentofuVersions: [pinnedToolVersions().opentofu],
    platform: hostPlatform(),
    version: packageVersion(),
  };
  const app = buildApp(services, [tfeSurface, v1Surface]);
  return { app, services, close: async () => (owned ? db.close() : undefined) };
}
