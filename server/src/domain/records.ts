import type { Role, ScopeKind } from "./authorization.ts";
import type { InputSnapshotDocument, VariableCategory } from "./input-snapshot.ts";
import type { ApplyPhaseStatus, PlanPhaseStatus, RunKind, RunStatus } from "./run.ts";
import type { PolicyOutcome, RunReason } from "./run-lifecycle.ts";

// Every timestamp below is an ISO string in Date.prototype.toISOString() form.

/** An organization: the outermost authorization boundary. */
export interface Organization {
  id: string;
  name: string;
  createdAt: string;
}

/** A project groups workspaces inside an organization. */
export interface Project {
  id: string;
  organizationId: string;
  name: string;
  createdAt: string;
}

/** A workspace: one OpenTofu root module with its own state, variables and runs. */
export interface Workspace {
  id: string;
  organizationId: string;
  projectId: string;
  name: string;
  description: string | null;
  trackedBranch: string;
  workingDirectory: string;
  opentofuVersion: string;
  executionRegion: string;
  /** How long a plan may wait for a decision before the run expires. */
  approvalTtlSeconds: number;
  /** Whether a plan needs a cloud credential from a federation profile (else plan_credentials_required). */
  planRequiresCredential: boolean;
  /** Structured run output (issue 29): new runs record it, and their plans build the CLI's redacted plan. */
  structuredRunOutputEnabled: boolean;
  createdAt: string;
  updatedAt: string;
}

interface WorkspaceVariableBase {
  id: string;
  workspaceId: string;
  key: string;
  category: VariableCategory;
  hcl: boolean;
  description: string | null;
  createdAt: string;
}

/** A workspace variable; a sensitive one is only ever held as ciphertext. */
export type WorkspaceVariable =
  | (WorkspaceVariableBase & { sensitive: false; value: string; valueCiphertext: null })
  | (WorkspaceVariableBase & { sensitive: true; value: null; valueCiphertext: string });

/** The kinds of principal. */
export type PrincipalKind = "api_token" | "bootstrap";

/** Someone or something that acts: the holder of an API token, or the bootstrap identity. */
export interface Principal {
  id: string;
  kind: PrincipalKind;
  organizationId: string | null;
  name: string;
  createdAt: string;
}

/** An API token; only the hash of its secret is stored. */
export interface ApiToken {
  id: string;
  principalId: string;
  organizationId: string | null;
  role: Role | null;
  description: string | null;
  tokenHash: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** When the token stops working on its own; null: until revoked. */
  expiresAt: string | null;
  /** When an organization admin revoked it; null: not revoked. */
  revokedAt: string | null;
}

/** One permission held by a principal on one scope. */
export interface PermissionGrant {
  id: string;
  principalId: string;
  scopeKind: ScopeKind;
  scopeId: string;
  permission: string;
  createdAt: string;
}

/** The states of a configuration version. */
export type ConfigurationVersionStatus = "pending" | "uploaded" | "errored";

/** An uploaded or fetched configuration tarball; immutable once uploaded. */
export interface ConfigurationVersion {
  id: string;
  organizationId: string;
  workspaceId: string;
  status: ConfigurationVersionStatus;
  speculative: boolean;
  source: string;
  configDigest: string | null;
  sizeBytes: number | null;
  artifactKey: string | null;
  createdAt: string;
  uploadedAt: string | null;
}

/** The immutable inputs of a run; sensitive values are referenced by handle only. */
export interface InputSnapshot {
  id: string;
  workspaceId: string;
  inputDigest: string;
  document: InputSnapshotDocument;
  createdAt: string;
}

/** A run; `autoApply` and `isDestroy` exist only to say that they are always false. */
export interface Run {
  id: string;
  organizationId: string;
  projectId: string;
  workspaceId: string;
  configurationVersionId: string;
  inputSnapshotId: string;
  kind: RunKind;
  status: RunStatus;
  message: string;
  source: string;
  autoApply: false;
  isDestroy: false;
  configDigest: string;
  inputDigest: string;
  opentofuVersion: string;
  executionRegion: string;
  platform: string;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
  /** The commit the run was made from, when its source recorded one (GitHub runs); null otherwise. */
  commit: RunCommit | null;
  /** The working directory recorded when the run was created from a source connection; null for other runs. */
  sourceWorkingDirectory: string | null;
  /** The workspace's structured run output when the run was created (issue 29): its logs are read in the form they were written. */
  structuredRunOutput: boolean;
  /** The run was created allowing configuration generation (`tofu plan -generate-config-out`): its plan writes configuration for import blocks that have none. */
  allowConfigGeneration?: boolean;
  /** The pull request a `github_pull_request` run plans; null otherwise. */
  pullRequestNumber: number | null;
  /** What execution recorded; every member is null (or pending) until it happened. */
  execution: RunExecution;
}

/** The sources a run can come from (the run document's `source`). */
export const RUN_SOURCES = ["api", "cli", "github_push", "github_pull_request"] as const;
export type RunSource = (typeof RUN_SOURCES)[number];

/** The commit a run was made from. */
export interface RunCommit {
  sha: string;
  message: string | null;
  author: string | null;
  ref: string;
  /** `owner/name`; for a fork pull request, the fork. */
  repository: string;
  /** A pull request from a fork: never a cloud credential, never a sensitive variable. */
  fork: boolean;
}

/** The plan's resource counts; a replace counts as both a create and a destroy. */
export interface PlanCounts {
  create: number;
  change: number;
  destroy: number;
}

/** A run's execution record: phase results, evidence digests and lifecycle times. */
export interface RunExecution {
  planStatus: PlanPhaseStatus;
  applyStatus: ApplyPhaseStatus;
  statusReason: RunReason | null;
  hasChanges: boolean | null;
  planCounts: PlanCounts | null;
  /** How many resources the plan imports, and whether it generated configuration for an import block (`-generate-config-out`); null until the plan finished. */
  planImports?: number | null;
  planGeneratedConfiguration?: boolean | null;
  /**
   * The SHA-256 of the saved plan: the evidence an approval binds to. The plan's artifacts (saved
   * plan, plan JSON, redacted plan changes) are ArtifactRefs in the artifact store
   * (`stores.artifacts.forRun`), not fields of the run.
   */
  planDigest: string | null;
  /** The SHA-256 of the plan JSON and of the redacted plan changes stored with that plan (null: none), recorded with `planDigest`; the approval binds all three. */
  planJsonDigest: string | null;
  planDiffDigest: string | null;
  dependencyBundleDigest: string | null;
  dependencyLockFile: string | null;
  policyOutcome: PolicyOutcome | null;
  policyResultDigest: string | null;
  predecessorStateVersionId: string | null;
  predecessorStateDigest: string | null;
  workspaceLockFence: number | null;
  approvalExpiresAt: string | null;
  cancelRequestedAt: string | null;
  finishedAt: string | null;
}

/** Who did what to which object, and why where a reason is required. */
export interface AuditEvent {
  id: string;
  organizationId: string | null;
  actorId: string | null;
  action: string;
  targetType: string;
  targetId: string;
  reason: string | null;
  data: Record<string, unknown>;
  createdAt: string;
}

/** The phases that run in a sandbox. */
export type ExecutionPhase = "plan" | "apply";

/** The persisted status of one attempt. */
export type AttemptStatus = "running" | "succeeded" | "failed" | "interrupted" | "lost";

/** One execution of a phase in one sandbox. */
export interface RunAttempt {
  id: string;
  runId: string;
  phase: ExecutionPhase;
  attemptNumber: number;
  runnerId: string;
  sandboxId: string | null;
  sandboxName: string | null;
  region: string;
  baseProfile: string;
  status: AttemptStatus;
  /** Why the attempt ended, e.g. `exit_zero`, `exit_nonzero`, `timeout`, `interrupted`, `runner_lost`. */
  terminalClassification: string | null;
  startedAt: string;
  heartbeatAt: string;
  finishedAt: string | null;
  /** What the attempt ran on, recorded when it started; null (or absent) when not recorded. */
  provenance?: AttemptProvenance | null;
}

/** What an attempt ran on (runner/provenance.ts); a member StackShip could not determine is null. */
export interface AttemptProvenance {
  /** The runner job (workflow) that ran the attempt. */
  jobId: string | null;
  /** The StackShip build: the git commit the running code is (STACKSHIP_BUILD_SHA, else `git rev-parse HEAD`). */
  buildSha: string | null;
  /** The runner release: `git describe --always --dirty` of the build (STACKSHIP_RUNNER_RELEASE overrides). */
  runnerRelease: string | null;
  /** SHA-256 over the sandbox profile: base profile name, compiled seccomp filter, limits, and the source that builds bwrap's arguments. */
  sandboxProfileDigest: string | null;
  /** SHA-256 of the OpenTofu binary the sandbox runs. */
  opentofuBinaryDigest: string | null;
  /** The job engine's build: `graphile-worker@<version>` as installed. */
  jobEngineBuild: string | null;
}

/** A recorded human (or expiry) decision and the evidence it is bound to. */
export interface RunReview {
  id: string;
  runId: string;
  decision: "approved" | "discarded" | "canceled" | "expired";
  actorId: string | null;
  reason: string | null;
  planDigest: string | null;
  planJsonDigest: string | null;
  planDiffDigest: string | null;
  policyResultDigest: string | null;
  predecessorStateDigest: string | null;
  dependencyBundleDigest: string | null;
  decidedAt: string;
}

/** A queued unit of runner work. */
export interface RunJob {
  id: string;
  runId: string;
  workspaceId: string;
  phase: ExecutionPhase;
  serial: boolean;
  status: "queued" | "running" | "done";
  runnerId: string | null;
  attempts: number;
  availableAt: string;
  heartbeatAt: string | null;
  createdAt: string;
  finishedAt: string | null;
}

/** A person who signs in to the dashboard. The password is only ever held as its hash. */
export interface User {
  id: string;
  email: string;
  displayName: string;
  passwordHash: string;
  siteAdmin: boolean;
  createdAt: string;
  /** When a deployment administrator disabled the user (no sign-in, no session); null: enabled. */
  disabledAt: string | null;
}

/** A user's built-in role at one scope of one organization. */
export interface Membership {
  id: string;
  organizationId: string;
  userId: string;
  role: Role;
  scopeKind: ScopeKind;
  scopeId: string;
  createdAt: string;
}

/** A dashboard session; only the hashes of its cookie and CSRF secrets are stored. */
export interface Session {
  id: string;
  userId: string;
  tokenHash: string;
  csrfTokenHash: string;
  createdAt: string;
  expiresAt: string;
  steppedUpAt: string | null;
  revokedAt: string | null;
}
