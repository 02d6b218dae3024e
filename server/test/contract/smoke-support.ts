// Shared by the generated-SDK smoke tests: running a program that talks to the test server (the
// server lives in this process, so the child is awaited, never run synchronously), and the
// configuration tarball it uploads.
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeConfigurationTarball } from "../support/factories.ts";

export interface Finished {
  stdout: string;
  stderr: string;
}

/** Runs `command` to the end; rejects with its output when it exits non-zero. */
export function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Finished> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: options.cwd, env: options.env ?? process.env, timeout: options.timeoutMs ?? 300_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(" ")} failed (${error.message}):\n${stdout}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
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
