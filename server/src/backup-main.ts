import { BackupError, backupDeployment, restoreDeployment } from "./commands/backup.ts";
import { loadConfig } from "./config.ts";

const USAGE = `usage:
  npm run backup -- <dir>              back the deployment up into <dir> (new or empty), while it serves
  npm run restore -- <dir> [--force]   check the backup in <dir> completely, then restore it;
                                       --force replaces a deployment that is already there
Both read the server's STACKSHIP_DATABASE_URL, STACKSHIP_DATA_DIR, STACKSHIP_ARTIFACT_URL and STACKSHIP_ENCRYPTION_KEY.`;

class UsageError extends Error {}

function say(message: string) {
  process.stdout.write(`[stackship-backup] ${message}\n`);
}

/**
 * `npm run backup -- <dir>` and `npm run restore -- <dir> [--force]` (commands/backup.ts).
 * Exit code 0: done; 1: refused or failed, with the reason (a restore refused wrote nothing); 2: usage.
 */
async function main(): Promise<void> {
  const [mode, ...rest] = process.argv.slice(2);
  if (mode !== "backup" && mode !== "restore") throw new UsageError("the first argument is backup or restore");
  const force = rest.includes("--force");
  const unknown = rest.find((arg) => arg.startsWith("--") && arg !== "--force");
  if (unknown !== undefined) throw new UsageError(`unknown option ${unknown}`);
  const positional = rest.filter((arg) => !arg.startsWith("--"));
  if (positional.length !== 1) throw new UsageError("name exactly one backup directory");
  if (force && mode === "backup") throw new UsageError("--force is an option of restore");
  const config = loadConfig();
  if (mode === "backup") await backupDeployment(config, positional[0], { say });
  else {
    await restoreDeployment(config, positional[0], { say, force });
    say("restore complete: start StackShip on it (npm start), then npm run verify-audit -- <organization>");
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`[stackship-backup] ${error.message}\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(
      `[stackship-backup] ${error instanceof BackupError ? "refused: " : "failed: "}${(error as Error).message}\n`,
    );
    process.exit(1);
  },
);
