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
//   runner -> launcher  {"type":"start","argv":[...],"wrapper":[...]?,"env":{...},"cwd":"/work","planDiff":{...}?,"unpack":{...}?,"copyBack":[{from,to}]?}
//                       {"type":"signal","signal":"SIGINT"}        (sent to the command's process group)
//   launcher -> runner  {"type":"ready","at":T}                    (booted: forwarder listening, builder loaded)
//                       {"type":"started","pid":N,"at":T}
//                       {"type":"mark","name":"...","at":T}         (a step boundary, see below)
//                       {"type":"exit","code":N|null,"signal":"SIGx"|null,"at":T,"output":{"stdout":N,"stderr":N}}
//                                                                  (output: the bytes written to stdout and stderr since the start)
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
// `stackship-plan-diff` command imports) at boot. A start message with
// `planDiff: {input, output, runId, secretEnv}` then has it build the redacted plan changes from
// `input` after the command exited 0 (or already once it marks `afterMark`, the step after which
// `input` is final, so that the build overlaps the command's last steps), inside this sandbox,
// before the exit is reported: the
// result goes to `output`, a failure only leaves `output` out and says so in the log (never
// quoting the plan). A plan JSON larger than PLAN_DIFF_INLINE_MAX_BYTES is built in a worker
// thread with its own heap limit, so a plan too big for the builder fails the artifact, not the
// attempt.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
// Synchronous file calls throughout: the launcher is a fresh process whose first asynchronous one
// would first start libuv's thread pool (milliseconds on the attempt's path), and it has nothing
// else to do meanwhile.
import { accessSync, constants as fsConstants, copyFileSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import net from "node:net";
import { pathToFileURL } from "node:url";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { unpackConfiguration, warmUpUnpack } from "./sandbox-unpack.mjs";

const CONTROL_FD = 3;
/** The plan-diff worker's heap: about what a separate node process would get by default. */
const PLAN_DIFF_HEAP_MB = 4096;
const PLAN_DIFF_UNAVAILABLE = "StackShip could not build the redacted plan changes of this plan; they are unavailable for this run.";

const now = () => performance.timeOrigin + performance.now();

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

/** The control channel, opened by `main`. */
let control;

function send(message) {
  control.write(`${JSON.stringify(message)}\n`);
}

function finish(code, message) {
  // Exit only once the runner has the last message.
  control.end(`${JSON.stringify(message)}\n`, () => process.exit(code));
  setTimeout(() => process.exit(code), 1000).unref();
}

/**
 * After the command's exit report: the runner takes the report's status, not this process's, so
 * nothing is left to do but end. A SIGKILL of itself ends the process (and so the sandbox) a few
 * milliseconds sooner than process.exit, which first runs the exit handlers and tears down any
 * worker thread.
 * Everything this process wrote went out synchronously (stdout is a pipe) or is flushed by then.
 */
function finishReported(message) {
  control.end(`${JSON.stringify(message)}\n`, () => process.kill(process.pid, "SIGKILL"));
  setTimeout(() => process.kill(process.pid, "SIGKILL"), 1000).unref();
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

/**
 * The plan-diff builder, imported into this thread at boot (a worker thread costs a second node
 * environment, about as much CPU as the launcher itself). A plan JSON of up to
 * PLAN_DIFF_INLINE_MAX_BYTES is built here: parsing and redacting it takes a small multiple of
 * its size, nowhere near this thread's heap limit. A larger one is built in a worker started for
 * it, with its own heap limit, so that a plan too big for the builder fails the artifact, not the
 * attempt.
 */
const PLAN_DIFF_INLINE_MAX_BYTES = 8 * 1024 * 1024;

/** Loads the builder at boot; `loaded` resolves (never rejects) once it is loaded or failed to. */
function loadPlanDiffBuilder(builder) {
  const state = { builder, module: import(builder) };
  state.module.catch(() => {});
  state.loaded = state.module.then(
    (module) => warmUp(module),
    () => {},
  );
  return state;
}

/**
 * A plan of every kind of change, built once at boot: each sandbox's launcher is a fresh process,
 * and the builder's functions are compiled on their first call, which would otherwise be the
 * attempt's own build (a few milliseconds on the plan's critical path for a small plan).
 */
function warmUp(module) {
  const change = (actions, before, after, sensitive) => ({
    actions,
    before,
    after,
    after_unknown: after ? { id: true } : {},
    before_sensitive: before ? sensitive : false,
    after_sensitive: after ? sensitive : false,
  });
  const value = { name: "warm-up", tags: { a: "1", b: "2" }, list: [1, 2], secret: "warm-up-secret", nested: [{ k: "v" }] };
  const entry = (name, actions, before, after) => ({
    address: `terraform_data.${name}`,
    mode: "managed",
    type: "terraform_data",
    name,
    provider_name: "terraform.io/builtin/terraform",
    change: change(actions, before, after, { secret: true }),
  });
  const plan = {
    format_version: "1.2",
    errored: false,
    resource_changes: [
      entry("create", ["create"], null, value),
      entry("update", ["update"], value, { ...value, name: "warm-up-2", list: [1] }),
      entry("replace", ["delete", "create"], value, value),
      entry("delete", ["delete"], value, null),
      entry("noop", ["no-op"], value, value),
    ],
    output_changes: { o: { actions: ["update"], before: "a", after: "b", after_unknown: false, before_sensitive: false, after_sensitive: true } },
  };
  try {
    module.buildPlanDiff(plan, { runId: null, knownSecrets: ["warm-up-known"], consume: true });
  } catch {
    // Only a warm-up: the attempt's own build reports whatever is wrong.
  }
}

/**
 * One build from the plan JSON in `input`: `{json, sourceSha256}` (the SHA-256 of the bytes it
 * was built from) or `{error}`. Errors other than the
 * builder's own input errors are reported without their message, which could quote the plan.
 * Runs in this thread, or as the whole program of a worker (below).
 */
async function buildFromFile(loaded, { input, runId, knownSecrets }) {
  let builder;
  try {
    builder = await loaded;
  } catch {
    return { error: "the builder could not be loaded" };
  }
  let plan;
  let sourceSha256;
  try {
    const bytes = readFileSync(input);
    sourceSha256 = createHash("sha256").update(bytes).digest("hex");
    plan = JSON.parse(bytes.toString("utf8"));
  } catch {
    return { error: "the plan JSON could not be read" };
  }
  try {
    const { json } = builder.buildPlanDiff(plan, { runId, knownSecrets, consume: true });
    return { json, sourceSha256 };
  } catch (error) {
    return { error: error instanceof builder.PlanDiffInputError ? error.message : "could not build the artifact" };
  }
}

/** The worker's program: this module again, building one request with the builder it loads itself. */
async function planDiffWorkerMain() {
  const { builder, request } = workerData;
  parentPort.postMessage(await buildFromFile(import(builder), request));
}

/** Builds one request in a worker of its own (heap limit PLAN_DIFF_HEAP_MB); a worker that dies fails only the artifact. */
function buildInWorker(builder, request) {
  return new Promise((resolve) => {
    let worker;
    try {
      worker = new Worker(new URL(import.meta.url), { workerData: { planDiffWorker: true, builder, request }, resourceLimits: { maxOldGenerationSizeMb: PLAN_DIFF_HEAP_MB } });
    } catch {
      resolve({ error: "the builder is not running" });
      return;
    }
    worker.unref();
    const done = (message) => {
      worker.removeAllListeners();
      worker.on("error", () => {});
      void worker.terminate();
      resolve(message);
    };
    worker.once("message", done);
    worker.once("error", () => done({ error: "could not build the artifact" }));
    worker.once("exit", () => done({ error: "could not build the artifact" }));
  });
}

/**
 * After the command exited 0: copies each `from` that is a file (following symlinks, as `[ -f ]`
 * and `cp` do) to `to`; false, with a line on stderr, when one could not be copied.
 */
function copyBack(copies) {
  for (const { from, to } of copies) {
    try {
      if (!statSync(String(from), { throwIfNoEntry: false })?.isFile()) continue;
      copyFileSync(String(from), String(to));
    } catch (error) {
      writeOutput("stderr", `stackship: could not copy ${String(from)}: ${error.code ?? error.message}\n`);
      return false;
    }
  }
  return true;
}

/**
 * Builds `output` from `input`; the log gets a line (never quoting the plan) when it cannot.
 * Resolves the SHA-256 of the plan JSON bytes it was built from (the exit report carries it, so
 * the runner can tell whether they are the plan JSON it stores), or undefined without an artifact.
 */
async function buildPlanDiff(planDiff, request, env) {
  const secretEnv = Array.isArray(request.secretEnv) ? request.secretEnv : [];
  const knownSecrets = secretEnv.map((name) => env[name]).filter((value) => typeof value === "string" && value !== "");
  const output = String(request.output);
  const build = { input: String(request.input), runId: typeof request.runId === "string" ? request.runId : null, knownSecrets };
  let outcome;
  if (!planDiff) outcome = { error: "this sandbox has no plan-diff builder" };
  else {
    // Only a regular file (a device such as /dev/zero would never end).
    let size;
    try {
      const stats = statSync(build.input);
      size = stats.isFile() ? stats.size : undefined;
    } catch {
      size = undefined;
    }
    if (size === undefined) outcome = { error: "the plan JSON could not be read" };
    else outcome = size <= PLAN_DIFF_INLINE_MAX_BYTES ? await buildFromFile(planDiff.module, build) : await buildInWorker(planDiff.builder, build);
  }
  if (typeof outcome?.json === "string") {
    try {
      writeFileSync(`${output}.partial`, outcome.json, { mode: 0o600 });
      renameSync(`${output}.partial`, output);
      return typeof outcome.sourceSha256 === "string" ? outcome.sourceSha256 : undefined;
    } catch {
      rmSync(`${output}.partial`, { force: true });
      outcome = { error: "could not write the artifact" };
    }
  }
  const reason = typeof outcome?.error === "string" ? outcome.error : "could not build the artifact";
  writeOutput("stdout", `stackship-plan-diff: ${reason}\n${PLAN_DIFF_UNAVAILABLE}\n`);
  return undefined;
}

let child;

/**
 * Everything this process writes to its stdout and stderr once it started the command: the
 * command's output (forwarded from the command's own pipes) and the launcher's lines. The exit
 * report gives the byte counts, so that the runner knows when it has all of the attempt's output
 * without waiting for the sandbox to end.
 */
const written = { stdout: 0, stderr: 0 };
function writeOutput(stream, chunk) {
  written[stream] += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.length;
  (stream === "stdout" ? process.stdout : process.stderr).write(chunk);
}
/** How long the launcher waits, after the command exited, for the last of its output (a process it left behind may hold its pipes). */
const OUTPUT_DRAIN_MS = 500;
let pending = "";
let started = false;

/** A signal that came before the command was started (while the configuration was unpacked): sent to it once it is. */
let pendingSignal;

function killGroup(signal) {
  if (!child || child.pid === undefined) {
    pendingSignal = signal;
    return;
  }
  try {
    // The command leads its own process group (detached), so `sh -c 'tofu …'` and tofu both get it.
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

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
  const wrapper = Array.isArray(message.wrapper) && message.wrapper.every((a) => typeof a === "string") ? message.wrapper : [];
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
  const planDiff = message.planDiff && typeof message.planDiff === "object" ? message.planDiff : undefined;
  let planDiffBuilt;
  const buildPlanDiffOnce = () => {
    if (planDiffBuilt === undefined) {
      send({ type: "mark", name: "plan-diff", at: now() });
      planDiffBuilt = buildPlanDiff(booted.planDiff, planDiff, env);
    }
    return planDiffBuilt;
  };
  if (child.stdio[3]) readMarks(child.stdio[3], (name) => planDiff && typeof planDiff.afterMark === "string" && name === planDiff.afterMark && void buildPlanDiffOnce());
  child.once("spawn", () => {
    send({ type: "started", pid: child.pid, at: now() });
    if (pendingSignal !== undefined) killGroup(pendingSignal);
  });
  child.once("error", (error) => {
    if (child.pid === undefined) finish(127, { type: "error", message: `${argv[0]}: ${error.message}` });
  });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- buildPlanDiff reports failures as outcomes and never rejects
  child.once("exit", async (exitCode, signal) => {
    // Files the runner collects from where the command left them (what `cp` did in the script).
    const code = exitCode === 0 && Array.isArray(message.copyBack) && !copyBack(message.copyBack) ? 1 : exitCode;
    const planDiffSource = code === 0 && planDiff ? await buildPlanDiffOnce() : undefined;
    // What the command left running ends with it (the sandbox's end would take it a moment later).
    killGroup("SIGKILL");
    await Promise.race([outputEnded, new Promise((resolve) => setTimeout(resolve, OUTPUT_DRAIN_MS))]);
    finishReported({ type: "exit", code, signal, at: now(), output: { ...written }, ...(planDiffSource ? { planDiffSource } : {}) });
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

function main() {
  control = new net.Socket({ fd: CONTROL_FD, readable: true, writable: true });
  control.on("error", () => {});
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
  void Promise.all([booted.forwarder, booted.planDiff?.loaded, warmedUp]).then(() => send({ type: "ready", at: now() }));
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
// In a worker of its own (buildInWorker) it builds one plan-diff instead.
if (!isMainThread && workerData?.planDiffWorker === true) void planDiffWorkerMain();
else if (isMainThread && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
