import { join } from "node:path";
import { moveRun, releaseRun } from "../commands/run-transitions.ts";
import { REPO_ROOT } from "../config.ts";
import { canonicalize, sha256Hex } from "../domain/canonical-json.ts";
import {
  outcomeOf,
  parseViolations,
  policyResultDigest,
  sortFindings,
  MAX_FINDING_TEXT,
  type PinnedPolicySetVersion,
  type PolicyFinding,
} from "../domain/policy/index.ts";
import type { PolicyOutcome } from "../domain/run-lifecycle.ts";
import type { Run } from "../domain/records.ts";
import type { Services } from "../commands/services.ts";
import type { Stores } from "../store/index.ts";
import type { ExecutionContext } from "./execution.ts";
import { LogSanitizer, stripAnsi } from "./log-sanitizer.ts";
import { PhaseLog } from "./phase-log.ts";
import { ValueMatcher } from "../domain/redaction/index.ts";
import { newSandboxId, runInSandbox, SANDBOX_TOOLS_DIR, SANDBOX_WORK_DIR, type SandboxLimits } from "./sandbox.ts";
import { shellQuote } from "./shell.ts";

/**
 * The policy stage's evaluation: every applicable policy (the current version of each policy set
 * that applies to the run's workspace) is evaluated by the pinned OPA inside one fresh sandbox,
 * with the plan JSON exactly as `tofu show -json` printed it as `input`. Findings and errors
 * pass through the same sanitizer as logs before anything is returned.
 */

/** What the stage decided, ready to persist. */
export interface PolicyStageResult {
  outcome: PolicyOutcome;
  resultDigest: string;
  policySetVersions: PinnedPolicySetVersion[];
  /** Sanitized, in canonical order. */
  findings: PolicyFinding[];
  opaVersion: string | null;
  opaBuildCommit: string | null;
  /** Why the evaluation errored (sanitized), null otherwise. */
  error: string | null;
}

/** What the evaluation needs from the runner. */
export interface PolicyStageOptions {
  stores: Stores;
  run: Run;
  /** The plan JSON bytes, exactly as tofu printed them. */
  planJson: Uint8Array;
  /** The run's sensitive values (domain/redaction's set of the plan phase): none of them may reach a finding, an error or the log. */
  secrets: readonly string[] | ValueMatcher;
  /** Writes to the run's `policy` phase log (which sanitizes on its own). */
  log: (text: string) => void;
  toolsDir?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** What the policy sandbox may use (the deployment's STACKSHIP_SANDBOX_* limits). */
  limits?: Partial<SandboxLimits>;
}

/** Redacts every sensitive value from one piece of text. */
export function sanitizeText(secrets: readonly string[] | ValueMatcher, text: string): string {
  const sanitizer = new LogSanitizer(secrets);
  return sanitizer.push(stripAnsi(text)) + sanitizer.flush();
}

interface ScheduledPolicy {
  index: number;
  policySetId: string;
  policySetName: string;
  version: number;
  name: string;
  enforcementLevel: PolicyFinding["enforcementLevel"];
  package: string;
  source: string;
}

/** The script run inside the sandbox: OPA's identity, then one `opa eval` per policy, each module alone. */
function evaluationScript(policies: readonly ScheduledPolicy[]): string {
  const lines = ["mkdir -p out", "opa version > out/version.txt 2>&1"];
  for (const p of policies) {
    const query = shellQuote(`data.${p.package}.violations`);
    lines.push(
      `opa eval --format json -d policies/${p.index}.rego -i plan.json ${query} > out/${p.index}.json 2> out/${p.index}.err; echo $? > out/${p.index}.rc`,
    );
  }
  lines.push("exit 0");
  return lines.join("\n");
}

/** `opa version` output → version and build commit (null when the build recorded none). */
export function parseOpaVersion(text: string): { version: string | null; buildCommit: string | null } {
  const field = (name: string) => {
    const match = new RegExp(`^${name}:[ \\t]*(.*)$`, "m").exec(text);
    const value = match?.[1]?.trim() ?? "";
    return value === "" ? null : value.slice(0, 64);
  };
  return { version: field("Version"), buildCommit: field("Build Commit") };
}

function clip(text: string): string {
  return text.length <= MAX_FINDING_TEXT ? text : `${text.slice(0, MAX_FINDING_TEXT - 1)}…`;
}

/** Why one policy's evaluation failed, from OPA's JSON errors or its stderr. */
function opaErrorText(stdout: string, stderr: string): string {
  try {
    const parsed = JSON.parse(stdout) as {
      errors?: Array<{ message?: string; code?: string; location?: { row?: number } }>;
    };
    if (Array.isArray(parsed.errors) && parsed.errors.length > 0) {
      return parsed.errors
        .map((e) => `${e.code ?? "error"}${e.location?.row ? ` (line ${e.location.row})` : ""}: ${e.message ?? ""}`)
        .join("; ");
    }
  } catch {
    // not JSON: use stderr
  }
  // Not cut here: the caller redacts first and then clips (a cut could split a sensitive value).
  return stderr.trim() || stdout.trim() || "OPA failed without a message";
}

/**
 * Evaluates the applicable policies of the run, or returns null when no policy set applies (the
 * caller records the stage as skipped). Never throws for an OPA or contract failure: those make
 * the outcome `errored`, which blocks the run.
 */
export async function evaluateRunPolicies(options: PolicyStageOptions): Promise<PolicyStageResult | null> {
  const { stores, run, log } = options;
  // One matcher for every finding and error of the evaluation.
  const secrets = options.secrets instanceof ValueMatcher ? options.secrets : new ValueMatcher(options.secrets);
  const applicable = await stores.policySets.applicableVersions({
    organizationId: run.organizationId,
    projectId: run.projectId,
    workspaceId: run.workspaceId,
  });
  if (applicable.length === 0) return null;

  const pinned: PinnedPolicySetVersion[] = applicable.map(({ set, version }) => ({
    policySetId: set.id,
    version: version.version,
    digest: version.digest,
  }));
  const scheduled: ScheduledPolicy[] = [];
  for (const { set, version } of applicable) {
    for (const policy of version.policies) {
      scheduled.push({
        index: scheduled.length,
        policySetId: set.id,
        policySetName: set.name,
        version: version.version,
        name: policy.name,
        enforcementLevel: policy.enforcementLevel,
        package: policy.package,
        source: policy.source,
      });
    }
  }
  log(
    `Evaluating ${scheduled.length} ${scheduled.length === 1 ? "policy" : "policies"} from ${applicable.length} policy ${applicable.length === 1 ? "set" : "sets"} with OPA in a fresh sandbox.\n`,
  );
  for (const { set, version } of applicable)
    log(`  policy set ${set.name} version ${version.version} (${version.digest})\n`);

  const files: Record<string, string | Uint8Array> = { "plan.json": options.planJson };
  const collect = ["out/version.txt"];
  for (const p of scheduled) {
    files[`policies/${p.index}.rego`] = p.source;
    collect.push(`out/${p.index}.json`, `out/${p.index}.err`, `out/${p.index}.rc`);
  }

  const errored = (opa: { version: string | null; buildCommit: string | null }, reason: string): PolicyStageResult => {
    const error = clip(sanitizeText(secrets, reason));
    log(
      `\nThe policy evaluation errored: ${error}\nAn errored policy stage blocks the run; it is never treated as a pass.\n`,
    );
    const result = { outcome: "errored" as const, policySetVersions: pinned, findings: [], opaVersion: opa.version };
    return { ...result, resultDigest: policyResultDigest(result), opaBuildCommit: opa.buildCommit, error };
  };

  let sandbox;
  try {
    sandbox = await runInSandbox({
      sandboxId: newSandboxId(),
      name: `${run.id}-policy`.slice(0, 63),
      argv: ["sh", "-c", evaluationScript(scheduled)],
      files,
      env: { PATH: `${SANDBOX_TOOLS_DIR}/bin:/usr/bin:/bin`, HOME: SANDBOX_WORK_DIR },
      readOnlyBinds: [{ source: options.toolsDir ?? join(REPO_ROOT, ".tools"), target: SANDBOX_TOOLS_DIR }],
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: options.limits,
      collect,
      onOutput: (chunk) => log(chunk.toString("utf8")),
    });
  } catch (error) {
    return errored(
      { version: null, buildCommit: null },
      `the policy sandbox could not run: ${(error as Error).message}`,
    );
  }
  const text = (name: string) => sandbox.files[name]?.toString("utf8") ?? null;
  const opa = parseOpaVersion(text("out/version.txt") ?? "");
  if (sandbox.error || sandbox.timedOut || sandbox.interrupted || sandbox.exitCode !== 0) {
    return errored(
      opa,
      sandbox.error ??
        (sandbox.timedOut
          ? "the policy evaluation ran out of time"
          : `the policy sandbox ended with ${sandbox.exitCode ?? sandbox.signal}`),
    );
  }
  if (opa.version === null)
    return errored(opa, `OPA did not report its version: ${text("out/version.txt") ?? "no output"}`);
  log(`OPA ${opa.version}${opa.buildCommit ? ` (build ${opa.buildCommit})` : ""}\n`);

  const findings: PolicyFinding[] = [];
  for (const p of scheduled) {
    const rc = text(`out/${p.index}.rc`)?.trim();
    const stdout = text(`out/${p.index}.json`) ?? "";
    const stderr = text(`out/${p.index}.err`) ?? "";
    const label = `policy ${p.name} of policy set ${p.policySetName}`;
    if (rc !== "0") return errored(opa, `${label}: ${opaErrorText(stdout, stderr)}`);
    let violations;
    try {
      const parsed = JSON.parse(stdout) as { result?: Array<{ expressions?: Array<{ value?: unknown }> }> };
      const value = parsed.result?.[0]?.expressions?.[0]?.value;
      if (value === undefined) throw new Error(`it defines no rule \`violations\` in package ${p.package}`);
      // Redacted before the texts are clipped (a clip could cut a value in two).
      violations = parseViolations(value, (text) => sanitizeText(secrets, text));
    } catch (error) {
      return errored(opa, `${label} breaks the policy contract: ${(error as Error).message}`);
    }
    log(
      `${label} (${p.enforcementLevel}): ${violations.length === 0 ? "no findings" : `${violations.length} ${violations.length === 1 ? "finding" : "findings"}`}\n`,
    );
    for (const v of violations) {
      findings.push({
        policySetId: p.policySetId,
        policySetVersion: p.version,
        policy: p.name,
        enforcementLevel: p.enforcementLevel,
        title: v.title,
        message: v.message,
        address: v.address,
      });
    }
  }
  const sorted = sortFindings(findings);
  for (const f of sorted)
    log(`  [${f.enforcementLevel}] ${f.title}${f.address ? ` (${f.address})` : ""}: ${f.message}\n`);
  const outcome = outcomeOf(sorted, false);
  log(`Policy outcome: ${outcome}\n`);
  const result = { outcome, policySetVersions: pinned, findings: sorted, opaVersion: opa.version };
  return { ...result, resultDigest: policyResultDigest(result), opaBuildCommit: opa.buildCommit, error: null };
}

/** The OPA-less policy stage result used while no policy set applies. */
function skippedPolicyDigest(): string {
  return sha256Hex(
    canonicalize({ format: "stackship.policy-result/v1", outcome: "skipped", policy_set_versions: [], findings: [] }),
  );
}

/**
 * The policy stage (policy-stage.ts): the applicable policies evaluated by OPA in a fresh
 * sandbox against the plan JSON, or `skipped` when no policy set applies. The result, its
 * sanitized findings and the run's move happen in one transaction.
 */
export async function policyStage(
  ctx: ExecutionContext,
  run: Run,
  storedPlanJson: Buffer,
  secrets: ValueMatcher,
): Promise<void> {
  const { services } = ctx;
  const log = new PhaseLog(services.stores, run.id, "policy", services.clock, secrets, {
    maxBytes: services.config.phaseLogMaxBytes,
  });
  let result: PolicyStageResult | null;
  try {
    // The plan JSON exactly as stored (its digest is the run's), without reading it back.
    const planJson = storedPlanJson;
    result = await evaluateRunPolicies({
      stores: services.stores,
      run,
      planJson,
      secrets,
      log: (text) => log.write(text),
      toolsDir: ctx.toolsDir,
      timeoutMs: ctx.phaseTimeoutMs,
      limits: ctx.sandboxLimits,
    });
  } catch (error) {
    const message = sanitizeText(secrets, `the policy stage could not run: ${(error as Error).message}`);
    log.write(`\n${message}\n`);
    const failed = { outcome: "errored" as const, policySetVersions: [], findings: [], opaVersion: null };
    result = { ...failed, resultDigest: policyResultDigest(failed), opaBuildCommit: null, error: message };
  }
  if (result === null) log.write("No policy set applies to this workspace; the policy stage is skipped.\n");
  await log.close();
  await recordPolicyStage(services, run, result);
}

/**
 * A policy stage that could not end on its own (its runner was lost, or the database refused its
 * result): recorded as errored with `reason`, which blocks like any policy error (never a pass).
 * The reason goes to the policy log too, which is then complete.
 */
export async function endPolicyStageErrored(services: Services, run: Run, reason: string): Promise<void> {
  const message = `the policy stage could not finish: ${reason}`;
  const position = (await services.stores.logs.positions(run.id)).policy;
  if (!position.complete) await services.stores.logs.append(run.id, "policy", `\n${message}\n`, true, services.clock());
  const failed = { outcome: "errored" as const, policySetVersions: [], findings: [], opaVersion: null };
  await recordPolicyStage(services, run, {
    ...failed,
    resultDigest: policyResultDigest(failed),
    opaBuildCommit: null,
    error: message,
  });
}

/** Records the stage's result (null: skipped) with the run's move, in one transaction, and releases a run that ended. */
async function recordPolicyStage(services: Services, run: Run, result: PolicyStageResult | null): Promise<void> {
  const outcome = result?.outcome ?? "skipped";
  const digest = result?.resultDigest ?? skippedPolicyDigest();
  const workspace = await services.stores.workspaces.getById(run.workspaceId);
  const now = services.clock();
  const next = await moveRun(
    services,
    run.id,
    { type: "policy_evaluated", outcome },
    {
      now,
      facts: { policyResultDigest: digest },
      approvalTtlSeconds: workspace?.approvalTtlSeconds,
      // The result and its sanitized findings are recorded with the run's move, or not at all.
      alongside: (stores, current) =>
        stores.policyResults.record(
          {
            runId: current.id,
            outcome,
            resultDigest: digest,
            opaVersion: result?.opaVersion ?? null,
            opaBuildCommit: result?.opaBuildCommit ?? null,
            policySetVersions: result?.policySetVersions ?? [],
            error: result?.error ?? null,
            evaluatedAt: now.toISOString(),
          },
          result?.findings ?? [],
        ),
    },
  );
  // Ended (no changes, speculative, blocked by policy): release what the run holds.
  if (next && (next.status === "planned_and_finished" || next.status === "errored")) await releaseRun(services, next);
}
