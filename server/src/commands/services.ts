import type { Logger } from "pino";
import type { ArtifactStore } from "../artifacts/artifact-store.ts";
import type { Keys } from "../artifacts/keys.ts";
import type { UploadInspector } from "../artifacts/upload-inspection.ts";
import type { Config } from "../config.ts";
import type { GitHubAppClient } from "../github/client.ts";
import type { Database, Stores } from "../store/index.ts";

/** Everything handlers and commands share; built once by the composition root. */
export interface Services {
  config: Config;
  logger: Logger;
  db: Database;
  /** Repositories outside any transaction (reads). Writes go through `inTransaction`. */
  stores: Stores;
  artifacts: ArtifactStore;
  /** Inflates and checks configuration uploads on worker threads, a bounded number at once. */
  uploadInspector: UploadInspector;
  keys: Keys;
  clock: () => Date;
  /** The exact OpenTofu versions this deployment's `.tools` provides, newest first. */
  opentofuVersions: readonly string[];
  /** The execution platform runs pin, e.g. `linux_amd64`. */
  platform: string;
  /** StackShip's own version, for /healthz. */
  version: string;
  /** Asks the runner executing a run in this process to interrupt it. Set by the runner. */
  interruptRun?: (runId: string) => void;
  /** Tells the runner in this process that a job was queued (committed), so it need not wait for its next poll. Set by the runner. */
  jobQueued?: () => void;
  /** The GitHub App client; null while the pipeline is off (config.github). */
  github: GitHubAppClient | null;
  /** Tells the GitHub worker in this process that a delivery was queued. Set by the worker. */
  githubDeliveryQueued?: () => void;
}
