// One sandbox's bwrap process on the host and the launcher's protocol: the control channel (ready,
// started, marks, artifacts, the exit report with its output byte counts, errors), the command's
// output as it arrives, and the sandbox's end and release. `Sandbox` (run.ts) drives one attempt
// through it.
import { spawn } from "node:child_process";
import { closeSync } from "node:fs";
import { rm } from "node:fs/promises";
import type net from "node:net";
import type { ApiChannel } from "../api-channel.ts";
import { ControlReader } from "../plan-evidence.ts";
import { isRunning, processIdentity, unmountSandboxFs, uidsInUse, type Confinement } from "./confinement.ts";
import { DEFAULT_COLLECT_MAX_BYTES, now, type OutputStream } from "./profile.ts";

/** bwrap passes inherited descriptors through; the launcher's control channel is the fourth stdio slot. */
const CONTROL_FD = 3;

type ControlMessage = {
  type?: unknown;
  code?: unknown;
  signal?: unknown;
  message?: unknown;
  name?: unknown;
  at?: unknown;
  output?: unknown;
};

/**
 * bwrap and its launcher, from the spawn to the removal of the host side; its state is read and
 * set by `Sandbox` (run.ts), the one attempt's driver.
 */
export class SandboxProcess {
  /** Resolves true once the launcher reported it booted, false if the sandbox ended before. */
  readonly ready: Promise<boolean>;
  readonly child: ReturnType<typeof spawn>;
  readonly control: net.Socket;
  readonly closed: Promise<[number | null, NodeJS.Signals | null]>;
  ended = false;
  used = false;
  cleanup: Promise<void> | undefined;
  readonly spawnedAt = now();
  readyAt: number | null = null;
  startedAt: number | null = null;
  exitedAt: number | null = null;
  readonly marks: { name: string; at: number }[] = [];
  /** The namespace's init process on the host (bwrap's child), learnt once the launcher is up. */
  innerInit: { pid: number; startTime: string } | undefined;
  report: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** The artifacts the launcher sent (plan-evidence.ts), and who hears of each as it arrives. */
  readonly artifacts: Record<string, Buffer> = {};
  onArtifact: ((name: string, bytes: Buffer) => void) | undefined;
  /** Resolves when the launcher reports the command's exit (never if it does not). */
  readonly exitReported: Promise<void>;
  markExitReported: () => void = () => {};
  /** Bytes received on bwrap's stdout and stderr, and what the exit report says the launcher wrote there. */
  readonly received = { stdout: 0, stderr: 0 };
  reportedOutput: { stdout: number; stderr: number } | undefined;
  /** Resolves once all the output the exit report counts has arrived (never if it does not add up). */
  readonly outputDrained: Promise<void>;
  markOutputDrained: () => void = () => {};
  launcherError: string | undefined;
  onOutput: ((chunk: Buffer, stream: OutputStream) => void) | undefined;
  onMark: ((name: string) => void) | undefined;
  /** Output before the handoff (the launcher prints none; kept for the attempt's log should it). */
  early: [Buffer, OutputStream][] = [];

  constructor(
    readonly sandboxId: string,
    readonly name: string,
    readonly hostDir: string,
    readonly workDir: string,
    readonly channel: ApiChannel | undefined,
    args: string[],
    bwrapPath: string,
    readonly confinement: Confinement,
  ) {
    this.child = spawn(bwrapPath, args, {
      stdio: ["ignore", "pipe", "pipe", "pipe", confinement.seccompFd ?? "ignore"],
      env: {},
    });
    if (confinement.seccompFd !== undefined) closeSync(confinement.seccompFd);
    this.control = this.child.stdio[CONTROL_FD] as net.Socket;
    const deliver = (stream: OutputStream) => (chunk: Buffer) => {
      this.received[stream] += chunk.length;
      this.checkDrained();
      if (this.onOutput) this.onOutput(chunk, stream);
      else if (!this.used) this.early.push([chunk, stream]);
    };
    this.child.stdout!.on("data", deliver("stdout"));
    this.child.stderr!.on("data", deliver("stderr"));
    let markReady: (ready: boolean) => void = () => {};
    this.exitReported = new Promise((resolve) => (this.markExitReported = resolve));
    this.outputDrained = new Promise((resolve) => (this.markOutputDrained = resolve));
    this.ready = new Promise((resolve) => (markReady = resolve));
    this.closed = new Promise((resolve) => {
      this.child.once("error", (error) => {
        this.launcherError ??= `bwrap: ${error.message}`;
        resolve([null, null]);
      });
      this.child.once("close", (code, signal) => resolve([code, signal]));
    }).then(async (status) => {
      await this.innerInitGone();
      this.ended = true;
      markReady(false);
      return status as [number | null, NodeJS.Signals | null];
    });
    const reader = new ControlReader(
      DEFAULT_COLLECT_MAX_BYTES,
      (item) => {
        if (item.kind === "artifact") {
          // Only before the exit report: the evidence is what the launcher sent for this attempt.
          if (this.report !== undefined || item.name in this.artifacts) return;
          this.artifacts[item.name] = item.bytes;
          this.onArtifact?.(item.name, item.bytes);
          return;
        }
        const message = item.message as ControlMessage;
        const at = typeof message.at === "number" ? message.at : now();
        if (message.type === "ready") {
          this.readyAt = at;
          this.innerInit = processIdentity(this.child.pid);
          markReady(true);
        } else if (message.type === "started") this.startedAt = at;
        else if (message.type === "mark" && typeof message.name === "string") {
          this.marks.push({ name: message.name, at });
          this.onMark?.(message.name);
        } else if (message.type === "exit") {
          this.exitedAt = at;
          this.report = {
            code: typeof message.code === "number" ? message.code : null,
            signal: typeof message.signal === "string" ? (message.signal as NodeJS.Signals) : null,
          };
          const output = message.output as { stdout?: unknown; stderr?: unknown } | undefined;
          if (typeof output?.stdout === "number" && typeof output.stderr === "number")
            this.reportedOutput = { stdout: output.stdout, stderr: output.stderr };
          this.markExitReported();
          this.checkDrained();
        } else if (message.type === "error") this.launcherError = String(message.message);
      },
      (problem) => (this.launcherError ??= `the launcher's control channel: ${problem}`),
    );
    this.control.on("error", () => {});
    this.control.on("data", (data: Buffer) => reader.push(data));
  }

  /** Exactly the reported bytes arrived on both streams (more than reported: something else wrote there; only bwrap's end says then). */
  checkDrained(): void {
    const expected = this.reportedOutput;
    if (expected !== undefined && this.received.stdout === expected.stdout && this.received.stderr === expected.stderr)
      this.markOutputDrained();
  }

  /**
   * bwrap can end before its inner init (the PID namespace's pid 1, which reaps everything in the
   * namespace) has finished exiting: wait for that too, so that nothing of the sandbox runs once it
   * counts as ended. Bounded; a zombie (dead, waiting for the host's init to reap it) counts as gone.
   */
  async innerInitGone(): Promise<void> {
    const inner = this.innerInit;
    if (inner === undefined) return;
    const deadline = performance.now() + 2_000;
    while (isRunning(inner) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  send(message: object): void {
    if (!this.control.destroyed && this.control.writable) this.control.write(`${JSON.stringify(message)}\n`);
  }

  /**
   * Ends a sandbox that is still running: closing the control channel makes the launcher kill
   * its command's process group and exit, so bwrap reaps the whole PID namespace before it ends
   * (a SIGKILL of bwrap would leave its inner init to be reaped by the host's); SIGKILL only if
   * that does not happen within a second.
   */
  async end(): Promise<void> {
    if (this.ended) return;
    this.control.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 1_000);
    await this.closed;
    clearTimeout(timer);
  }

  release(): Promise<void> {
    this.cleanup ??= (async () => {
      this.control.destroy();
      await this.channel?.close();
      if (this.confinement.fsDir !== undefined) await unmountSandboxFs(this.confinement.fsDir);
      await rm(this.hostDir, { recursive: true, force: true });
      if (this.confinement.uid !== undefined) uidsInUse.delete(this.confinement.uid);
    })();
    return this.cleanup;
  }
}
