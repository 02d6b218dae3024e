// The first process inside every StackShip sandbox, run with the host's node binary (plain ESM,
// no tsx: nothing but node's own modules exists in the sandbox).
//
//   node sandbox-launcher.mjs [--api-socket PATH --api-port PORT] [--plan-diff-builder PATH]
//
// `wrapper` (prlimit and the sandbox's limits, ending in `--`) is put in front of the command once
// the command itself was found on the env's PATH; a missing command is reported as not started.
//
// It talks to the runner over fd 3 (a socketpair the runner passed through bwrap), one JSON
// object per line:
//   runner -> launcher  {"type":"start","argv":[...],"wrapper":[...]?,"env":{...},"cwd":"/work","evidence":{...}?,"unpack":{...}?}
//                       {"type":"signal","signal":"SIGINT"}        (sent to the command's process group)
//   launcher -> runner  {"type":"ready","at":T}                    (booted: forwarder listening, builder loaded)
//                       {"type":"started","pid":N,"at":T}
//                       {"type":"mark","name":"...","at":T}         (a step boundary, see below)
//                       {"type":"exit","code":N|null,"signal":"SIGx"|null,"at":T,"output":{"stdout":N,"stderr":N}}
//                                                                  (output: the bytes written to stdout and stderr since the start, all sent before this report)
//                       {"type":"error","message":"..."}
// T is wall-clock milliseconds (the host's clock: the sandbox shares it), for the attempt's timings.
// The command and its environment arrive over the channel rather than on bwrap's argv so that
// secrets in them never show up in the host's process list. A sandbox can be started ahead of
// its attempt ("warm"): it boots, reports ready and waits; nothing of the attempt (files, env,
// command) exists in it before the start message. It serves exactly one start.
//
// With --api-socket it is also the loopback forwarder: it listens on 127.0.0.1:PORT and pipes every
// connection to the API channel's Unix socket, from boot on (so before the command starts).
//
// The command gets a pipe as its fd 3: every line written to it is a step name, reported as a
// mark with the time it arrived (the phase scripts mark their steps with a shell builtin, no fork).
//
// With --plan-diff-builder the launcher imports that builder (`plan-diff.mjs`, the same file the
// `stackship-plan-diff` command imports) at boot.
//
// The plan's evidence (a start message's `evidence`, see plan-evidence.ts on the host): once the
// command (the configuration's `tofu init` and `tofu plan`) exited 0, the launcher SIGKILLs every
// other process of the sandbox's PID namespace (anything the configuration left running, also
// outside the command's process group) and checks none is left; then it reads the saved plan,
// runs `show` itself (its stdout, the plan JSON, into a file it made afresh, read back once show
// ended), kills whatever that left running, checks the saved plan is still the bytes it read, builds the
// redacted plan changes from the plan JSON in memory, and sends each artifact to the runner over
// this channel (which only the launcher holds: the command gets its own pipes):
//                       {"type":"artifact","name":"plan.tfplan","size":N,"sha256":"…"}\n followed by exactly N raw bytes
// The runner takes these artifacts only from the channel, never from /work. A plan JSON larger than
// PLAN_DIFF_INLINE_MAX_BYTES is built in a worker thread with its own heap limit, so a plan too big
// for the builder fails that artifact (a line in the log, never quoting the plan), not the attempt.
//
// Its parts are the modules sandbox/launcher-*.mjs, each bound read-only at the same path relative
// to it (sandbox/bwrap-args.ts): launcher-control.mjs (the channel), launcher-output.mjs (the
// forwarded output and its counts), launcher-show.mjs (signals, killing the rest of the sandbox,
// the show), launcher-evidence.mjs, launcher-plan-diff.mjs (with launcher-plan-diff-worker.mjs).
import { spawn } from "node:child_process";
// Synchronous file calls throughout: the launcher is a fresh process whose first asynchronous one
// would first start libuv's thread pool (milliseconds on the attempt's path), and it has nothing
// else to do meanwhile.
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import net from "node:net";
import { pathToFileURL } from "node:url";
import { isMainThread } from "node:worker_threads";
import { unpackConfiguration, warmUpUnpack } from "./sandbox-unpack.mjs";
import { finish, finishReported, now, openControl, send } from "./sandbox/launcher-control.mjs";
import { produceEvidence } from "./sandbox/launcher-evidence.mjs";
import { outputFlushed, outputSettled, writeOutput, written } from "./sandbox/launcher-output.mjs";
import { loadPlanDiffBuilder } from "./sandbox/launcher-plan-diff.mjs";
import { killGroup, sendPendingSignal, setSignalTarget } from "./sandbox/launcher-show.mjs";

function parseArgs(args) {
  const options = { apiSocket: undefined, apiPort: undefined, planDiffBuilder: undefined };
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i], args[i + 1]];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    if (flag === "--api-socket") options.apiSocket = value;
    else if (flag === "--api-port") options.apiPort = Number(value);
    else if (flag === "--plan-diff-builder") options.planDiffBuilder = value;
    else throw new Error(`unknown option ${flag}`);
  }
  if ((options.apiSocket === undefined) !== (options.apiPort === undefined)) {
    throw new Error("--api-socket and --api-port go together");
  }
  return options;
}

function startForwarder(socketPath, port) {
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ path: socketPath, allowHalfOpen: true });
    const teardown = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", teardown);
    upstream.on("error", teardown);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: "127.0.0.1", port, exclusive: true }, () => {
      server.off("error", reject);
      server.unref();
      resolve(server);
    });
  });
}

let child;

let pending = "";
let started = false;

/** Step marks: each line the command writes to its fd 3. */
function readMarks(stream, onMark) {
  let buffered = "";
  stream.setEncoding("utf8");
  stream.on("error", () => {});
  stream.on("data", (data) => {
    const at = now();
    buffered += data;
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const name = buffered.slice(0, newline).trim().slice(0, 64);
      buffered = buffered.slice(newline + 1);
      if (name) {
        send({ type: "mark", name, at });
        onMark(name);
      }
    }
  });
}

/** Whether `name` is an executable file, by itself (with a slash) or in one of PATH's directories. */
function findExecutable(name, searchPath) {
  const candidates = name.includes("/")
    ? [name]
    : String(searchPath ?? "")
        .split(":")
        .filter(Boolean)
        .map((dir) => `${dir}/${name}`);
  return candidates.some((candidate) => {
    try {
      accessSync(candidate, fsConstants.X_OK);
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

async function start(message, booted) {
  const argv = Array.isArray(message.argv) ? message.argv : [];
  if (argv.length === 0 || !argv.every((a) => typeof a === "string")) {
    finish(127, { type: "error", message: "start: argv must be a non-empty list of strings" });
    return;
  }
  if (booted.forwarderError !== undefined) {
    finish(126, { type: "error", message: `API forwarder: ${booted.forwarderError.message}` });
    return;
  }
  const env = message.env && typeof message.env === "object" ? message.env : {};
  const wrapper =
    Array.isArray(message.wrapper) && message.wrapper.every((a) => typeof a === "string") ? message.wrapper : [];
  if (wrapper.length > 0 && !findExecutable(argv[0], env.PATH)) {
    finish(127, { type: "error", message: `${argv[0]}: spawn ${argv[0]} ENOENT` });
    return;
  }
  const command = [...wrapper, ...argv];
  // The configuration, unpacked here rather than by tar processes (sandbox-unpack.mjs); when it is
  // not, the command's script unpacks it itself.
  if (message.unpack && typeof message.unpack === "object") {
    send({ type: "mark", name: "launcher-unpack", at: now() });
    const unpacked = await unpackConfiguration(message.unpack).catch(() => false);
    send({ type: "mark", name: unpacked ? "launcher-unpacked" : "launcher-unpack-skipped", at: now() });
  }
  try {
    child = spawn(command[0], command.slice(1), {
      cwd: typeof message.cwd === "string" ? message.cwd : process.cwd(),
      env,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
      detached: true,
    });
  } catch (error) {
    finish(127, { type: "error", message: `${argv[0]}: ${error.message}` });
    return;
  }
  setSignalTarget(child);
  const outputEnded = Promise.all(
    ["stdout", "stderr"].map(
      (stream) =>
        new Promise((resolve) => {
          child[stream].on("data", (chunk) => writeOutput(stream, chunk));
          child[stream].once("close", resolve);
          child[stream].once("error", resolve);
        }),
    ),
  );
  const evidence = message.evidence && typeof message.evidence === "object" ? message.evidence : undefined;
  if (child.stdio[3]) readMarks(child.stdio[3], () => {});
  child.once("spawn", () => {
    send({ type: "started", pid: child.pid, at: now() });
    sendPendingSignal();
  });
  child.once("error", (error) => {
    if (child.pid === undefined) finish(127, { type: "error", message: `${argv[0]}: ${error.message}` });
  });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- produceEvidence reports failures as exit codes and never rejects
  child.once("exit", async (exitCode, signal) => {
    // The plan's evidence, derived by this launcher alone once the command succeeded.
    const code =
      exitCode === 0 && evidence ? await produceEvidence(evidence, booted, env, wrapper).catch(() => 1) : exitCode;
    // What the command left running ends with it (the sandbox's end would take it a moment later).
    setSignalTarget(child);
    killGroup("SIGKILL");
    await outputSettled(outputEnded);
    // The counts are of bytes that reached the runner's pipes before the report: it takes the
    // attempt's output as whole once exactly these arrived.
    const output = { ...written };
    await outputFlushed();
    finishReported({ type: "exit", code, signal, at: now(), output });
  });
}

/** Starts `sh -c :` as `start` starts the command (see main); resolves once it ended, never rejects. */
function warmUpSpawn() {
  return new Promise((resolve) => {
    try {
      const shell = spawn("sh", ["-c", ":"], { stdio: ["ignore", "pipe", "pipe", "pipe"], detached: true });
      shell.once("error", resolve);
      shell.once("close", resolve);
      // The PATH lookup `start` does before it spawns.
      findExecutable("sh", process.env.PATH);
    } catch {
      resolve();
    }
  });
}

function handle(message, booted) {
  if (message.type === "start" && !started) {
    started = true;
    // The command needs the forwarder; the plan-diff builder is awaited only after the command.
    void booted.forwarder.then(() => start(message, booted));
  } else if (message.type === "signal" && typeof message.signal === "string") {
    killGroup(message.signal);
  }
}

/**
 * Makes this process non-dumpable, so that the command (the same uid) cannot open its
 * /proc/<pid>/mem and rewrite what it derives or sends. Node has no prctl(PR_SET_DUMPABLE); a
 * change of the effective gid sets the flag to fs.suid_dumpable (0 by default), so the launcher,
 * started with an effective gid (nogroup) other than its real one (the sandbox's, sandbox.ts, as
 * root), switches its effective gid to the real one. Without that (no root: one mapped gid)
 * nothing changes.
 */
function becomeNonDumpable() {
  try {
    const [real, effective] = [process.getgid(), process.getegid()];
    if (real !== effective) process.setegid(real);
  } catch {
    // Stays as it was; the sandbox still runs.
  }
}

function main() {
  becomeNonDumpable();
  const control = openControl();
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    finish(125, { type: "error", message: `launcher: ${error.message}` });
    return;
  }
  const booted = { forwarderError: undefined, planDiff: undefined, forwarder: Promise.resolve() };
  if (options.apiSocket !== undefined) {
    booted.forwarder = startForwarder(options.apiSocket, options.apiPort).then(
      () => {},
      (error) => (booted.forwarderError = error),
    );
  }
  if (options.planDiffBuilder !== undefined) booted.planDiff = loadPlanDiffBuilder(options.planDiffBuilder);
  // What an attempt does first costs more the first time in a fresh process (compiling, zlib's and
  // child_process's set-up): the unpacker runs once on a sample in the sandbox's /tmp
  // (sandbox-unpack.mjs) and a shell is started the way the command will be, while the sandbox boots.
  const warmedUp = Promise.all([warmUpUnpack("/tmp/.stackship-warm-up"), warmUpSpawn()]);
  void Promise.all([booted.forwarder, booted.planDiff?.loaded, warmedUp]).then(() =>
    send({ type: "ready", at: now() }),
  );
  control.setEncoding("utf8");
  control.on("data", (data) => {
    pending += data;
    let newline;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (!line.trim()) continue;
      try {
        handle(JSON.parse(line), booted);
      } catch {
        // Ignore garbage; the runner only sends well-formed lines.
      }
    }
  });
  // The runner went away: nobody is left to collect the result, so stop everything.
  control.on("end", () => {
    killGroup("SIGKILL");
    process.exit(137);
  });
}

// Only as a program (in the sandbox): a test runner that loads every file of this folder must not start it.
if (isMainThread && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
