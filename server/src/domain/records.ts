import type { Role, ScopeKind } from './authorization.ts';
import type { InputSnapshotDocument, VariableCategory } from './input-snapshot.ts';
import type { RunKind, RunStatus } from './run.ts';

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
export type PrincipalKind = 'api_token' | 'bootstrap';

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
export type ConfigurationVersionStatus = 'pending' | 'uploaded' | 'errored';

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
