// The run: one attempt handed to a started sandbox (its files, then its command over the control
// channel), watched (limits, the wall-clock limit, an abort) and collected, and the output it
// streams until the exit report's byte counts have arrived or bwrap ended.
import type { ApiChannel } from "../api-channel.ts";
import { handOverFiles, readCollected, workRelative } from "./collect.ts";
import { trackRelease, type Confinement } from "./confinement.ts";
import { limitAfterwards, limitWrapper, watch } from "./limits.ts";
import { SandboxProcess } from "./process.ts";
import {
  DEFAULT_COLLECT_MAX_BYTES,
  now,
  SANDBOX_BASE_PROFILE,
  SANDBOX_DEFAULT_PATH,
  SANDBOX_WORK_DIR,
  type SandboxLimitKind,
  type SandboxResult,
  type SandboxRun,
} from "./profile.ts";

const DEFAULT_KILL_GRACE_MS = 5_000;
const DEFAULT_INTERRUPT_GRACE_MS = 30_000;

/** The run options checked and normalised; throws before anything starts. */
export function checkRun(options: SandboxRun) {
  if (options.argv.length === 0) throw new Error("runInSandbox: argv is empty");
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (!/^[^=\0]+$/.test(key) || typeof value !== "string" || value.includes("\0")) {
      throw new Error(`runInSandbox: env ${JSON.stringify(key)} is not a valid environment entry`);
    }
  }
  return {
    files: Object.entries(options.files ?? {}).map(([p, contents]) => [workRelative(p, "files"), contents] as const),
    collect: (options.collect ?? []).map((p) => [p, workRelative(p, "collect")] as const),
  };
}

/** What `run` needs once the command reported its exit: the collected files and the traces of a limit. */
async function inspectAfterExit(
  p: SandboxProcess,
  result: SandboxResult,
  report: { code: number | null; signal: NodeJS.Signals | null },
  collect: readonly (readonly [string, string])[],
  collectMaxBytes: number,
): Promise<{ files: (Buffer | null)[]; limit: SandboxLimitKind | null }> {
  const [files, limit] = await Promise.all([
    Promise.all(collect.map(([, relative]) => readCollected(p.workDir, relative, collectMaxBytes))),
    limitAfterwards(p.confinement, p.workDir, { ...result, exitCode: report.code, signal: report.signal }),
  ]);
  return { files, limit };
}

/**
 * One started sandbox: bwrap and its launcher, booted and waiting for exactly one attempt
 * (`run`), or to be destroyed. Nothing of the attempt is in it before `run`.
 */
export class Sandbox {
  /** Resolves true once the launcher reported it booted, false if the sandbox ended before. */
  readonly ready: Promise<boolean>;
  private readonly process: SandboxProcess;

  /** @internal use `startSandbox`. */
  constructor(
    readonly sandboxId: string,
    readonly name: string,
    hostDir: string,
    workDir: string,
    channel: ApiChannel | undefined,
    args: string[],
    bwrapPath: string,
    confinement: Confinement,
  ) {
    this.process = new SandboxProcess(sandboxId, name, hostDir, workDir, channel, args, bwrapPath, confinement);
    this.ready = this.process.ready;
  }

  /** Resolves once bwrap ended (its whole PID namespace with it). */
  get whenEnded(): Promise<void> {
    return this.process.closed.then(() => undefined);
  }

  /** Whether the sandbox is still running and has not been handed an attempt. */
  get available(): boolean {
    return !this.process.ended && !this.process.used;
  }

  /** bwrap's process id on the host (undefined if it could not be spawned). */
  get pid(): number | undefined {
    return this.process.child.pid;
  }

  /** Ends the sandbox (if still running) and removes its host side. Idempotent. */
  async destroy(): Promise<void> {
    this.process.used = true;
    await this.process.end();
    await this.process.release();
  }

  /**
   * Hands the attempt over: its files into /work, then its command and environment over the
   * control channel. The wall-clock limit counts from here. A sandbox serves one attempt only and
   * is gone (process tree and host directory) when this returns.
   */
  async run(options: SandboxRun, { startedForThisRun = false, releaseLater = false } = {}): Promise<SandboxResult> {
    const p = this.process;
    if (p.used) throw new Error(`sandbox ${this.sandboxId} already served an attempt`);
    p.used = true;
    let checked: ReturnType<typeof checkRun>;
    try {
      checked = checkRun(options);
    } catch (error) {
      await this.destroy();
      throw error;
    }
    const { files, collect } = checked;
    const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    const interruptGraceMs = options.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS;
    const collectMaxBytes = options.collectMaxBytes ?? DEFAULT_COLLECT_MAX_BYTES;
    let handedOverAt = now();
    const result: SandboxResult = {
      sandboxId: this.sandboxId,
      name: this.name,
      baseProfile: SANDBOX_BASE_PROFILE,
      started: false,
      exitCode: null,
      signal: null,
      timedOut: false,
      interrupted: false,
      killed: false,
      durationMs: 0,
      files: Object.fromEntries(collect.map(([p]) => [p, null])),
      limit: null,
      artifacts: {},
      usage: { memoryBytes: 0, processes: 0, cpuSeconds: 0, diskBytes: p.confinement.fsDir !== undefined ? 0 : null },
      timings: {
        spawnedAt: p.spawnedAt,
        readyAt: null,
        handedOverAt,
        startedAt: null,
        marks: p.marks,
        exitedAt: null,
        endedAt: handedOverAt,
        collectedAt: handedOverAt,
      },
    };
    if (options.signal?.aborted) {
      result.interrupted = true;
      await this.destroy();
      return result;
    }

    let outputError: unknown;
    const timers = new Set<NodeJS.Timeout>();
    let finished = false;
    let stopWatching = () => {};
    try {
      await handOverFiles(p.workDir, p.confinement, files, options);

      const onOutput = options.onOutput;
      p.onOutput = (chunk, stream) => {
        if (outputError !== undefined || onOutput === undefined) return;
        try {
          onOutput(chunk, stream);
        } catch (error) {
          outputError = error;
        }
      };
      for (const [chunk, stream] of p.early.splice(0)) p.onOutput(chunk, stream);
      const onMark = options.onMark;
      if (onMark !== undefined) {
        const read = async (relative: string) =>
          readCollected(p.workDir, workRelative(relative, "collect"), collectMaxBytes);
        p.onMark = (name) => onMark(name, read);
      }
      p.onArtifact = options.onArtifact;

      const later = (ms: number, fn: () => void) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!finished) fn();
        }, ms);
        timers.add(timer);
      };
      let terminating = false;
      const terminate = () => {
        if (terminating) return;
        terminating = true;
        p.send({ type: "signal", signal: "SIGTERM" });
        later(killGraceMs, () => {
          result.killed = true;
          p.child.kill("SIGKILL");
        });
      };
      const onAbort = () => {
        result.interrupted = true;
        p.send({ type: "signal", signal: "SIGINT" });
        later(interruptGraceMs, terminate);
      };

      const env = { PATH: SANDBOX_DEFAULT_PATH, HOME: SANDBOX_WORK_DIR, ...options.env };
      handedOverAt = result.timings.handedOverAt = now();
      p.send({
        type: "start",
        argv: options.argv,
        wrapper: limitWrapper(p.confinement.limits),
        env,
        cwd: SANDBOX_WORK_DIR,
        ...(options.evidence ? { evidence: options.evidence } : {}),
        ...(options.unpack ? { unpack: options.unpack } : {}),
      });
      stopWatching = watch(p.child.pid, p.confinement, result, (kind) => {
        // A limit reached: the whole sandbox ends at once (a fork bomb gets no grace period).
        if (result.limit !== null) return;
        result.limit = kind;
        result.killed = true;
        p.child.kill("SIGKILL");
      });
      if (options.timeoutMs !== undefined) {
        later(options.timeoutMs, () => {
          result.timedOut = true;
          terminate();
        });
      }
      options.signal?.addEventListener("abort", onAbort, { once: true });
      // An abort that landed while the files were being written.
      if (options.signal?.aborted && !result.interrupted) onAbort();

      // Once the command reported its exit, what it left is read (and checked for the traces of a
      // limit) while bwrap tears the sandbox down. This returns once bwrap ended or, when the
      // caller releases the sandbox later, as soon as all the output the exit report counts has
      // arrived (the rest of the teardown is then part of the release).
      const afterExit = Promise.race([p.exitReported, p.closed]).then(() =>
        p.report === undefined ? undefined : inspectAfterExit(p, result, p.report, collect, collectMaxBytes),
      );
      afterExit.catch(() => undefined);
      const ended = await Promise.race([p.closed, ...(releaseLater ? [p.outputDrained.then(() => null)] : [])]);
      const [bwrapCode, bwrapSignal] = ended ?? [null, null];
      // Output after this point (of a process the command left behind) is not the attempt's.
      p.onOutput = undefined;
      finished = true;
      stopWatching();
      options.signal?.removeEventListener("abort", onAbort);
      result.timings.endedAt = now();
      result.durationMs = Math.round(result.timings.endedAt - (startedForThisRun ? p.spawnedAt : handedOverAt));
      result.started = p.startedAt !== null;

      if (p.report !== undefined) {
        result.exitCode = p.report.code;
        result.signal = p.report.signal;
        // Whatever arrived before the exit report (an attempt that failed keeps none).
        if (p.report.code === 0 && p.report.signal === null) result.artifacts = { ...p.artifacts };
      } else if (bwrapSignal !== null) {
        result.signal = bwrapSignal;
      } else {
        result.exitCode = bwrapCode;
        result.error =
          p.launcherError ?? `the sandbox ended before the command reported an exit (bwrap status ${bwrapCode})`;
      }
      if (p.launcherError !== undefined) result.error = p.launcherError;
      Object.assign(result.timings, { readyAt: p.readyAt, startedAt: p.startedAt, exitedAt: p.exitedAt });

      // Even after an exit 0: a program that ignores a failed write (tofu show into a full disk)
      // leaves a truncated file behind, which must not pass for a result.
      const inspected = p.report !== undefined ? await afterExit : undefined;
      if (result.limit === null && result.started)
        result.limit = inspected ? inspected.limit : await limitAfterwards(p.confinement, p.workDir, result);
      const read = inspected
        ? inspected.files
        : await Promise.all(collect.map(([, relative]) => readCollected(p.workDir, relative, collectMaxBytes)));
      collect.forEach(([original], index) => (result.files[original] = read[index]));
      result.timings.collectedAt = now();
    } finally {
      finished = true;
      stopWatching();
      for (const timer of timers) clearTimeout(timer);
      // Only after a failure above, or when it returned on its output, is the sandbox still running
      // here. Ending it, unmounting and removing the host side is off the caller's path when it asks
      // so (the attempt's result no longer depends on it); `sandboxReleasesSettled` waits for it.
      if (releaseLater && outputError === undefined) trackRelease(p.end().then(() => p.release()));
      else {
        await p.end();
        await p.release();
      }
    }
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what was caught, as it was
    if (outputError !== undefined) throw outputError;
    return result;
  }
}
