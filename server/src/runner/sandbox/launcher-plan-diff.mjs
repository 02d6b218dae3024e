// The plan-diff builder (`plan-diff.mjs`, loaded at boot) and the redacted plan for the CLI
// (`redacted-plan.mjs`), built by the launcher from the show's plan JSON in memory: inline, or for
// a plan larger than PLAN_DIFF_INLINE_MAX_BYTES in a worker with its own heap limit
// (launcher-plan-diff-worker.mjs), so that a plan too big for the builder fails the artifact, not the attempt.
import { Worker } from "node:worker_threads";
import { writeOutput } from "./launcher-output.mjs";
import { commandOf, runShow } from "./launcher-show.mjs";

/** The plan-diff worker's heap: about what a separate node process would get by default. */
const PLAN_DIFF_HEAP_MB = 4096;
const PLAN_DIFF_UNAVAILABLE =
  "StackShip could not build the redacted plan changes of this plan; they are unavailable for this run.";

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
export function loadPlanDiffBuilder(builder) {
  const state = {
    builder,
    module: import(builder),
    redactedPlan: import(builder.replace(/plan-diff\.mjs$/, "redacted-plan.mjs")),
  };
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
  const value = {
    name: "warm-up",
    tags: { a: "1", b: "2" },
    list: [1, 2],
    secret: "warm-up-secret",
    nested: [{ k: "v" }],
  };
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
    output_changes: {
      o: {
        actions: ["update"],
        before: "a",
        after: "b",
        after_unknown: false,
        before_sensitive: false,
        after_sensitive: true,
      },
    },
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
export async function buildFromBytes(loaded, { bytes, runId, knownSecrets }) {
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

/** Builds one request in a worker of its own (heap limit PLAN_DIFF_HEAP_MB); a worker that dies fails only the artifact. */
function buildInWorker(builder, request) {
  return new Promise((resolve) => {
    let worker;
    try {
      worker = new Worker(new URL("./launcher-plan-diff-worker.mjs", import.meta.url), {
        workerData: { planDiffWorker: true, builder, request },
        resourceLimits: { maxOldGenerationSizeMb: PLAN_DIFF_HEAP_MB },
      });
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
export async function buildPlanDiff(planDiff, request, bytes, env) {
  const secretEnv = Array.isArray(request?.secretEnv) ? request.secretEnv : [];
  const knownSecrets = secretEnv.map((name) => env[name]).filter((value) => typeof value === "string" && value !== "");
  const build = { bytes, runId: typeof request?.runId === "string" ? request.runId : null, knownSecrets };
  let outcome;
  if (!planDiff) outcome = { error: "this sandbox has no plan-diff builder" };
  else
    outcome =
      bytes.length <= PLAN_DIFF_INLINE_MAX_BYTES
        ? await buildFromBytes(planDiff.module, build)
        : await buildInWorker(planDiff.builder, build);
  if (typeof outcome?.json === "string") return Buffer.from(outcome.json, "utf8");
  const reason = typeof outcome?.error === "string" ? outcome.error : "could not build the artifact";
  writeOutput("stdout", `stackship-plan-diff: ${reason}\n${PLAN_DIFF_UNAVAILABLE}\n`);
  return undefined;
}

const REDACTED_PLAN_UNAVAILABLE =
  "StackShip could not build the redacted plan for the CLI (json-output-redacted); it is unavailable for this run.";

/**
 * The redacted plan the CLI renders itself (redacted-plan.mjs): built from the plan JSON `bytes`
 * and the provider schemas of `request.schemas` (`tofu providers schema -json`, run like show,
 * with nothing else alive), when `request.always` or the plan imports or generates configuration
 * (`-generate-config-out` needs it without structured output). Undefined with a line in the log
 * (never quoting the plan) when it cannot be built.
 */
export async function buildRedactedPlan(planDiff, request, bytes, env, wrapper, cwd) {
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
  const command = commandOf(request.schemas);
  if (!planDiff || command === undefined) return unavailable("this sandbox has no builder");
  let builder;
  try {
    builder = await planDiff.redactedPlan;
  } catch {
    return unavailable("the builder could not be loaded");
  }
  const shown = await runShow([...wrapper, ...command], cwd, env, "schemas.json");
  if (shown.code !== 0 || shown.signal !== null || shown.stdout === undefined)
    return unavailable("could not read the provider schemas");
  const secretEnv = Array.isArray(request.secretEnv) ? request.secretEnv : [];
  const knownSecrets = secretEnv.map((name) => env[name]).filter((value) => typeof value === "string" && value !== "");
  try {
    const schemas = JSON.parse(shown.stdout.toString("utf8"));
    return Buffer.from(builder.buildRedactedPlan(plan, schemas, { knownSecrets }), "utf8");
  } catch (error) {
    return unavailable(
      error instanceof builder.RedactedPlanInputError ? error.message : "could not build the artifact",
    );
  }
}
