import type { RunCursorKey } from '../domain/cursor.ts';
import { newId } from '../domain/ids.ts';
import type { Run } from '../domain/records.ts';
import { assertRunCreationAllowed, isRunStatus, type RunKind, type RunStatus } from '../domain/run.ts';
import type { Dialect, Executor } from './dialect.ts';
import type { RunRow } from './rows.ts';
import { translating } from './translate-error.ts';
import { isoForWrite, isoFromRow } from './values.ts';

/** What creating a run needs. `autoApply` and `isDestroy` may only be absent or false. */
export interface CreateRunInput {
  id?: string;
  organizationId: string;
  projectId: string;
  workspaceId: string;
  configurationVersionId: string;
  inputSnapshotId: string;
  kind: RunKind;
  /** Defaults to `pending`. */
  status?: RunStatus;
  message?: string;
  source: string;
  configDigest: string;
  inputDigest: string;
  opentofuVersion: string;
  executionRegion: string;
  platform: string;
  createdBy: string | null;
  createdAt: Date | string;
  autoApply?: false;
  isDestroy?: false;
}

/** Options of a run list page; `after` is the key of the last run of the previous page. */
export interface ListRunsOptions {
  limit: number;
  after?: RunCursorKey;
}

/** One page of runs, newest first. */
export interface RunPage {
  runs: Run[];
  hasMore: boolean;
}

/** Runs. */
export class RunRepository {
  constructor(
    private readonly db: Executor,
    private readonly dialect: Dialect,
  ) {}

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
    const status = input.status ?? 'pending';
    if (!isRunStatus(status)) throw new TypeError(`unknown run status ${String(status)}`);
    const createdAt = isoForWrite(input.createdAt);
    const row: RunRow = {
      id: input.id ?? newId('run'),
      organization_id: input.organizationId,
      project_id: input.projectId,
      workspace_id: input.workspaceId,
      configuration_version_id: input.configurationVersionId,
      input_snapshot_id: input.inputSnapshotId,
      kind: input.kind,
      status,
      message: input.message ?? '',
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
    };
    return translating(this.dialect, async () => {
      await this.db<RunRow>('runs').insert(row);
      return toRun(row);
    });
  }

  /** The run with this id, if any. */
  async getById(id: string): Promise<Run | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<RunRow>('runs').where({ id }).first();
      return row && toRun(row);
    });
  }

  /** One page of the organization's runs, newest first (keyset pagination on created_at, id). */
  async listByOrganization(organizationId: string, options: ListRunsOptions): Promise<RunPage> {
    return this.listPage('organization_id', organizationId, options);
  }

  /** One page of the workspace's runs, newest first (keyset pagination on created_at, id). */
  async listByWorkspace(workspaceId: string, options: ListRunsOptions): Promise<RunPage> {
    return this.listPage('workspace_id', workspaceId, options);
  }

  private async listPage(column: 'organization_id' | 'workspace_id', value: string, { limit, after }: ListRunsOptions): Promise<RunPage> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError('limit must be a positive integer');
    const afterCreatedAt = after === undefined ? undefined : isoForWrite(after.createdAt);
    return translating(this.dialect, async () => {
      const query = this.db<RunRow>('runs').where(column, value);
      if (after !== undefined) {
        // A row-value comparison, which both databases support and PostgreSQL turns into a
        // single index range on runs_org_created_id / runs_ws_created_id. Never OFFSET.
        query.whereRaw('(??, ??) < (?, ?)', ['created_at', 'id', afterCreatedAt as string, after.id]);
      }
      const rows = await query
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
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
  };
}
