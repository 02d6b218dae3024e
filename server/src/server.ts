import { readFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import type Koa from "koa";
import pino, { type Logger } from "pino";
import { tfeSurface } from "./api/tfe/index.ts";
import { ensureBootstrapAdmin } from "./commands/users.ts";
import { v1Surface } from "./api/v1/index.ts";
import { FramedArtifactStore } from "./artifacts/artifact-store.ts";
import { objectBackendFromConfig } from "./artifacts/backends/index.ts";
import { deriveKeys, loadMasterKey } from "./artifacts/keys.ts";
import { UploadInspector } from "./artifacts/upload-inspection.ts";
import { meteredArtifacts } from "./metrics/metered-artifacts.ts";
import { REPO_ROOT, pinnedToolVersions, type Config } from "./config.ts";
import { buildApp } from "./http/app.ts";
import { LiveGateway } from "./live/gateway.ts";
import type { LiveHubOptions } from "./live/hub.ts";
import { GitHubAppClient } from "./github/client.ts";
import { migrateGraphileWorker } from "./runner/graphile.ts";
import type { Services } from "./commands/services.ts";
import { createStores, migrateLatest, openDatabase, type Database } from "./store/index.ts";
import { sqliteFilename } from "./store/db.ts";
import { makePrivate } from "./artifacts/private-files.ts";

/** Optional replacements, for tests: a fixed clock, a quiet logger, an already open database. */
export interface ServerOverrides {
  clock?: () => Date;
  logger?: Logger;
  /** Used instead of opening `config.databaseUrl`; the caller keeps ownership and closes it. */
  database?: Database;
  /** Limits of the live WebSocket hub (e.g. a small buffer bound to test slow clients). */
  live?: LiveHubOptions;
}

/** A ready StackShip: migrated database, services and the Koa app (not yet listening). */
export interface StackShip {
  app: Koa;
  services: Services;
  /** The live run WebSocket (`/live/runs/{run_id}`): attach it to every HTTP and HTTPS server. */
  live: LiveGateway;
  close: () => Promise<void>;
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(REPO_ROOT, "server/package.json"), "utf8")) as { version: string }).version;
}

/** Services without an HTTP app: what a runner-only process needs. */
export interface StackShipServices {
  services: Services;
  close: () => Promise<void>;
}

/**
 * The data directory 0700 and its files 0600 (database, keys, bootstrap token, local CA, local
 * artifacts), and the database file and artifact directory when they are kept elsewhere: fixed
 * where this process owns them, a warning where it does not.
 */
export function makeDataPrivate(config: Config, say: (message: string) => void): void {
  const inside = (path: string) => path === config.dataDir || path.startsWith(config.dataDir + sep);
  const others: string[] = [];
  if (config.databaseUrl.startsWith("sqlite:")) {
    const file = sqliteFilename(config.databaseUrl);
    if (file !== ":memory:" && !inside(file)) others.push(file, `${file}-wal`, `${file}-shm`);
  }
  if (config.artifactStore.kind === "local" && !inside(resolve(config.artifactStore.directory)))
    others.push(resolve(config.artifactStore.directory));
  const report = makePrivate(config.dataDir, others);
  if (report.fixed.length > 0)
    say(
      `made ${report.fixed.length} data path(s) private to this user (directories 0700, files 0600), e.g. ${report.fixed[0]}`,
    );
  for (const warning of report.warnings) say(`WARNING: ${warning}`);
}

/** Opens and migrates the database and wires every service; `onProgress` narrates slow steps. */
export async function createServices(
  config: Config,
  overrides: ServerOverrides = {},
  onProgress?: (message: string) => void,
): Promise<StackShipServices> {
  const logger = overrides.logger ?? pino({ level: config.logLevel });
  const db = overrides.database ?? (await openDatabase(config.databaseUrl));
  const owned = overrides.database === undefined;
  try {
    await migrateLatest(db, onProgress);
    if (db.dialect === "postgres") {
      onProgress?.("installing or upgrading graphile-worker's schema");
      await migrateGraphileWorker(db);
    }
  } catch (error) {
    if (owned) await db.close();
    throw error;
  }
  const keys = deriveKeys(loadMasterKey(config.dataDir, config.encryptionKey));
  let backend;
  try {
    backend = await objectBackendFromConfig(config.artifactStore, db);
  } catch (error) {
    if (owned) await db.close();
    throw error;
  }
  const services: Services = {
    config,
    logger,
    db,
    stores: createStores(db.knex, db.dialect),
    artifacts: new FramedArtifactStore(backend, keys.artifactDataKeys),
    uploadInspector: new UploadInspector({
      concurrency: config.uploadInspections,
      maxWaiting: config.uploadInspectionQueue,
    }),
    keys,
    clock: overrides.clock ?? (() => new Date()),
    opentofuVersions: [pinnedToolVersions().opentofu],
    platform: hostPlatform(),
    version: packageVersion(),
    github: config.github.state === "on" ? new GitHubAppClient(config.github, overrides.clock) : null,
  };
  // Counted for /metrics whichever backend stores the artifacts.
  services.artifacts = meteredArtifacts(services.artifacts);
  return {
    services,
    close: async () => {
      await services.uploadInspector.close();
      await services.artifacts.close();
      if (owned) await db.close();
    },
  };
}

/** The services plus the Koa app serving both API surfaces. */
export async function createStackShip(
  config: Config,
  overrides: ServerOverrides = {},
  onProgress?: (message: string) => void,
): Promise<StackShip> {
  const { services, close } = await createServices(config, overrides, onProgress);
  if (config.bootstrapAdmin) {
    const { created } = await ensureBootstrapAdmin(
      services,
      config.bootstrapAdmin.email,
      config.bootstrapAdmin.password,
    );
    onProgress?.(
      created
        ? `created the deployment administrator ${config.bootstrapAdmin.email}`
        : `deployment administrator ${config.bootstrapAdmin.email} already exists (password unchanged)`,
    );
  }
  const live = new LiveGateway(services, overrides.live);
  return {
    app: buildApp(services, [tfeSurface, v1Surface]),
    services,
    live,
    close: async () => {
      await live.close();
      await close();
    },
  };
}

/** The OpenTofu-style platform name of this host. */
export function hostPlatform(): string {
  const arch =
    ({ x64: "amd64", arm64: "arm64", ia32: "386", arm: "arm" } as Record<string, string>)[process.arch] ?? process.arch;
  return `${process.platform}_${arch}`;
}
