// Spawned StackShip processes for the multi-process tests: a runner-only process (`npm run runner`'s
// entry point) with its own options, the lines it prints, and the sandbox processes of an attempt.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/config.ts";
import { alive, processTree, runningSandboxProcesses } from "./processes.ts";
import type { TestServer } from "./test-server.ts";

/** A spawned process and what it printed on stdout so far. */
export interface Spawned {
  child: ChildProcess;
  output: string[];
  /** What it printed on stderr (also passed through to the test's stderr). */
  errors: string[];
  /** Resolves with the first stdout line matching `pattern` (fails after `timeoutMs` or on exit). */
  line(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGKILL (when still alive) and wait for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** The environment of a main.ts process on `dataDir` that runs no runs: its own ports (chosen at start), warnings only. */
export function apiOnlyEnv(dataDir: string): Record<string, string> {
  return {
    STACKSHIP_DATA_DIR: dataDir,
    STACKSHIP_HTTP_PORT: "0",
    STACKSHIP_HTTPS_PORT: "0",
    STACKSHIP_RUNNER_CONCURRENCY: "0",
    STACKSHIP_LOG_LEVEL: "warn",
  };
}

/** Spawns `script` (relative to server/src) with exactly `env` plus PATH. */
export function spawnStackShip(script: string, env: Record<string, string>, { quietStderr = false } = {}): Spawned {
  const child = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "server/src", script)], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const waiters = new Set<() => void>();
  let buffered = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => {
    buffered += text;
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    output.push(...lines);
    for (const wake of waiters) wake();
  });
  const errors: string[] = [];
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    errors.push(text);
    if (!quietStderr) process.stderr.write(text);
  });
  child.once("exit", () => {
    for (const wake of waiters) wake();
  });
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    output,
    errors,
    line(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          for (const line of output) {
            const match = line.match(pattern);
            if (match) return done(() => resolve(match));
          }
          if (exited())
            done(() =>
              reject(
                new Error(
                  `${script} exited (${child.exitCode ?? child.signalCode}) without printing ${pattern}; it printed:\n${output.join("\n")}`,
                ),
              ),
            );
        };
        const timer = setTimeout(
          () =>
            done(() =>
              reject(
                new Error(`${script} did not print ${pattern} in ${timeoutMs} ms; it printed:\n${output.join("\n")}`),
              ),
            ),
          timeoutMs,
        );
        const done = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      });
    },
    async kill(signal = "SIGKILL") {
      if (exited()) return;
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill(signal);
      await gone;
    },
  };
}

/** The environment of a runner-only process against `server` (its database and API). */
export function runnerEnv(server: TestServer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    STACKSHIP_DATABASE_URL: server.databaseUrl,
    STACKSHIP_DATA_DIR: server.dataDir,
    STACKSHIP_API_URL: server.baseUrl,
    STACKSHIP_RUNNER_CONCURRENCY: "1",
    STACKSHIP_RUNNER_HEARTBEAT_MS: "200",
    STACKSHIP_LOG_LEVEL: "warn",
    ...extra,
  };
}

/** The server's master key (base64), for a process that must not share its data directory. */
export function masterKeyOf(server: TestServer): string {
  return readFileSync(join(server.dataDir, "keys", "master.key"), "utf8").trim();
}

/** The live host processes of the sandbox named `name` (its bwrap and everything under it). */
export function sandboxProcesses(name: string): number[] {
  return runningSandboxProcesses(new Set([name]))
    .flatMap((pid) => processTree(pid))
    .filter(alive);
}

/** The metrics text at `url`, as a map from series (name with labels) to value. */
export async function scrape(url: string): Promise<{ text: string; value(series: string): number }> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status}`);
  const text = await response.text();
  const values = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const at = line.lastIndexOf(" ");
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return { text, value: (series) => values.get(series) ?? 0 };
}
