// The GitHub App pipeline's records (source connections, webhook deliveries, installations, check
// runs) and how their rows map to them; the queries are github-repository.ts.
import type { DbTimestamp } from "./rows.ts";
import { isoFromRow, numberFromRow, optionalIsoFromRow } from "./values.ts";

/** A workspace's connection to a GitHub repository (tracked branch and working directory are the workspace's). */
export interface SourceConnection {
  workspaceId: string;
  organizationId: string;
  provider: "github";
  installationId: number;
  repository: string;
  triggerPaths: string[];
  createdAt: string;
  updatedAt: string;
}

/** The states of a webhook delivery (see the GitHubDelivery schema). */
export type DeliveryStatus = "queued" | "processing" | "processed" | "ignored" | "refused" | "failed";

/** A verified webhook delivery: the idempotency record and the job that acts on it. */
export interface GitHubDelivery {
  id: string;
  event: string;
  action: string | null;
  installationId: number | null;
  repository: string | null;
  payload: string;
  status: DeliveryStatus;
  outcome: string | null;
  detail: string | null;
  attempts: number;
  runAfter: string;
  runIds: string[];
  receivedAt: string;
  processedAt: string | null;
}

/** A GitHub App installation as its events described it. */
export interface GitHubInstallation {
  id: number;
  account: string | null;
  repositorySelection: "all" | "selected";
  suspended: boolean;
  deleted: boolean;
  /** Lower-case `owner/name` of the selected repositories (empty for `all`). */
  repositories: string[];
}

/** The check run kept in step with one GitHub-triggered run. */
export interface GitHubCheckRun {
  runId: string;
  installationId: number;
  repository: string;
  headSha: string;
  checkRunId: number | null;
  sentState: string | null;
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
}

export interface ConnectionRow {
  workspace_id: string;
  organization_id: string;
  provider: string;
  installation_id: number | string;
  repository: string;
  repository_key: string;
  trigger_paths: string;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
}

export interface DeliveryRow {
  id: string;
  event: string;
  action: string | null;
  installation_id: number | string | null;
  repository: string | null;
  repository_key: string | null;
  payload: string;
  status: string;
  outcome: string | null;
  detail: string | null;
  attempts: number;
  run_after: DbTimestamp;
  locked_by: string | null;
  locked_at: DbTimestamp | null;
  run_ids: string;
  received_at: DbTimestamp;
  processed_at: DbTimestamp | null;
  updated_at: DbTimestamp;
}

export interface CheckRunRow {
  run_id: string;
  installation_id: number | string;
  repository: string;
  head_sha: string;
  check_run_id: number | string | null;
  sent_state: string | null;
  attempts: number;
  next_attempt_at: DbTimestamp;
  last_error: string | null;
  updated_at: DbTimestamp;
}

export function toConnection(row: ConnectionRow): SourceConnection {
  return {
    workspaceId: row.workspace_id,
    organizationId: row.organization_id,
    provider: "github",
    installationId: numberFromRow(row.installation_id),
    repository: row.repository,
    triggerPaths: JSON.parse(row.trigger_paths) as string[],
    createdAt: isoFromRow(row.created_at),
    updatedAt: isoFromRow(row.updated_at),
  };
}

export function toDelivery(row: DeliveryRow): GitHubDelivery {
  return {
    id: row.id,
    event: row.event,
    action: row.action,
    installationId: row.installation_id === null ? null : numberFromRow(row.installation_id),
    repository: row.repository,
    payload: row.payload,
    status: row.status as DeliveryStatus,
    outcome: row.outcome,
    detail: row.detail,
    attempts: numberFromRow(row.attempts),
    runAfter: isoFromRow(row.run_after),
    runIds: JSON.parse(row.run_ids) as string[],
    receivedAt: isoFromRow(row.received_at),
    processedAt: optionalIsoFromRow(row.processed_at),
  };
}

export function toCheckRun(row: CheckRunRow): GitHubCheckRun {
  return {
    runId: row.run_id,
    installationId: numberFromRow(row.installation_id),
    repository: row.repository,
    headSha: row.head_sha,
    checkRunId: row.check_run_id === null ? null : numberFromRow(row.check_run_id),
    sentState: row.sent_state,
    attempts: numberFromRow(row.attempts),
    nextAttemptAt: isoFromRow(row.next_attempt_at),
    lastError: row.last_error,
  };
}
