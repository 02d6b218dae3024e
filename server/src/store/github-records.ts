// The GitHub App pipeline's records (source connections, webhook deliveries, installations, check
// runs) and how their rows map to them; the queries are github-repository.ts.
import type { DbTimestamp } from "./rows.ts";
import { isoFromRow, numberFromRow } from "./values.ts";
import { rowMapper } from "./columns.ts";

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

export const toDelivery = rowMapper<DeliveryRow, GitHubDelivery>()(
  "id event action installation_id:number? repository payload status:as outcome detail attempts:number run_after:iso run_ids:json received_at:iso processed_at:iso?",
);

export const toCheckRun = rowMapper<CheckRunRow, GitHubCheckRun>()(
  "run_id installation_id:number repository head_sha check_run_id:number? sent_state attempts:number next_attempt_at:iso last_error",
);
