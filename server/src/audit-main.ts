import { readFileSync, writeFileSync } from "node:fs";
import type { AuditChainReport } from "./domain/audit-chain.ts";
import { AuditExportError, verifyAuditExport } from "./domain/audit-export.ts";

const USAGE = `usage:
  npm run verify-audit -- <organization> [--from-checkpoint N]      verify an organization's chain in the database
  npm run verify-audit -- --deployment [--from-checkpoint N]        verify the deployment chain (events of no organization)
  npm run verify-audit -- <organization> --export FILE.jsonl        export the chain as JSON Lines (no verification)
  npm run verify-audit -- --file FILE.jsonl [--key VKEY] [--from-checkpoint N]
                                                                    verify an export offline; --key: the verifier key obtained out of band`;

function say(message: string) {
  process.stdout.write(`[verify-audit] ${message}\n`);
}

class UsageError extends Error {}

interface Args {
  organization: string | null;
  deployment: boolean;
  file: string | null;
  key: string | null;
  exportTo: string | null;
  fromCheckpoint: number | undefined;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    organization: null,
    deployment: false,
    file: null,
    key: null,
    exportTo: null,
    fromCheckpoint: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`${arg} needs a value`);
      return next;
    };
    if (arg === "--file") args.file = value();
    else if (arg === "--key") args.key = value();
    else if (arg === "--export") args.exportTo = value();
    else if (arg === "--deployment") args.deployment = true;
    else if (arg === "--from-checkpoint") {
      const n = Number(value());
      if (!Number.isSafeInteger(n) || n < 0)
        throw new UsageError("--from-checkpoint takes a checkpoint's tree size (a whole number)");
      args.fromCheckpoint = n;
    } else if (arg.startsWith("--")) throw new UsageError(`unknown option ${arg}`);
    else if (args.organization === null) args.organization = arg;
    else throw new UsageError(`unexpected argument ${arg}`);
  }
  const sources = [args.file !== null, args.organization !== null, args.deployment].filter(Boolean).length;
  if (sources !== 1) throw new UsageError("name exactly one of: an organization, --deployment, --file");
  if (args.exportTo !== null && args.file !== null)
    throw new UsageError("--export reads the database; it does not take --file");
  return args;
}

/** Prints the report; the exit code: 0 verified, 1 a problem. */
function reportOf(where: string, report: AuditChainReport): number {
  if (report.problem === null) {
    say(
      `OK: ${where} (chain ${report.chain}): ${report.verifiedEvents} events recomputed, ${report.verifiedCheckpoints} signed checkpoints verified`,
    );
    return 0;
  }
  say(
    `FAILED: ${where} (chain ${report.chain}): first bad position ${report.problem.position}: ${report.problem.message}`,
  );
  say(`(${report.verifiedEvents} events and ${report.verifiedCheckpoints} checkpoints verified before it)`);
  return 1;
}

/**
 * `npm run verify-audit`: recomputes an audit hash chain and checks every signed checkpoint
 * (domain/audit-chain.ts), from the database (same STACKSHIP_DATABASE_URL and
 * STACKSHIP_DATA_DIR / STACKSHIP_ENCRYPTION_KEY as the server) or from an export offline.
 * Exit code 0: verified; 1: the chain shows an edit (the first bad position is printed); 2: usage.
 */
async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.file !== null) {
    const report = verifyAuditExport(readFileSync(args.file, "utf8"), {
      verifierKey: args.key ?? undefined,
      fromCheckpoint: args.fromCheckpoint,
    });
    if (args.key === null)
      say(
        "note: checking the checkpoints with the key the file names; pass --key with the published verifier key to trust them",
      );
    return reportOf(args.file, report);
  }
  // Loaded only here: the offline mode needs neither the database nor the server's modules.
  const { exportStoredAuditChain, verifyStoredAuditChain } = await import("./commands/audit-verification.ts");
  const { loadConfig } = await import("./config.ts");
  const { createServices } = await import("./server.ts");
  const { services, close } = await createServices(loadConfig(), {}, (m) => say(`migrations: ${m}`));
  try {
    if (args.exportTo !== null) {
      writeFileSync(args.exportTo, await exportStoredAuditChain(services, args.deployment ? null : args.organization));
      say(`exported to ${args.exportTo}`);
      return 0;
    }
    const report = await verifyStoredAuditChain(services, args.deployment ? null : args.organization, {
      fromCheckpoint: args.fromCheckpoint,
    });
    return reportOf(args.deployment ? "the deployment" : `organization ${args.organization}`, report);
  } finally {
    await close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`[verify-audit] ${error.message}\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(
      `[verify-audit] ${error instanceof AuditExportError ? "not an audit export: " : ""}${(error as Error).message}\n`,
    );
    process.exit(error instanceof AuditExportError ? 1 : 2);
  },
);
