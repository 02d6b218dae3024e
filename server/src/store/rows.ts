// Row types: one per table, exactly as the drivers return them. They never leave store/.
// NOTE: PostgreSQL returns timestamptz as Date and bigint as string; SQLite returns our
// ISO text and booleans as 0/1. The converters below turn both into domain values.

/** A timestamp as read: Date from pg, ISO text from SQLite. */
export type DbTimestamp = string | Date;
/** A boolean as read: boolean from pg, 0/1 from SQLite. */
export type DbBoolean = boolean | number;

/** organizations */
export interface OrganizationRow {
  id: string;
  name: string;
  created_at: DbTimestamp;
}

/** projects */
export interface ProjectRow {
  id: string;
  organization_id: string;
  name: string;
  created_at: DbTimestamp;
}

/** workspaces */
export interface WorkspaceRow {
  id: string;
  organization_id: string;
  project_id: string;
  name: string;
  description: string | null;
  tracked_branch: string;
  working_directory: string;
  opentofu_version: string;
  execution_region: string;
  approval_ttl_seconds: number | string;
  plan_requires_credential?: DbBoolean;
  structured_run_output_enabled?: DbBoolean;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
  /** Set when the workspace was deleted (it is then never found). */
  deleted_at?: DbTimestamp | null;
}

/** workspace_variables */
export interface WorkspaceVariableRow {
  id: string;
  workspace_id: string;
  key: string;
  category: string;
  hcl: DbBoolean;
  sensitive: DbBoolean;
  value: string | null;
  value_ciphertext: string | null;
  description: string | null;
  created_at: DbTimestamp;
}

/** principals */
export interface PrincipalRow {
  id: string;
  kind: string;
  organization_id: string | null;
  name: string;
  created_at: DbTimestamp;
}

/** api_tokens */
export interface ApiTokenRow {
  id: string;
  principal_id: string;
  organization_id: string | null;
  role: string | null;
  description: string | null;
  token_hash: string;
  created_at: DbTimestamp;
  last_used_at: DbTimestamp | null;
  expires_at: DbTimestamp | null;
  revoked_at: DbTimestamp | null;
}

/** permission_grants */
export interface PermissionGrantRow {
  id: string;
  principal_id: string;
  scope_kind: string;
  scope_id: string;
  permission: string;
  created_at: DbTimestamp;
}

/** configuration_versions */
export interface ConfigurationVersionRow {
  id: string;
  organization_id: string;
  workspace_id: string;
  status: string;
  speculative: DbBoolean;
  source: string;
  config_digest: string | null;
  size_bytes: number | string | null;
  artifact_key: string | null;
  created_at: DbTimestamp;
  uploaded_at: DbTimestamp | null;
}

/** input_snapshots */
export interface InputSnapshotRow {
  id: string;
  workspace_id: string;
  input_digest: string;
  document: string;
  created_at: DbTimestamp;
}

/** snapshot_secrets */
export interface SnapshotSecretRow {
  handle: string;
  ciphertext: string;
  created_at: DbTimestamp;
}

/** runs */
export interface RunRow {
  id: string;
  organization_id: string;
  project_id: string;
  workspace_id: string;
  configuration_version_id: string;
  input_snapshot_id: string;
  kind: string;
  status: string;
  message: string;
  source: string;
  auto_apply: DbBoolean;
  is_destroy: DbBoolean;
  config_digest: string;
  input_digest: string;
  opentofu_version: string;
  execution_region: string;
  platform: string;
  created_by: string | null;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
  commit_sha?: string | null;
  commit_message?: string | null;
  commit_author?: string | null;
  commit_ref?: string | null;
  commit_repository?: string | null;
  commit_fork?: DbBoolean | null;
  working_directory?: string | null;
  structured_run_output?: DbBoolean;
  allow_config_generation?: DbBoolean;
  plan_imports?: number | string | null;
  plan_generated_configuration?: DbBoolean | null;
  pull_request_number?: number | string | null;
  github_delivery_id?: string | null;
  plan_status?: string;
  apply_status?: string;
  status_reason?: string | null;
  has_changes?: DbBoolean | null;
  plan_create?: number | null;
  plan_change?: number | null;
  plan_destroy?: number | null;
  plan_digest?: string | null;
  plan_json_digest?: string | null;
  plan_diff_digest?: string | null;
  dependency_bundle_digest?: string | null;
  dependency_lock_file?: string | null;
  policy_outcome?: string | null;
  policy_result_digest?: string | null;
  predecessor_state_version_id?: string | null;
  predecessor_state_digest?: string | null;
  workspace_lock_fence?: number | string | null;
  approval_expires_at?: DbTimestamp | null;
  cancel_requested_at?: DbTimestamp | null;
  finished_at?: DbTimestamp | null;
}

/** audit_events */
export interface AuditEventRow {
  id: string;
  organization_id: string | null;
  actor_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  reason: string | null;
  data: string;
  created_at: DbTimestamp;
  /** Its place in the hash chain (domain/audit-chain.ts); null only before the chain migration. */
  chain: string | null;
  sequence: number | string | null;
  previous_digest: string | null;
  digest: string | null;
}

/** workspace_lock_fences */
export interface WorkspaceLockFenceRow {
  workspace_id: string;
  fence: number | string;
}

/** workspace_locks */
export interface WorkspaceLockRow {
  workspace_id: string;
  holder_kind: string;
  holder_id: string;
  fence: number | string;
  reason: string;
  locked_at: DbTimestamp;
}

/** run_tokens */
export interface RunTokenRow {
  id: string;
  run_id: string;
  phase: string;
  token_hash: string;
  fence: number | string | null;
  expires_at: DbTimestamp;
  created_at: DbTimestamp;
  revoked_at: DbTimestamp | null;
}

/** state_versions */
export interface StateVersionRow {
  id: string;
  workspace_id: string;
  run_id: string | null;
  serial: number | string;
  lineage: string;
  md5: string;
  sha256: string | null;
  size_bytes: number | string | null;
  status: string;
  fence: number | string;
  artifact_key: string | null;
  json_outputs: string | null;
  created_at: DbTimestamp;
  uploaded_at: DbTimestamp | null;
  published_at: DbTimestamp | null;
}
