// One command in one fresh bubblewrap sandbox: the public face of `sandbox/`, whose parts follow
// the sandbox's seams:
//   sandbox/profile.ts      what a sandbox is made of and may use, what an attempt hands it and gets back
//   sandbox/bwrap-args.ts   bwrap's whole command line (`bwrapArgs`: the isolation, flag by flag)
//   sandbox/confinement.ts  as root its own uid and size-limited tmpfs; releases; the stale-mount sweep
//   sandbox/boot.ts         starting one (`startSandbox`, for the warm pool or its attempt), prerequisites
//   sandbox/process.ts      bwrap's process and the launcher's protocol (control channel, output counts)
//   sandbox/run.ts          the attempt (`Sandbox.run`): handoff, wall-clock limit, abort, result
//   sandbox/collect.ts      files into /work at the handoff and read back after the command
//   sandbox/limits.ts       prlimit backstops, the watcher of the totals, the traces of a limit
// `sandbox-launcher.mjs` (with `sandbox/launcher-*.mjs`) is its first process inside, `api-channel.ts`
// its only way out.
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

export {
  DEFAULT_SANDBOX_LIMITS,
  DEFAULT_SECCOMP_FILTER,
  isSandboxId,
  newSandboxId,
  resolveLimits,
  SANDBOX_BASE_PROFILE,
  SANDBOX_DEFAULT_PATH,
  SANDBOX_TOOLS_DIR,
  SANDBOX_UID_BASE,
  SANDBOX_WORK_DIR,
  type OutputStream,
  type ReadOnlyBind,
  type SandboxLimitKind,
  type SandboxLimits,
  type SandboxOptions,
  type SandboxResult,
  type SandboxRun,
  type SandboxShape,
  type SandboxTimings,
} from "./sandbox/profile.ts";
export { bwrapArgs, type BwrapLayout } from "./sandbox/bwrap-args.ts";
export { SYNC_IO_MAX_BYTES } from "./sandbox/collect.ts";
export { sandboxReleasesSettled, sweepStaleSandboxMounts } from "./sandbox/confinement.ts";
export { runInSandbox, sandboxPrerequisites, startSandbox } from "./sandbox/boot.ts";
export { Sandbox } from "./sandbox/run.ts";

/**
 * The source that makes a sandbox what it is, for the attempt's sandbox profile digest
 * (provenance.ts): bwrap's arguments and how the host confines, boots and drives it, and the
 * launcher inside with its modules.
 */
export const SANDBOX_SOURCE_FILES: readonly string[] = [
  ...readdirSync(fileURLToPath(new URL("./sandbox/", import.meta.url)))
    .filter((name) => /\.(ts|mjs)$/.test(name) && !name.endsWith(".test.ts"))
    .sort()
    .map((name) => `sandbox/${name}`),
  "sandbox-launcher.mjs",
  "sandbox-unpack.mjs",
].map((name) => fileURLToPath(new URL(`./${name}`, import.meta.url)));
