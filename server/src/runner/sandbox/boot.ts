// Boot: a sandbox started before its attempt is known (the warm pool's, warm-sandboxes.ts) or for
// it (`runInSandbox`): the checks, the host side (its directory, uid, tmpfs, API channel, generated
// /etc files) and bwrap's spawn; and what a host lacks to run sandboxes at all.
import { accessSync, closeSync, constants as fsConstants, existsSync, openSync, realpathSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { recordSandboxBoot } from "../../metrics/registry.ts";
import { API_SOCKET_NAME, openApiChannel, type ApiChannel } from "../api-channel.ts";
import {
  bwrapArgs,
  etcFiles,
  LAUNCHER_HOST_PATH,
  resolveBinds,
  SETPRIV,
  UNPRIVILEGED_INSIDE_ID,
} from "./bwrap-args.ts";
import {
  allocateUid,
  isRoot,
  mountSandboxFs,
  statFields,
  sweepStaleMounts,
  uidsInUse,
  unmountSandboxFs,
  type Confinement,
} from "./confinement.ts";
import { PRLIMIT } from "./limits.ts";
import {
  DEFAULT_SECCOMP_FILTER,
  isSandboxId,
  isUnder,
  newSandboxId,
  now,
  resolveLimits,
  SANDBOX_BASE_PROFILE,
  SANDBOX_NAME_PATTERN,
  type SandboxOptions,
  type SandboxResult,
  type SandboxShape,
} from "./profile.ts";
import { checkRun, Sandbox } from "./run.ts";

/**
 * Starts a sandbox (bwrap and its launcher, plus its API channel) that waits for one attempt:
 * `run` hands the attempt over, `destroy` ends it unused. A `readOnlyBinds` or `name` is part of
 * the sandbox, not of the attempt, since both are fixed when bwrap starts.
 */
export async function startSandbox(options: SandboxShape): Promise<Sandbox> {
  // Counted for /metrics (stackship_sandbox_boots_total) by outcome.
  return bootSandbox(options).then(
    (sandbox) => (recordSandboxBoot("ok"), sandbox),
    (error: unknown) => (recordSandboxBoot("failed"), Promise.reject(error)),
  );
}

async function bootSandbox(options: SandboxShape): Promise<Sandbox> {
  const sandboxId = options.sandboxId ?? newSandboxId();
  if (!isSandboxId(sandboxId)) throw new Error(`runInSandbox: '${String(sandboxId)}' is not a sandbox id`);
  const name = options.name ?? sandboxId;
  if (!SANDBOX_NAME_PATTERN.test(name)) throw new Error(`runInSandbox: name '${name}' is not a lowercase DNS label`);
  if (options.api !== undefined && options.apiSocketPath !== undefined) {
    throw new Error("runInSandbox: give either api or apiSocketPath, not both");
  }
  const readOnlyBinds = resolveBinds(options.readOnlyBinds);
  if (
    options.planDiffBuilder !== undefined &&
    !readOnlyBinds.some(
      (bind) => bind.target === options.planDiffBuilder || isUnder(options.planDiffBuilder!, bind.target),
    )
  ) {
    throw new Error(`runInSandbox: the plan-diff builder '${options.planDiffBuilder}' is not under a read-only bind`);
  }
  const nodePath = realpathSync(options.nodePath ?? process.execPath);
  const limits = resolveLimits(options.limits);
  const seccompFilter = options.seccompFilter ?? DEFAULT_SECCOMP_FILTER;
  if (!existsSync(seccompFilter)) {
    throw new Error(
      `runInSandbox: the sandbox's seccomp filter ${seccompFilter} is missing; build it with scripts/bootstrap-tools`,
    );
  }
  const root = isRoot();
  if (root) {
    for (const tool of [SETPRIV, PRLIMIT])
      if (!existsSync(tool)) throw new Error(`runInSandbox: ${tool} is missing (Debian package util-linux)`);
    await sweepStaleMounts();
  }

  const hostDir = await realpath(await mkdtemp(path.join(options.tmpDir ?? os.tmpdir(), `stackship-${sandboxId}-`)));
  let channel: ApiChannel | undefined;
  const confinement: Confinement = { limits };
  try {
    const etcDir = path.join(hostDir, "etc");
    const channelDir = path.join(hostDir, "channel");
    let workDir = path.join(hostDir, "work");
    let tmpDir: string | undefined;
    if (root) {
      // Its own uid, and its own tmpfs for /work and /tmp: the disk limit is the tmpfs's size.
      confinement.uid = allocateUid();
      const fsDir = path.join(hostDir, "fs");
      await mkdir(fsDir, { mode: 0o700 });
      // Who owns the mount, for the sweep after a runner that died without unmounting.
      await writeFile(path.join(hostDir, "owner"), `${process.pid} ${statFields(process.pid)?.[19] ?? ""}\n`);
      await mountSandboxFs(fsDir, limits.diskBytes, confinement.uid, sandboxId);
      confinement.fsDir = fsDir;
      workDir = path.join(fsDir, "work");
      tmpDir = path.join(fsDir, "tmp");
      await mkdir(workDir, { mode: 0o700 });
      await mkdir(tmpDir, { mode: 0o700 });
      await chown(workDir, confinement.uid, confinement.uid);
      await chown(tmpDir, confinement.uid, confinement.uid);
    } else {
      await mkdir(workDir, { mode: 0o700 });
    }
    if (options.readOnlyInputDir !== undefined) {
      confinement.inputDir = path.join(confinement.fsDir ?? hostDir, "input");
      await mkdir(confinement.inputDir, { mode: 0o755 });
      readOnlyBinds.push(...resolveBinds([{ source: confinement.inputDir, target: options.readOnlyInputDir }]));
    }
    await mkdir(etcDir, { mode: 0o700 });
    await Promise.all(
      Object.entries(etcFiles(name, confinement.uid ?? UNPRIVILEGED_INSIDE_ID)).map(([file, contents]) =>
        writeFile(path.join(etcDir, file), contents),
      ),
    );
    if (options.api !== undefined) {
      await mkdir(channelDir, { mode: 0o700 });
      const socketPath = path.join(channelDir, API_SOCKET_NAME);
      channel = await openApiChannel({ socketPath, target: options.api });
      if (confinement.uid !== undefined) {
        await chown(channelDir, confinement.uid, confinement.uid);
        await chown(socketPath, confinement.uid, confinement.uid);
      }
    }
    if (options.apiSocketPath !== undefined && confinement.uid !== undefined) await chmod(options.apiSocketPath, 0o666);
    confinement.seccompFd = openSync(seccompFilter, "r");
    const args = bwrapArgs({
      name,
      workDir,
      etcDir,
      launcherPath: LAUNCHER_HOST_PATH,
      nodePath,
      apiSocketDir: channel !== undefined ? channelDir : undefined,
      apiSocketPath: options.apiSocketPath,
      readOnlyBinds,
      planDiffBuilder: options.planDiffBuilder,
      uid: confinement.uid,
      tmpDir,
      seccomp: true,
    });
    return new Sandbox(
      sandboxId,
      name,
      hostDir,
      workDir,
      channel,
      args,
      options.bwrapPath ?? "/usr/bin/bwrap",
      confinement,
    );
  } catch (error) {
    if (confinement.seccompFd !== undefined) closeSync(confinement.seccompFd);
    await channel?.close();
    if (confinement.fsDir !== undefined) await unmountSandboxFs(confinement.fsDir);
    await rm(hostDir, { recursive: true, force: true });
    if (confinement.uid !== undefined) uidsInUse.delete(confinement.uid);
    throw error;
  }
}

/** What this host lacks to run sandboxes, each with the exact command that fixes it (empty when ready). */
export function sandboxPrerequisites(
  options: { bwrapPath?: string; seccompFilter?: string } = {},
): { problem: string; fix: string }[] {
  const problems: { problem: string; fix: string }[] = [];
  const sudo = isRoot() ? "" : "sudo ";
  const missing: string[] = [];
  const executable = (file: string) => {
    try {
      accessSync(file, fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (!executable(options.bwrapPath ?? "/usr/bin/bwrap")) missing.push("bubblewrap");
  if (!executable(SETPRIV) || !executable(PRLIMIT)) missing.push("util-linux");
  if (isRoot() && (!executable("/usr/bin/mount") || !executable("/usr/bin/umount"))) missing.push("mount");
  if (missing.length > 0) {
    problems.push({
      problem: `the Debian package${missing.length > 1 ? "s" : ""} ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} not installed`,
      fix: `${sudo}apt-get install -y --no-install-recommends ${missing.join(" ")}`,
    });
  }
  if (!existsSync(options.seccompFilter ?? DEFAULT_SECCOMP_FILTER)) {
    problems.push({
      problem: `the sandbox's seccomp filter ${options.seccompFilter ?? DEFAULT_SECCOMP_FILTER} has not been built`,
      fix: "npm run tools",
    });
  }
  return problems;
}

/** Runs `options.argv` in a fresh sandbox, streams its output, and cleans everything up afterwards. */
export async function runInSandbox(options: SandboxOptions): Promise<SandboxResult> {
  checkRun(options);
  if (options.signal?.aborted) {
    const sandboxId = options.sandboxId ?? newSandboxId();
    const at = now();
    return {
      sandboxId,
      name: options.name ?? sandboxId,
      baseProfile: SANDBOX_BASE_PROFILE,
      started: false,
      exitCode: null,
      signal: null,
      timedOut: false,
      interrupted: true,
      killed: false,
      durationMs: 0,
      files: Object.fromEntries((options.collect ?? []).map((p) => [p, null])),
      limit: null,
      artifacts: {},
      usage: { memoryBytes: 0, processes: 0, cpuSeconds: 0, diskBytes: null },
      timings: {
        spawnedAt: at,
        readyAt: null,
        handedOverAt: at,
        startedAt: null,
        marks: [],
        exitedAt: null,
        endedAt: at,
        collectedAt: at,
      },
    };
  }
  // The files are written while bwrap and the launcher boot; the launcher waits for the start message.
  const sandbox = await startSandbox(options);
  return sandbox.run(options, { startedForThisRun: true });
}
