import { execFile, spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Runs the host tools a sandbox needs (mount and umount of its tmpfs) from a small long-lived
 * helper process (host-tools-child.mjs), so that forking each does not block the runner's event
 * loop: Node forks synchronously, and a fork copies the page tables of the whole (large) runner
 * process, ~5 ms each here, which would land in the middle of a phase's work. The helper is
 * started on first use and again after it ended; should it not start, the tool runs directly.
 */
const HOST_TOOLS_PATH = "/usr/sbin:/usr/bin:/sbin:/bin";
const CHILD = fileURLToPath(new URL("./host-tools-child.mjs", import.meta.url));

interface Pending {
  resolve: () => void;
  reject: (error: Error) => void;
  label: string;
}

class HostTools {
  private child: ChildProcess | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  run(command: string, args: string[]): Promise<void> {
    const child = this.helper();
    const label = `${command} ${args.join(" ")}`;
    if (child === undefined) return runDirectly(command, args);
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, label });
      this.hold(child);
      child.stdin!.write(`${JSON.stringify({ id, command, args })}\n`);
    });
  }

  /** Keeps the event loop alive only while a tool runs. */
  private hold(child: ChildProcess): void {
    for (const stream of [child.stdin, child.stdout] as unknown as { ref(): void; unref(): void }[]) {
      if (this.pending.size > 0) stream.ref();
      else stream.unref();
    }
    if (this.pending.size > 0) child.ref();
    else child.unref();
  }

  private helper(): ChildProcess | undefined {
    if (this.child !== undefined) return this.child;
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [CHILD], { stdio: ["pipe", "pipe", "ignore"], env: { PATH: HOST_TOOLS_PATH } });
    } catch {
      return undefined;
    }
    this.child = child;
    let buffered = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (data: string) => {
      buffered += data;
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        let answer: { id?: unknown; ok?: unknown; message?: unknown };
        try {
          answer = JSON.parse(line) as typeof answer;
        } catch {
          continue;
        }
        const request = typeof answer.id === "number" ? this.pending.get(answer.id) : undefined;
        if (request === undefined) continue;
        this.pending.delete(answer.id as number);
        if (answer.ok === true) request.resolve();
        else request.reject(new Error(`${request.label}: ${String(answer.message)}`));
      }
      this.hold(child);
    });
    const ended = () => {
      if (this.child !== child) return;
      this.child = undefined;
      for (const request of this.pending.values())
        request.reject(new Error(`${request.label}: the host tools helper ended`));
      this.pending.clear();
    };
    child.once("error", ended);
    child.once("exit", ended);
    child.stdin!.on("error", () => undefined);
    this.hold(child);
    return child;
  }
}

function runDirectly(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { env: { PATH: HOST_TOOLS_PATH } }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(" ")}: ${String(stderr).trim() || error.message}`));
      else resolve();
    });
  });
}

const tools = new HostTools();

/** Runs `command` (a host tool found on the system PATH) and resolves once it exited 0; rejects with its stderr otherwise. */
export function runHostTool(command: string, args: string[]): Promise<void> {
  return tools.run(command, args);
}
