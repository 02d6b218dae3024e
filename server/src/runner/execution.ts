import { join } from "node:path";
import type { InputSnapshotDocument } from "../domain/input-snapshot.ts";
import type { ExecutionPhase, Run, RunAttempt } from "../domain/records.ts";
import type { SandboxLimitReason } from "../domain/run-lifecycle.ts";
import { lockWorkspaceForRun } from "../commands/workspace-locks.ts";
import { isDomainError } from "../domain/errors.ts";
import { REPO_ROOT } from "../config.ts";
import type { Services } from "../commands/services.ts";
import type { ApiTarget } from "./api-channel.ts";
import {
  newSandboxId,
  type SandboxLimitKind,
  type SandboxLimits,
  SANDBOX_TOOLS_DIR,
  SANDBOX_WORK_DIR,
  startSandbox,
  type Sandbox,
  type SandboxResult,
  type SandboxRun,
  type SandboxShape,
  type SandboxTimings,
} from "./sandbox.ts";
import {
  CLOUD_OVERRIDE_FILE,
  STAGED_DIR,
  TFVARS_FILE,
  cliConfig,
  cloudOverride,
  phaseScript,
  phaseUnpack,
  CONFIG_ARCHIVE,
  planDiffBinds,
  planEvidenceRequest,
  PROVIDER_SOURCE_ENV,
  SANDBOX_PLAN_DIFF_BUILDER,
  tfvars,
  type MaterializedVariable,
} from "./tofu-files.ts";
import type { WarmSandboxPool } from "./warm-sandboxes.ts";
import { readStateBytes } from "../commands/state-versions.ts";
import { configurationArtifact } from "../commands/configuration-versions.ts";
import { PLAN_STATE_DIR, PLAN_STATE_ENV, PLAN_STATE_FILE, type PlanState } from "./plan-state.ts";
import type { PhaseLog } from "./phase-log.ts";

/**
 * What the plan and apply phases share (plan-phase.ts, apply-phase.ts; the policy stage is
 * policy-stage.ts): the execution context, the workspace lock, the inputs materialized from the
 * snapshot, the files a sandbox receives, how a sandbox's result is classified, and running a
 * phase in a sandbox.
 */

/** Everything a phase execution needs besides the run. */
export interface ExecutionContext {
  services: Services;
  runnerId: string;
  /** The runner job (workflow) executing this phase, recorded in each attempt's provenance. */
  jobId?: string;
  /** Where the sandbox's API channel connects to (this deployment's HTTP listener). */
  api: ApiTarget;
  /** Wall-clock limit of one phase attempt. */
  phaseTimeoutMs: number;
  /** What one plan or apply sandbox may use; unset entries take DEFAULT_SANDBOX_LIMITS. */
  sandboxLimits?: Partial<SandboxLimits>;
  /** The `.tools` directory with tofu and the provider mirror. */
  toolsDir?: string;
  /** Pre-started plan sandboxes (see warm-sandboxes.ts); without one each plan starts its own. */
  warmPlanSandboxes?: WarmSandboxPool;
  /** Called with where the time of each plan attempt that produced a plan went (benchmarks, diagnostics). */
  onAttemptTimings?: (timings: AttemptTimings) => void;
}

/** Where one plan attempt's time went, as wall-clock milliseconds. */
export interface AttemptTimings {
  runId: string;
  phase: ExecutionPhase;
  /** The sandbox was pre-started (warm) rather than started for this attempt. */
  warm: boolean;
  /** The phase began executing (job claimed). */
  phaseStartedAt: number;
  /** The attempt was recorded. */
  attemptStartedAt: number;
  sandbox: SandboxTimings;
  /** The plan, its JSON and the plan-diff were stored. */
  storedAt: number;
  /** The run moved on (plan finished, after the policy stage). */
  finishedAt: number;
}

/** What every plan sandbox is made of: tofu and the provider mirror, the plan-diff builder, the API channel. */
export function planSandboxShape(ctx: Pick<ExecutionContext, "api" | "toolsDir" | "sandboxLimits">): SandboxShape {
  return {
    api: ctx.api,
    limits: ctx.sandboxLimits,
    readOnlyBinds: [
      { source: ctx.toolsDir ?? join(REPO_ROOT, ".tools"), target: SANDBOX_TOOLS_DIR },
      ...planDiffBinds(),
    ],
    planDiffBuilder: SANDBOX_PLAN_DIFF_BUILDER,
    readOnlyInputDir: PLAN_STATE_DIR,
  };
}

/** What a phase execution asks of the job queue afterwards. */
export type PhaseOutcome = "done" | "retry_later";

/** The run's workspace lock and its fence, or null while someone else holds the workspace. */
export async function lockForRun(services: Services, run: Run): Promise<number | null> {
  try {
    return await lockWorkspaceForRun(services, run.workspaceId, run.id);
  } catch (error) {
    if (isDomainError(error, "WORKSPACE_LOCKED")) return null;
    throw error;
  }
}

export interface Materialized {
  terraform: MaterializedVariable[];
  env: Record<string, string>;
  secrets: string[];
  /** Workload identity token files (workload-identity-files.ts), relative to /work. */
  files?: Record<string, string>;
}

/** The run's variables from its input snapshot; sensitive handles are unsealed for the sandbox only. */
export async function materializeInputs(services: Services, run: Run): Promise<Materialized> {
  const snapshot = await services.stores.snapshots.getById(run.inputSnapshotId);
  if (!snapshot) throw new Error(`input snapshot ${run.inputSnapshotId} is missing`);
  const document: InputSnapshotDocument = snapshot.document;
  const out: Materialized = { terraform: [], env: {}, secrets: [] };
  for (const variable of document.variables) {
    let value: string;
    if (variable.sensitive) {
      const sealed = await services.stores.snapshots.getSecret(variable.value_handle);
      if (sealed === undefined) throw new Error(`secret ${variable.value_handle} of run ${run.id} is missing`);
      value = services.keys.secrets.openText(sealed);
      out.secrets.push(value);
    } else {
      value = variable.value;
    }
    if (variable.category === "env") out.env[variable.key] = value;
    // A sensitive value never touches a file: it reaches tofu as TF_VAR_ over the launcher's
    // control channel, which keeps it off the disk and out of the host's process list.
    else if (variable.sensitive) out.env[`TF_VAR_${variable.key}`] = value;
    else out.terraform.push({ key: variable.key, value, hcl: variable.hcl });
  }
  return out;
}

/** The parsed state of a state version (a phase's prior state), or undefined when there is none. */
export async function readPriorState(services: Services, stateVersionId: string | null | undefined): Promise<unknown> {
  if (!stateVersionId) return undefined;
  const version = await services.stores.stateVersions.getById(stateVersionId);
  if (!version) throw new Error(`state version ${stateVersionId} is missing`);
  return JSON.parse((await readStateBytes(services, version)).toString("utf8"));
}

/** What a phase's sandbox needs of the run's configuration: its verified tarball and the names its backend block uses. */
export interface RunConfiguration {
  tarball: Buffer;
  organizationName: string;
  workspaceName: string;
}

/** Reads the run's configuration (the plan phase starts this before anything else, to overlap the read). */
export async function readRunConfiguration(services: Services, run: Run): Promise<RunConfiguration> {
  const configurationVersion = await services.stores.configurationVersions.getById(run.configurationVersionId);
  const workspace = await services.stores.workspaces.getById(run.workspaceId);
  const organization = workspace && (await services.stores.organizations.getById(workspace.organizationId));
  const configuration = configurationVersion && configurationArtifact(configurationVersion);
  if (!configurationVersion || !configuration || !workspace || !organization) {
    throw new Error(`run ${run.id}: its configuration or workspace is missing`);
  }
  if (configurationVersion.configDigest !== run.configDigest)
    throw new Error(`run ${run.id}: configuration digest changed`);
  const tarball = await services.artifacts.read(configuration, run.workspaceId);
  return { tarball, organizationName: organization.name, workspaceName: workspace.name };
}

export function sandboxFiles(
  configuration: RunConfiguration,
  token: string,
  inputs: Materialized,
): Record<string, string | Uint8Array> {
  return {
    [CONFIG_ARCHIVE]: configuration.tarball,
    "cli.tfrc": cliConfig(token),
    [`${STAGED_DIR}/${CLOUD_OVERRIDE_FILE}`]: cloudOverride(
      configuration.organizationName,
      configuration.workspaceName,
    ),
    [`${STAGED_DIR}/${TFVARS_FILE}`]: tfvars(inputs.terraform),
    ...inputs.files,
  };
}

/** The attempt classification (and run reason) of each sandbox limit. */
const LIMIT_REASONS: Readonly<Record<SandboxLimitKind, SandboxLimitReason>> = {
  memory: "sandbox_memory_limit",
  processes: "sandbox_process_limit",
  file_size: "sandbox_file_size_limit",
  disk: "sandbox_disk_limit",
  cpu: "sandbox_cpu_limit",
};

/** What the log says when a limit stopped the attempt (the review says it too, by its reason). */
export const LIMIT_LOG_LINES: Readonly<Record<SandboxLimitKind, string>> = {
  memory: "StackShip stopped this attempt: its sandbox used more memory than allowed (STACKSHIP_SANDBOX_MEMORY_MB).",
  processes:
    "StackShip stopped this attempt: its sandbox reached its limit on processes and threads (STACKSHIP_SANDBOX_PROCESSES).",
  file_size: "This attempt failed on a file larger than its sandbox allows (STACKSHIP_SANDBOX_FILE_SIZE_MB).",
  disk: "This attempt failed: its sandbox's work directory is full (STACKSHIP_SANDBOX_DISK_MB).",
  cpu: "StackShip stopped this attempt: its sandbox used more CPU time than allowed (STACKSHIP_SANDBOX_CPU_SECONDS).",
};

export function limitReason(result: SandboxResult): SandboxLimitReason | undefined {
  return result.limit === null ? undefined : LIMIT_REASONS[result.limit];
}

/**
 * The abort reason of a phase the runner interrupted because its process is shutting down and the
 * grace (STACKSHIP_SHUTDOWN_GRACE_SECONDS) ran out: its attempt's classification is
 * `runner_shutdown` and its log says so (an apply still ends in needs_recovery, `apply_interrupted`).
 */
export class RunnerShutdown extends Error {
  constructor(
    readonly signalName: string,
    readonly graceSeconds: number,
  ) {
    super(
      `the runner process received ${signalName} and the phase did not end within STACKSHIP_SHUTDOWN_GRACE_SECONDS (${graceSeconds} s)`,
    );
  }
}

/** The attempt classification of a phase interrupted by a runner shutdown. */
export const RUNNER_SHUTDOWN_CLASSIFICATION = "runner_shutdown";

/** Results of sandboxes interrupted by a runner shutdown (classified `runner_shutdown`). */
const shutdownResults = new WeakSet<SandboxResult>();

export function classify(result: SandboxResult): string {
  if (shutdownResults.has(result)) return RUNNER_SHUTDOWN_CLASSIFICATION;
  if (result.limit !== null) return LIMIT_REASONS[result.limit];
  if (result.error && !result.started) return "sandbox_failed";
  if (result.timedOut) return "timeout";
  if (result.interrupted) return "interrupted";
  if (result.killed || result.signal) return "killed";
  return result.exitCode === 0 ? "exit_zero" : "exit_nonzero";
}

export async function runPhaseSandbox(
  ctx: ExecutionContext,
  run: Run,
  attempt: RunAttempt,
  phase: ExecutionPhase,
  files: Promise<Record<string, string | Uint8Array>>,
  inputs: Materialized,
  log: PhaseLog,
  signal: AbortSignal,
  collect: string[],
  planState?: PlanState,
  onArtifact?: SandboxRun["onArtifact"],
): Promise<{ result: SandboxResult; warm: boolean }> {
  const workspace = await ctx.services.stores.workspaces.getById(run.workspaceId);
  // A pre-started plan sandbox when one is ready; its name is its id (fixed before the run was known).
  let sandbox: Sandbox | undefined = phase === "plan" ? await ctx.warmPlanSandboxes?.take() : undefined;
  const warm = sandbox !== undefined;
  try {
    if (sandbox === undefined) {
      const name = `${run.id}-${phase}-${attempt.attemptNumber}`.slice(0, 63);
      // Recorded before the sandbox starts, so a runner that dies mid-phase leaves its identity behind.
      const sandboxId = newSandboxId();
      await ctx.services.stores.attempts.recordSandbox(attempt.id, sandboxId, name);
      const shape: SandboxShape =
        phase === "plan"
          ? planSandboxShape(ctx)
          : {
              api: ctx.api,
              limits: ctx.sandboxLimits,
              readOnlyBinds: [{ source: ctx.toolsDir ?? join(REPO_ROOT, ".tools"), target: SANDBOX_TOOLS_DIR }],
            };
      sandbox = await startSandbox({ ...shape, sandboxId, name });
    } else {
      // Recorded before the handoff: nothing of the run is in the sandbox yet.
      await ctx.services.stores.attempts.recordSandbox(attempt.id, sandbox.sandboxId, sandbox.name);
    }
  } catch (error) {
    await sandbox?.destroy();
    throw error;
  }
  let handedOver: Record<string, string | Uint8Array>;
  try {
    handedOver = await files;
  } catch (error) {
    await sandbox.destroy();
    throw error;
  }
  const workingDirectory = run.sourceWorkingDirectory ?? workspace?.workingDirectory ?? "";
  const result = await sandbox.run(
    {
      argv: [
        "sh",
        "-c",
        phaseScript({
          phase,
          workingDirectory,
          json: run.structuredRunOutput,
          generateConfig: run.allowConfigGeneration === true,
        }),
      ],
      unpack: phaseUnpack(workingDirectory),
      files: handedOver,
      env: {
        ...inputs.env,
        PATH: `${SANDBOX_TOOLS_DIR}/bin:/usr/local/bin:/usr/bin:/bin`,
        HOME: SANDBOX_WORK_DIR,
        // Providers only from the mirror: never a `.terraform` the configuration carries, never a plugin cache.
        ...PROVIDER_SOURCE_ENV,
        TF_FORCE_LOCAL_BACKEND: "1",
        TFE_RUN_ID: run.id,
        TF_IN_AUTOMATION: "1",
        TF_INPUT: "0",
        CHECKPOINT_DISABLE: "1",
        ...(planState ? PLAN_STATE_ENV : {}),
      },
      readOnlyFiles: planState?.file ? { [PLAN_STATE_FILE]: planState.file } : undefined,
      // The plan's evidence, derived by the launcher after the script with nothing else alive and
      // sent over its channel (plan-evidence.ts); in the redacted plan changes the sensitive
      // variables' values stay redacted even where the plan's masks miss them.
      evidence:
        phase === "plan"
          ? planEvidenceRequest(
              run.id,
              Object.keys(inputs.env).filter((name) => inputs.secrets.includes(inputs.env[name])),
              workingDirectory,
              run.structuredRunOutput,
            )
          : undefined,
      onArtifact,
      timeoutMs: ctx.phaseTimeoutMs,
      signal,
      collect,
      onOutput: (chunk) => log.write(chunk.toString("utf8")),
    },
    // A plan's result is taken once its output has arrived, and the sandbox ends in the background
    // (engine.stop waits for it). An apply waits for the sandbox's end: nothing left behind by the
    // configuration may still reach the API with the apply's token once its result is in.
    { startedForThisRun: !warm, releaseLater: phase === "plan" },
  );
  if (result.interrupted && signal.reason instanceof RunnerShutdown) {
    shutdownResults.add(result);
    log.write(`\nStackShip interrupted this ${phase}: ${signal.reason.message}.\n`);
  }
  return { result, warm };
}
