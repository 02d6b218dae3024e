// Shared by the generated-SDK smoke tests: running a program that talks to the test server (the
// server lives in this process, so the child is awaited, never run synchronously), and the
// configuration tarball it uploads.
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as assert from "uvu/assert";
import { getRun, getRunReview } from "../../../client/src/index.ts";
import { makeConfigurationTarball } from "../support/factories.ts";
import { expectStatus } from "../support/responses.ts";
import { withTestServer } from "../support/test-server.ts";

export interface Finished {
  stdout: string;
  stderr: string;
}

/** Runs `command` to the end; rejects with its output when it exits non-zero. */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Finished> {
  const timeout = options.timeoutMs ?? 300_000;
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        // Killed by the time limit: say so first, not only "Command failed" above partial output.
        const why = error?.killed ? `stopped after its time limit of ${timeout / 1000} s; ` : "";
        if (error)
          reject(new Error(`${command} ${args.join(" ")} failed (${why}${error.message}):\n${stdout}\n${stderr}`));
        else resolve({ stdout, stderr });
      },
    );
  });
}

/** The default one-resource configuration as a .tar.gz file, for a program to upload. */
export async function tarballFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "ss-sdk-smoke-"));
  const file = join(dir, "configuration.tar.gz");
  await writeFile(file, makeConfigurationTarball());
  return file;
}

/** The summary every smoke program prints as its last line. */
export interface SmokeSummary {
  workspace: string;
  run: string;
  second: string;
  planned_digest: string;
  review_actions: string[];
  changes: unknown;
  status: string;
  inventory: string[];
  pages: number;
}

export function summaryOf(stdout: string): SmokeSummary {
  const last = stdout.trim().split("\n").at(-1) ?? "";
  return JSON.parse(last) as SmokeSummary;
}

/**
 * Runs a smoke program (`command args`) against a test server with a runner (SQLite) and checks
 * what it reports against the server: the run applied, the approval bound to the digest the
 * program read with `reason`, the plan changes naming the resource, two inventory pages.
 */
export async function expectSmokeApplies(
  command: string,
  args: string[],
  organization: string,
  reason: string,
): Promise<void> {
  const tarball = await tarballFile();
  await withTestServer(
    "sqlite",
    async (server) => {
      const { stdout } = await run(command, args, {
        env: {
          ...process.env,
          STACKSHIP_URL: server.baseUrl,
          STACKSHIP_BOOTSTRAP_TOKEN: server.bootstrapToken,
          STACKSHIP_ORGANIZATION: organization,
          SMOKE_TARBALL: tarball,
        },
      });
      const summary = summaryOf(stdout);
      assert.is(summary.status, "applied");
      assert.match(summary.planned_digest, /^[0-9a-f]{64}$/);
      assert.equal(summary.review_actions, ["approve", "discard", "cancel"]);
      // The server agrees: applied, and the approval is bound to the digest the program read.
      const applied = expectStatus(await getRun({ client: server.admin, path: { run_id: summary.run } }), 200).data;
      assert.is(applied.attributes.status, "applied");
      assert.is(applied.attributes.plan_digest, summary.planned_digest);
      const approval = expectStatus(await getRunReview({ client: server.admin, path: { run_id: summary.run } }), 200)
        .data.attributes.stages.approval;
      assert.is(approval.state, "approved");
      assert.is(approval.plan_digest, summary.planned_digest);
      assert.is(approval.reason, reason);
      // Plan changes were read as a document naming the one resource.
      assert.match(JSON.stringify(summary.changes), /terraform_data\.x/);
      // Two runs, one per page, each seen exactly once, newest first.
      assert.is(summary.pages, 2);
      assert.equal(summary.inventory, [summary.second, summary.run]);
    },
    { runner: true },
  );
}
