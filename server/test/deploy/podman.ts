// podman from the deployment tests (image-smoke.ts): synchronous calls with their output, and a
// wait on a condition with a deadline.
import { spawnSync } from "node:child_process";

/**
 * The capabilities a container that runs the sandbox gets (deploy/README.md says why each):
 * podman's default set dropped, then only these. Measured: without any one of the first seven the
 * server or a plan's sandbox does not start.
 */
export const SANDBOX_CAPABILITIES = [
  "SYS_ADMIN",
  "NET_ADMIN",
  "SETUID",
  "SETGID",
  "SETPCAP",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "KILL",
] as const;

/** `podman run` arguments for SANDBOX_CAPABILITIES. */
export const SANDBOX_CAPABILITY_ARGS = [
  "--cap-drop",
  "ALL",
  ...SANDBOX_CAPABILITIES.flatMap((cap) => ["--cap-add", cap]),
];

/** Runs podman with `args`; its exit status and stdout+stderr (trimmed). */
export function podman(args: readonly string[]): { status: number; output: string } {
  const result = spawnSync("podman", args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, output: `${result.stdout}${result.stderr}`.trim() };
}

/** Runs podman with `args` and returns its stdout (trimmed); throws with its output unless it exits 0. */
export function podmanOk(args: readonly string[]): string {
  const result = spawnSync("podman", args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  if (result.status !== 0)
    throw new Error(`podman ${args.join(" ")} exited ${result.status}: ${result.stderr}${result.stdout}`);
  return result.stdout.trim();
}

/** Polls `check` every 250 ms until it returns true; throws naming `what` after `timeoutMs`. */
export async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
