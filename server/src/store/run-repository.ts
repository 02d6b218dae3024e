import type { RunCursorKey } from "../domain/cursor.ts";
import { newId } from "../domain/ids.ts";
import type { PlanCounts, Run, RunExecution } from "../domain/records.ts";
import type { PolicyOutcome, RunEvent, RunReason } from "../domain/run-lifecycle.ts";
import {
  APPLY_PHASE_STATUSES,
  PLAN_PHASE_STATUSES,
  assertRunCreationAllowed,
  isRunStatus,
  type ApplyPhaseStatus,
  type PlanPhaseStatus,
  type RunKind,
  type RunStatus,
} from "../domain/run.ts";
import { Repository } from "./repository.ts";
import type { RunRow } from "./rows.ts";
import { announce, atomically } from "./run-events.ts";
import { translating } from "./translate-error.ts";
import { booleanFromRow, isoForWrite, isoFromRow, numberFromRow, optionalIsoFromRow } from "./values.ts";

/**
 * What creating a run needs: the run's own facts, less what the store sets. `autoApply` and
 * `isDestroy` may only be absent or false; `status` defaults to `pending`.
 */
export interface CreateRunInput
  extends
    Pick<
      Run,
      | "organizationId"
      | "projectId"
      | "workspaceId"
      | "configurationVersionId"
      | "inputSnapshotId"
      | "kind"
      | "source"
      | "configDigest"
      | "inputDigest"
      | "opentofuVersion"
      | "executionRegion"
      | "platform"
      | "createdBy"
    >,
    Partial<
      Pick<
        Run,
        | "id"
        | "status"
        | "message"
        | "autoApply"
        | "isDestroy"
        | "commit"
        | "sourceWorkingDirectory"
        | "pullRequestNumber"
        | "structuredRunOutput"
        | "allowConfigGeneration"
      >
    > {
  createdAt: Date | string;
  githubDeliveryId?: string | null;
}

/** Options of a run list page; `after` is the key of the last run of the previous page. */
export interface ListRunsOptions {
  limit: number;
  after?: RunCursorKey;
  /** Only runs in one of these statuses (absent: every status). */
  statuses?: readonly RunStatus[];
}

/** One page of runs, newest first. */
export interface RunPage {
  runs: Run[];
  hasMore: boolean;
}

/** Runs. */
export class RunRepository extends Repository {
  /**
   * Creates a run. Auto-apply, destroy mode (camelCase or snake_case, any truthy spelling) and
   * unknown kinds are refused before any query runs.
   */
  async create(input: CreateRunInput): Promise<Run> {
    // The declared type is a promise the caller may not keep; check the raw object.
    const raw = input as unknown as Record<string, unknown>;
    assertRunCreationAllowed({
      kind: raw.kind,
      autoApply: firstRefused(raw.autoApply, raw.auto_apply),
      isDestroy: firstRefused(raw.isDestroy, raw.is_destroy),
    });
    const status = input.status ?? "pending";
    if (!isRunStatus(status)) throw new TypeError(`unknown run status ${String(status)}`);
    const createdAt = isoForWrite(input.createdAt);
    const row: RunRow = {
      id: input.id ?? newId("run"),
      organization_id: input.organizationId,
      project_id: input.projectId,
      workspace_id: input.workspaceId,
      configuration_version_id: input.configurationVersionId,
      input_snapshot_id: input.inputSnapshotId,
      kind: input.kind,
      status,
      message: input.message ?? "",
      source: input.source,
      auto_apply: false,
      is_destroy: false,
      config_digest: input.configDigest,
      input_digest: input.inputDigest,
      opentofu_version: input.opentofuVersion,
      execution_region: input.executionRegion,
      platform: input.platform,
      created_by: input.createdBy,
      created_at: createdAt,
      updated_at: createdAt,
      commit_sha: input.commit?.sha ?? null,
      commit_message: input.commit?.message ?? null,
      commit_author: input.commit?.author ?? null,
      commit_ref: input.commit?.ref ?? null,
      commit_repository: input.commit?.repository ?? null,
      commit_fork: input.commit ? input.commit.fork : null,
      working_directory: input.sourceWorkingDirectory ?? null,
      structured_run_output: input.structuredRunOutput ?? false,
      allow_config_generation: input.allowConfigGeneration ?? false,
      pull_request_number: input.pullRequestNumber ?? null,
      github_delivery_id: input.githubDeliveryId ?? null,
    };
    return translating(this.dialect, async () => {
      await this.db<RunRow>("runs").insert(row);
      return toRun(row);
    });
  }

  /** The run with this id, if any. */
  async getById(id: string): Promise<Run | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<RunRow>("runs").where({ id }).first();
      return row && toRun(row);
    });
  }

  /**
   * Applies an execution update, only while the run is still in `expectedStatus` (and, when
   * given, the expected phase statuses): compare and set, so two racing changes cannot both
   * win. Returns the updated run, or undefined when the run was not in that state. Lifecycle
   * columns are written only by commands/run-transitions.ts, which names the event it records
   * (test: server/src/store/run-lifecycle-writers.test.ts).
   */
  async update(
    id: string,
    expectedStatus: RunStatus,
    patch: RunPatch,
    options: RunUpdateOptions = {},
  ): Promise<Run | undefined> {
    const row = patchToRow(patch);
    const expected: Partial<RunRow> = { id, status: expectedStatus };
    if (options.expected?.planStatus !== undefined) expected.plan_status = options.expected.planStatus;
    if (options.expected?.applyStatus !== undefined) expected.apply_status = options.expected.applyStatus;
    return translating(this.dialect, () =>
      atomically(this.db, this.dialect, async (db) => {
        const changed = await db<RunRow>("runs").where(expected).update(row);
        if (changed === 0) return undefined;
        const updated = await db<RunRow>("runs").where({ id }).first();
        if (!updated) return undefined;
        const run = toRun(updated);
        // Announced in the same transaction: the live WebSocket reports stage and status changes.
        const x = run.execution;
        await announce(db, this.dialect, {
          kind: "run",
          runId: run.id,
          status: run.status,
          statusReason: x.statusReason,
          planStatus: x.planStatus,
          policyOutcome: x.policyOutcome,
          applyStatus: x.applyStatus,
          event: options.event ?? null,
        });
        return run;
      }),
    );
  }

  /** The run a GitHub delivery created in a workspace, if any (a retried delivery creates no second one). */
  async runOfDelivery(deliveryId: string, workspaceId: string): Promise<Run | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<RunRow>("runs")
        .where({ github_delivery_id: deliveryId, workspace_id: workspaceId })
        .first();
      return row && toRun(row);
    });
  }

  /** The speculative runs of a pull request in these workspaces that have not started (pending), oldest first. */
  async queuedPullRequestRuns(
    workspaceIds: readonly string[],
    pullRequestNumber: number,
    exceptDeliveryId: string,
  ): Promise<Run[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<RunRow>("runs")
        .whereIn("workspace_id", workspaceIds as string[])
        .andWhere({
          source: "github_pull_request",
          kind: "speculative",
          status: "pending",
          pull_request_number: pullRequestNumber,
        })
        .andWhere((q) => void q.whereNull("github_delivery_id").orWhereNot("github_delivery_id", exceptDeliveryId))
        .orderBy([{ column: "created_at" }, { column: "id" }]);
      return rows.map(toRun);
    });
  }

  /** How many runs are in each status (statuses without runs are absent). */
  async countByStatus(): Promise<Map<RunStatus, number>> {
    return translating(this.dialect, async () => {
      const rows = await this.db("runs")
        .select("status")
        .count({ n: "*" })
        .groupBy<Array<{ status: RunStatus; n: number | string }>>("status");
      return new Map(rows.map((row) => [row.status, numberFromRow(row.n)]));
    });
  }

  /** Which of `ids` have a recorded cancel request (what a runner executing them polls). */
  async listCancelRequested(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    return translating(this.dialect, async () =>
      (
        await this.db("runs")
          .whereIn("id", ids as string[])
          .whereNotNull("cancel_requested_at")
          .select("id")
      ).map((row: { id: string }) => row.id),
    );
  }

  /** Runs in one of `statuses` whose approval window closed at or before `now`. */
  async listApprovalExpired(now: Date | string, statuses: readonly RunStatus[]): Promise<Run[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<RunRow>("runs")
        .whereIn("status", statuses as RunStatus[])
        .whereNotNull("approval_expires_at")
        .where("approval_expires_at", "<=", isoForWrite(now));
      return rows.map(toRun);
    });
  }

  /** One page of the organization's runs, newest first (keyset pagination on created_at, id). */
  async listByOrganization(organizationId: string, options: ListRunsOptions): Promise<RunPage> {
    return this.listPage("organization_id", organizationId, options);
  }

  /** One page of the workspace's runs, newest first (keyset pagination on created_at, id). */
  async listByWorkspace(workspaceId: string, options: ListRunsOptions): Promise<RunPage> {
    return this.listPage("workspace_id", workspaceId, options);
  }

  private async listPage(
    column: "organization_id" | "workspace_id",
    value: string,
    { limit, after, statuses }: ListRunsOptions,
  ): Promise<RunPage> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError("limit must be a positive integer");
    for (const status of statuses ?? [])
      if (!isRunStatus(status)) throw new TypeError(`unknown run status ${String(status)}`);
    const afterCreatedAt = after === undefined ? undefined : isoForWrite(after.createdAt);
    return translating(this.dialect, async () => {
      const query = this.db<RunRow>("runs").where(column, value);
      if (statuses !== undefined) query.whereIn("status", [...statuses]);
      if (after !== undefined) {
        // A row-value comparison, which both databases support and PostgreSQL turns into a
        // single index range on runs_org_created_id / runs_ws_created_id. Never OFFSET.
        query.whereRaw("(??, ??) < (?, ?)", ["created_at", "id", afterCreatedAt as string, after.id]);
      }
      const rows = await query
        .orderBy([
          { column: "created_at", order: "desc" },
          { column: "id", order: "desc" },
        ])
        .limit(limit + 1);
      return { runs: rows.slice(0, limit).map(toRun), hasMore: rows.length > limit };
    });
  }
}

/** The first value that assertRunCreationAllowed() would refuse, so neither spelling can hide the other. */
function firstRefused(camel: unknown, snake: unknown): unknown {
  return camel !== undefined && camel !== false ? camel : snake;
}

/** What an update compares besides the status, and the lifecycle event it records. */
export interface RunUpdateOptions {
  expected?: { planStatus?: PlanPhaseStatus; applyStatus?: ApplyPhaseStatus };
  event?: RunEvent["type"];
}

/** The columns an execution update may set, by their domain names. */
export type RunPatch = Partial<Omit<RunExecution, "planCounts">> & {
  status?: RunStatus;
  planCounts?: PlanCounts | null;
  updatedAt: Date | string;
};

function patchToRow(patch: RunPatch): Partial<RunRow> {
  const row: Partial<RunRow> = { updated_at: isoForWrite(patch.updatedAt) };
  const set = <K extends keyof RunRow>(key: K, value: RunRow[K] | undefined) => {
    if (value !== undefined) row[key] = value;
  };
  if (patch.status !== undefined && !isRunStatus(patch.status))
    throw new TypeError(`unknown run status ${String(patch.status)}`);
  if (patch.planStatus !== undefined && !(PLAN_PHASE_STATUSES as readonly string[]).includes(patch.planStatus))
    throw new TypeError(`unknown plan status ${patch.planStatus}`);
  if (patch.applyStatus !== undefined && !(APPLY_PHASE_STATUSES as readonly string[]).includes(patch.applyStatus))
    throw new TypeError(`unknown apply status ${patch.applyStatus}`);
  set("status", patch.status);
  set("plan_status", patch.planStatus);
  set("apply_status", patch.applyStatus);
  set("status_reason", patch.statusReason);
  set("has_changes", patch.hasChanges);
  if (patch.planCounts !== undefined) {
    row.plan_create = patch.planCounts?.create ?? null;
    row.plan_change = patch.planCounts?.change ?? null;
    row.plan_destroy = patch.planCounts?.destroy ?? null;
  }
  set("plan_imports", patch.planImports);
  set("plan_generated_configuration", patch.planGeneratedConfiguration);
  set("plan_digest", patch.planDigest);
  set("plan_json_digest", patch.planJsonDigest);
  set("plan_diff_digest", patch.planDiffDigest);
  set("dependency_bundle_digest", patch.dependencyBundleDigest);
  set("dependency_lock_file", patch.dependencyLockFile);
  set("policy_outcome", patch.policyOutcome);
  set("policy_result_digest", patch.policyResultDigest);
  set("predecessor_state_version_id", patch.predecessorStateVersionId);
  set("predecessor_state_digest", patch.predecessorStateDigest);
  set("workspace_lock_fence", patch.workspaceLockFence);
  const time = (value: string | null | undefined) =>
    value === undefined || value === null ? value : isoForWrite(value);
  set("approval_expires_at", time(patch.approvalExpiresAt));
  set("cancel_requested_at", time(patch.cancelRequestedAt));
  set("finished_at", time(patch.finishedAt));
  return row;
}

function nullableNumber(value: number | string | null | undefined): number | null {
  return value === null || value === undefined ? null : numberFromRow(value);
}

function toRun(row: RunRow): Run {
  return {
    id: row.id,
    organizationId: row.organization_id,
    projectId: row.project_id,
    workspaceId: row.workspace_id,
    configurationVersionId: row.configuration_version_id,
    inputSnapshotId: row.input_snapshot_id,
    kind: row.kind as RunKind,
    status: row.status as RunStatus,
    message: row.message,
    source: row.source,
    // The CHECK constraints make anything else impossible.
    autoApply: false,
    isDestroy: false,
    configDigest: row.config_digest,
    inputDigest: row.input_digest,
    opentofuVersion: row.opentofu_version,
    executionRegion: row.execution_region,
    platform: row.platform,
    createdBy: row.created_by,
    createdAt: isoFromRow(row.created_at),
    updatedAt: isoFromRow(row.updated_at),
    commit:
      row.commit_sha === null || row.commit_sha === undefined
        ? null
        : {
            sha: row.commit_sha,
            message: row.commit_message ?? null,
            author: row.commit_author ?? null,
            ref: row.commit_ref ?? "",
            repository: row.commit_repository ?? "",
            fork: row.commit_fork === null || row.commit_fork === undefined ? false : booleanFromRow(row.commit_fork),
          },
    sourceWorkingDirectory: row.working_directory ?? null,
    structuredRunOutput:
      row.structured_run_output === null || row.structured_run_output === undefined
        ? false
        : booleanFromRow(row.structured_run_output),
    allowConfigGeneration:
      row.allow_config_generation === null || row.allow_config_generation === undefined
        ? false
        : booleanFromRow(row.allow_config_generation),
    pullRequestNumber:
      row.pull_request_number === null || row.pull_request_number === undefined
        ? null
        : numberFromRow(row.pull_request_number),
    execution: {
      planStatus: (row.plan_status ?? "pending") as PlanPhaseStatus,
      applyStatus: (row.apply_status ?? "pending") as ApplyPhaseStatus,
      statusReason: (row.status_reason ?? null) as RunReason | null,
      hasChanges: row.has_changes === null || row.has_changes === undefined ? null : booleanFromRow(row.has_changes),
      planCounts:
        row.plan_create === null || row.plan_create === undefined
          ? null
          : {
              create: numberFromRow(row.plan_create),
              change: numberFromRow(row.plan_change ?? 0),
              destroy: numberFromRow(row.plan_destroy ?? 0),
            },
      planImports: nullableNumber(row.plan_imports),
      planGeneratedConfiguration:
        row.plan_generated_configuration === null || row.plan_generated_configuration === undefined
          ? null
          : booleanFromRow(row.plan_generated_configuration),
      planDigest: row.plan_digest ?? null,
      planJsonDigest: row.plan_json_digest ?? null,
      planDiffDigest: row.plan_diff_digest ?? null,
      dependencyBundleDigest: row.dependency_bundle_digest ?? null,
      dependencyLockFile: row.dependency_lock_file ?? null,
      policyOutcome: (row.policy_outcome ?? null) as PolicyOutcome | null,
      policyResultDigest: row.policy_result_digest ?? null,
      predecessorStateVersionId: row.predecessor_state_version_id ?? null,
      predecessorStateDigest: row.predecessor_state_digest ?? null,
      workspaceLockFence: nullableNumber(row.workspace_lock_fence),
      approvalExpiresAt: optionalIsoFromRow(row.approval_expires_at ?? null),
      cancelRequestedAt: optionalIsoFromRow(row.cancel_requested_at ?? null),
      finishedAt: optionalIsoFromRow(row.finished_at ?? null),
    },
  };
}
