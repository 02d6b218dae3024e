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
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
// Synchronous file calls throughout: the launcher is a fresh process whose first asynchronous one
// would first start libuv's thread pool (milliseconds on the attempt's path), and it has nothing
// else to do meanwhile.
import { accessSync, closeSync, constants as fsConstants, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
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
 * worker thread. The caller waits for `outputFlushed` first: a SIGKILL drops whatever this
 * process still queues for its stdout and stderr.
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
  const state = { builder, module: import(builder), redactedPlan: import(builder.replace(/plan-diff\.mjs$/, "redacted-plan.mjs")) };
  state.module.catch(() => {});
  state.redactedPlan.catch(() => {});
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
 * One build from the plan JSON `bytes`: `{json}` or `{error}`. Errors other than the builder's own
 * input errors are reported without their message, which could quote the plan.
 * Runs in this thread, or as the whole program of a worker (below).
 */
async function buildFromBytes(loaded, { bytes, runId, knownSecrets }) {
  let builder;
  try {
    builder = await loaded;
  } catch {
    return { error: "the builder could not be loaded" };
  }
  let plan;
  try {
    plan = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch {
    return { error: "the plan JSON could not be read" };
  }
  try {
    const { json } = builder.buildPlanDiff(plan, { runId, knownSecrets, consume: true });
    return { json };
  } catch (error) {
    return { error: error instanceof builder.PlanDiffInputError ? error.message : "could not build the artifact" };
  }
}

/** The worker's program: this module again, building one request with the builder it loads itself. */
async function planDiffWorkerMain() {
  const { builder, request } = workerData;
  parentPort.postMessage(await buildFromBytes(import(builder), request));
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
 * The redacted plan changes of the plan JSON `bytes` (in memory: the show's own output), or
 * undefined with a line in the log (never quoting the plan) when they cannot be built.
 */
async function buildPlanDiff(planDiff, request, bytes, env) {
  const secretEnv = Array.isArray(request?.secretEnv) ? request.secretEnv : [];
  const knownSecrets = secretEnv.map((name) => env[name]).filter((value) => typeof value === "string" && value !== "");
  const build = { bytes, runId: typeof request?.runId === "string" ? request.runId : null, knownSecrets };
  let outcome;
  if (!planDiff) outcome = { error: "this sandbox has no plan-diff builder" };
  else outcome = bytes.length <= PLAN_DIFF_INLINE_MAX_BYTES ? await buildFromBytes(planDiff.module, build) : await buildInWorker(planDiff.builder, build);
  if (typeof outcome?.json === "string") return Buffer.from(outcome.json, "utf8");
  const reason = typeof outcome?.error === "string" ? outcome.error : "could not build the artifact";
  writeOutput("stdout", `stackship-plan-diff: ${reason}\n${PLAN_DIFF_UNAVAILABLE}\n`);
  return undefined;
}

const REDACTED_PLAN_UNAVAILABLE = "StackShip could not build the redacted plan for the CLI (json-output-redacted); it is unavailable for this run.";

/**
 * The redacted plan the CLI renders itself (redacted-plan.mjs): built from the plan JSON `bytes`
 * and the provider schemas of `request.schemas` (`tofu providers schema -json`, run like show,
 * with nothing else alive), when `request.always` or the plan imports or generates configuration
 * (`-generate-config-out` needs it without structured output). Undefined with a line in the log
 * (never quoting the plan) when it cannot be built.
 */
async function buildRedactedPlan(planDiff, request, bytes, env, wrapper, cwd) {
  let plan;
  try {
    plan = JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
  const imports = (Array.isArray(plan?.resource_changes) ? plan.resource_changes : []).some(
    (r) => r?.change?.importing !== undefined || typeof r?.change?.generated_config === "string",
  );
  if (request.always !== true && !imports) return undefined;
  const unavailable = (reason) => {
    writeOutput("stdout", `stackship-redacted-plan: ${reason}\n${REDACTED_PLAN_UNAVAILABLE}\n`);
    return undefined;
  };
  const command = Array.isArray(request.schemas) && request.schemas.length > 0 && request.schemas.every((a) => typeof a === "string") ? request.schemas : undefined;
  if (!planDiff || command === undefined) return unavailable("this sandbox has no builder");
  let builder;
  try {
    builder = await planDiff.redactedPlan;
  } catch {
    return unavailable("the builder could not be loaded");
  }
  const shown = await runShow([...wrapper, ...command], cwd, env, "schemas.json");
  if (shown.code !== 0 || shown.signal !== null || shown.stdout === undefined) return unavailable("could not read the provider schemas");
  const secretEnv = Array.isArray(request.secretEnv) ? request.secretEnv : [];
  const knownSecrets = secretEnv.map((name) => env[name]).filter((value) => typeof value === "string" && value !== "");
  try {
    const schemas = JSON.parse(shown.stdout.toString("utf8"));
    return Buffer.from(builder.buildRedactedPlan(plan, schemas, { knownSecrets }), "utf8");
  } catch (error) {
    return unavailable(error instanceof builder.RedactedPlanInputError ? error.message : "could not build the artifact");
  }
}

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

/** One artifact to the runner over the control channel: a header line, then exactly its bytes. */
function sendArtifact(name, bytes) {
  control.write(`${JSON.stringify({ type: "artifact", name, size: bytes.length, sha256: sha256(bytes) })}\n`);
  if (bytes.length > 0) control.write(bytes);
}

/**
 * Whether this process runs where `killOthers` may signal everything it can: the sandbox's own PID
 * namespace, whose pid 1 is bwrap and this launcher's parent. (kill(-1) anywhere else would reach
 * every process of its user.)
 */
function inSandboxPidNamespace() {
  try {
    const init = readFileSync("/proc/1/cmdline", "latin1").split("\0")[0];
    return process.ppid === 1 && process.pid !== 1 && /(^|\/)bwrap$/.test(init);
  } catch {
    return false;
  }
}

/** The processes of this PID namespace other than its init and this launcher that are still alive (zombies are dead). */
function otherLiveProcesses() {
  const alive = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === 1 || pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "latin1");
      const state = stat.charAt(stat.lastIndexOf(")") + 2);
      if (state !== "Z" && state !== "X") alive.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return alive;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * SIGKILLs every other process of the sandbox (kill(-1): all this uid may signal in this PID
 * namespace, which is the sandbox's whole tree, whatever its process group or session) until none
 * is left alive; false when that cannot be done or does not succeed (the evidence is then refused).
 */
function killOthers() {
  if (!inSandboxPidNamespace()) return false;
  for (let round = 0; round < 400; round++) {
    try {
      process.kill(-1, "SIGKILL");
    } catch {
      // ESRCH: nothing left to signal.
    }
    if (otherLiveProcesses().length === 0) return true;
    Atomics.wait(pause, 0, 0, 5);
  }
  return false;
}

/** Largest artifact the launcher sends (the runner's collect limit applies too). */
const EVIDENCE_MAX_BYTES = 256 * 1024 * 1024;

/** A regular file under /work (after following symlinks) of at most EVIDENCE_MAX_BYTES, or undefined. */
function readEvidenceFile(file) {
  try {
    const real = realpathSync(String(file));
    if (!real.startsWith("/work/")) return undefined;
    const stats = statSync(real);
    if (!stats.isFile() || stats.size > EVIDENCE_MAX_BYTES) return undefined;
    return readFileSync(real);
  } catch {
    return undefined;
  }
}

/** Where the show's output is spooled: made afresh by the launcher once nothing else is alive. */
const SHOW_SPOOL_DIR = "/work/.stackship-evidence";

/**
 * Runs the evidence's `show` command (under the sandbox's limit wrapper) with nothing else alive in
 * the sandbox; its stdout goes to a file the launcher made afresh (so that the plan JSON counts
 * against the sandbox's disk and file-size limits, as any file the run writes), its stderr to the
 * log. Once it exited, whatever it started is killed and the file is read into memory. Resolves
 * `{code, signal, stdout}` (stdout undefined when there is no complete output).
 */
function runShow(command, cwd, env, spool = "plan.json") {
  return new Promise((resolve) => {
    let show;
    let fd;
    try {
      if (spool === "plan.json") {
        rmSync(SHOW_SPOOL_DIR, { recursive: true, force: true });
        mkdirSync(SHOW_SPOOL_DIR, { mode: 0o700 });
      }
      fd = openSync(`${SHOW_SPOOL_DIR}/${spool}`, "wx", 0o600);
      show = spawn(command[0], command.slice(1), { cwd, env, stdio: ["ignore", fd, "pipe"], detached: true });
    } catch {
      resolve({ code: 127, signal: null, stdout: undefined });
      return;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    signalTarget = show;
    show.stderr.on("data", (chunk) => writeOutput("stderr", chunk));
    show.once("error", () => resolve({ code: 127, signal: null, stdout: undefined }));
    show.once("exit", (code, signal) => {
      // Whatever show started (its providers) ends before its output counts.
      const killed = killOthers();
      const closed = new Promise((done) => (show.stderr.closed ? done() : show.stderr.once("close", done)));
      void outputSettled(closed).then(() => resolve({ code: killed ? code : 1, signal, stdout: killed ? readEvidenceFile(`${SHOW_SPOOL_DIR}/${spool}`) : undefined }));
    });
  });
}

/**
 * After the command exited 0: the plan's evidence, derived by this launcher alone (see the header)
 * and sent over the control channel. Resolves the exit code to report (0, or the failing step's).
 */
async function produceEvidence(evidence, booted, env, wrapper) {
  send({ type: "mark", name: "evidence", at: now() });
  const fail = (line, code = 1) => {
    writeOutput("stderr", `stackship: ${line}\n`);
    return code;
  };
  if (!killOthers()) return fail("could not end every other process of the sandbox after the plan; the plan is not used.");
  const planFile = readEvidenceFile(evidence.plan);
  if (planFile === undefined) return fail("the saved plan is missing or not a regular file.");
  const show = Array.isArray(evidence.show) && evidence.show.length > 0 && evidence.show.every((a) => typeof a === "string") ? evidence.show : undefined;
  if (show === undefined) return fail("the evidence has no show command.");
  send({ type: "mark", name: "show", at: now() });
  const shown = await runShow([...wrapper, ...show], typeof evidence.cwd === "string" ? evidence.cwd : "/work", env);
  if (shown.code !== 0 || shown.signal !== null || shown.stdout === undefined)
    return fail("could not show the saved plan as JSON.", shown.code === 0 || shown.code === null ? 1 : shown.code);
  // Read again with nothing else alive: it must still be the plan that was shown.
  const again = readEvidenceFile(evidence.plan);
  if (again === undefined || !again.equals(planFile)) return fail("the saved plan changed while it was shown; the plan is not used.");
  sendArtifact("plan.tfplan", planFile);
  sendArtifact("plan.json", shown.stdout);
  send({ type: "mark", name: "plan-diff", at: now() });
  if (evidence.planDiff && typeof evidence.planDiff === "object") {
    const planDiff = await buildPlanDiff(booted.planDiff, evidence.planDiff, shown.stdout, env);
    if (planDiff !== undefined) sendArtifact("plan-diff.json", planDiff);
  }
  if (evidence.redactedPlan && typeof evidence.redactedPlan === "object") {
    send({ type: "mark", name: "redacted-plan", at: now() });
    const redacted = await buildRedactedPlan(booted.planDiff, evidence.redactedPlan, shown.stdout, env, wrapper, typeof evidence.cwd === "string" ? evidence.cwd : "/work");
    if (redacted !== undefined) sendArtifact("plan-redacted.json", redacted);
  }
  for (const { name, from } of Array.isArray(evidence.files) ? evidence.files : []) {
    if (typeof name !== "string" || typeof from !== "string") continue;
    const bytes = readEvidenceFile(from);
    if (bytes !== undefined) sendArtifact(name, bytes);
  }
  return 0;
}

let child;
/** The process group that signals reach: the command's, then the evidence's show while it runs. */
let signalTarget;

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
/**
 * Resolves once everything written to the launcher's stdout and stderr has left this process.
 * Writes to a pipe are asynchronous in node: when the runner reads slower than the command wrote
 * (a loaded host), they queue here, and the SIGKILL of `finishReported` would drop them while the
 * exit report still counted them. An empty write completes after every write queued before it.
 */
function outputFlushed() {
  return Promise.all(
    [process.stdout, process.stderr].map(
      (stream) =>
        new Promise((resolve) => {
          if (stream.writableLength === 0 || stream.destroyed) resolve();
          else stream.write("", () => resolve());
        }),
    ),
  );
}
/** How long the launcher waits, after the command exited, for the last of its output (a process it left behind may hold its pipes). */
const OUTPUT_DRAIN_MS = 500;
/** The longest it waits in all: a process left behind that keeps writing does not hold the exit report back for ever. */
const OUTPUT_DRAIN_MAX_MS = 10_000;

/**
 * Resolves once `ended` does, or once a whole OUTPUT_DRAIN_MS window went by with no output
 * forwarded (at most OUTPUT_DRAIN_MAX_MS in all). Each window is judged in the loop's check phase,
 * after its poll phase, so that output already waiting in the pipes when a launcher starved of CPU
 * wakes up is read (and opens a new window) before the window counts as quiet: a plain timer fires
 * before the poll and cut a long output short on a loaded machine.
 */
function outputSettled(ended) {
  return new Promise((resolve) => {
    const deadline = performance.now() + OUTPUT_DRAIN_MAX_MS;
    const forwarded = () => written.stdout + written.stderr;
    let seen = forwarded();
    let timer;
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const window = () => {
      timer = setTimeout(
        () =>
          setImmediate(() => {
            if (forwarded() === seen || performance.now() >= deadline) return done();
            seen = forwarded();
            window();
          }),
        OUTPUT_DRAIN_MS,
      );
    };
    window();
    void ended.then(done);
  });
}
let pending = "";
let started = false;

/** A signal that came before the command was started (while the configuration was unpacked): sent to it once it is. */
let pendingSignal;

function killGroup(signal) {
  if (!signalTarget || signalTarget.pid === undefined) {
    pendingSignal = signal;
    return;
  }
  try {
    // The command leads its own process group (detached), so `sh -c 'tofu …'` and tofu both get it.
    process.kill(-signalTarget.pid, signal);
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
    child = signalTarget = spawn(command[0], command.slice(1), {
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
  const evidence = message.evidence && typeof message.evidence === "object" ? message.evidence : undefined;
  if (child.stdio[3]) readMarks(child.stdio[3], () => {});
  child.once("spawn", () => {
    send({ type: "started", pid: child.pid, at: now() });
    if (pendingSignal !== undefined) killGroup(pendingSignal);
  });
  child.once("error", (error) => {
    if (child.pid === undefined) finish(127, { type: "error", message: `${argv[0]}: ${error.message}` });
  });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- produceEvidence reports failures as exit codes and never rejects
  child.once("exit", async (exitCode, signal) => {
    // The plan's evidence, derived by this launcher alone once the command succeeded.
    const code = exitCode === 0 && evidence ? await produceEvidence(evidence, booted, env, wrapper).catch(() => 1) : exitCode;
    // What the command left running ends with it (the sandbox's end would take it a moment later).
    signalTarget = child;
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
