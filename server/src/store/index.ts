import { ArtifactRepository } from "./artifact-repository.ts";
import { AuditRepository } from "./audit-repository.ts";
export { ArtifactRepository, type ArtifactRecord } from "./artifact-repository.ts";
import { ConfigurationVersionRepository } from "./configuration-version-repository.ts";
import type { Database } from "./db.ts";
import type { Dialect, Executor } from "./dialect.ts";
import { GrantRepository } from "./grant-repository.ts";
import { OrganizationRepository } from "./organization-repository.ts";
import { PrincipalRepository } from "./principal-repository.ts";
import { ProjectRepository } from "./project-repository.ts";
import { RunRepository } from "./run-repository.ts";
import { SnapshotRepository } from "./snapshot-repository.ts";
import { TokenRepository } from "./token-repository.ts";
import { VariableRepository } from "./variable-repository.ts";
import { WorkspaceRepository } from "./workspace-repository.ts";
import { RunTokenRepository } from "./run-token-repository.ts";
import { StateVersionRepository } from "./state-version-repository.ts";
import { WorkspaceLockRepository } from "./workspace-lock-repository.ts";
import { PolicySetRepository } from "./policy-set-repository.ts";
import { PolicyResultRepository } from "./policy-result-repository.ts";
import { UserRepository } from "./user-repository.ts";
import { GitHubRepository } from "./github-repository.ts";
export { GITHUB_DELIVERY_TASK, GitHubRepository } from "./github-repository.ts";
export type {
  DeliveryStatus,
  GitHubCheckRun,
  GitHubDelivery,
  GitHubInstallation,
  SourceConnection,
} from "./github-records.ts";
import { FederationProfileRepository, SigningKeyRepository } from "./workload-identity-repository.ts";
export {
  FederationProfileRepository,
  SigningKeyRepository,
  type StoredSigningKey,
} from "./workload-identity-repository.ts";
import { AuthThrottleRepository } from "./auth-throttle-repository.ts";
import { SetupTokenRepository } from "./setup-token-repository.ts";
export type { ThrottleKey, Reservation } from "./auth-throttle-repository.ts";

export { migrateDown, migrateLatest, openDatabase, rollbackAll } from "./db.ts";
export type { Database } from "./db.ts";
export { AttemptRepository } from "./attempt-repository.ts";
export { JobRepository } from "./job-repository.ts";
export {
  LogRepository,
  type JsonLogPhase,
  type LogChunk,
  type LogPhase,
  type LogPosition,
  type LogWindow,
  type StoredLogPhase,
} from "./log-repository.ts";
export { ReviewRepository } from "./review-repository.ts";
export { announce, openRunChangeFeed, RUN_CHANGE_CHANNEL } from "./run-events.ts";
export type {
  AccessChangeNotice,
  RunChangeFeed,
  RunChangeListener,
  RunChangeNotice,
  LogChunkNotice,
  RunStateNotice,
} from "./run-events.ts";
import { AttemptRepository } from "./attempt-repository.ts";
import { JobRepository } from "./job-repository.ts";
import { LogRepository } from "./log-repository.ts";
import { ReviewRepository } from "./review-repository.ts";
import { AttestationRepository } from "./attestation-repository.ts";
export type { StoredAttestationKey, StoredRunAttestation } from "./attestation-repository.ts";
export type { Dialect, Executor } from "./dialect.ts";
export type { CreateOrganizationInput } from "./organization-repository.ts";
export type { CreateProjectInput } from "./project-repository.ts";
export type { CreateWorkspaceInput } from "./workspace-repository.ts";
export type { CreateVariableInput } from "./variable-repository.ts";
export type { CreatePrincipalInput } from "./principal-repository.ts";
export type { AuthenticatedToken, CreateTokenInput } from "./token-repository.ts";
export type { GrantInput } from "./grant-repository.ts";
export type { CreateConfigurationVersionInput, UploadedConfiguration } from "./configuration-version-repository.ts";
export type { CreateSnapshotInput, SnapshotSecretInput } from "./snapshot-repository.ts";
export type { CreateRunInput, ListRunsOptions, RunPage } from "./run-repository.ts";
export type { AuditActor, RecordAuditEventInput } from "./audit-repository.ts";
export {
  RUN_TOKEN_PHASES,
  RunTokenRepository,
  type CreateRunTokenInput,
  type FoundRunToken,
  type RunToken,
  type RunTokenPhase,
} from "./run-token-repository.ts";
export {
  StateVersionRepository,
  type CreateStateVersionInput,
  type StateVersion,
  type StateVersionOutput,
  type StateVersionStatus,
  type UploadedState,
} from "./state-version-repository.ts";
export {
  PolicySetRepository,
  type CreatePolicySetInput,
  type PolicySet,
  type PolicySetVersion,
} from "./policy-set-repository.ts";
export { PolicyResultRepository, type PolicyEvaluation, type PolicyOverride } from "./policy-result-repository.ts";
export { grantsOfMemberships, UserRepository, type Membership, type Session, type User } from "./user-repository.ts";
export {
  WorkspaceLockRepository,
  type AcquireResult,
  type LockHolder,
  type LockHolderKind,
  type WorkspaceLock,
} from "./workspace-lock-repository.ts";
export {
  AuditRepository,
  ConfigurationVersionRepository,
  GrantRepository,
  OrganizationRepository,
  PrincipalRepository,
  ProjectRepository,
  RunRepository,
  SnapshotRepository,
  TokenRepository,
  VariableRepository,
  WorkspaceRepository,
};

/** Every repository, bound to one executor. */
export interface Stores {
  organizations: OrganizationRepository;
  projects: ProjectRepository;
  workspaces: WorkspaceRepository;
  variables: VariableRepository;
  principals: PrincipalRepository;
  tokens: TokenRepository;
  grants: GrantRepository;
  configurationVersions: ConfigurationVersionRepository;
  snapshots: SnapshotRepository;
  runs: RunRepository;
  audit: AuditRepository;
  runTokens: RunTokenRepository;
  workspaceLocks: WorkspaceLockRepository;
  stateVersions: StateVersionRepository;
  attempts: AttemptRepository;
  logs: LogRepository;
  reviews: ReviewRepository;
  attestations: AttestationRepository;
  jobs: JobRepository;
  policySets: PolicySetRepository;
  policyResults: PolicyResultRepository;
  users: UserRepository;
  github: GitHubRepository;
  federationProfiles: FederationProfileRepository;
  signingKeys: SigningKeyRepository;
  authThrottles: AuthThrottleRepository;
  /** The one-time setup links printed while no deployment administrator exists. */
  setupTokens: SetupTokenRepository;
  /** Descriptors (ArtifactRefs) of the artifacts runs produce. */
  artifacts: ArtifactRepository;
}

/** Every repository running on the given database or transaction. */
export function createStores(executor: Executor, dialect: Dialect): Stores {
  return {
    organizations: new OrganizationRepository(executor, dialect),
    projects: new ProjectRepository(executor, dialect),
    workspaces: new WorkspaceRepository(executor, dialect),
    variables: new VariableRepository(executor, dialect),
    principals: new PrincipalRepository(executor, dialect),
    tokens: new TokenRepository(executor, dialect),
    grants: new GrantRepository(executor, dialect),
    configurationVersions: new ConfigurationVersionRepository(executor, dialect),
    snapshots: new SnapshotRepository(executor, dialect),
    runs: new RunRepository(executor, dialect),
    audit: new AuditRepository(executor, dialect),
    runTokens: new RunTokenRepository(executor, dialect),
    workspaceLocks: new WorkspaceLockRepository(executor, dialect),
    stateVersions: new StateVersionRepository(executor, dialect),
    attempts: new AttemptRepository(executor, dialect),
    logs: new LogRepository(executor, dialect),
    reviews: new ReviewRepository(executor, dialect),
    attestations: new AttestationRepository(executor, dialect),
    jobs: new JobRepository(executor, dialect),
    policySets: new PolicySetRepository(executor, dialect),
    policyResults: new PolicyResultRepository(executor, dialect),
    users: new UserRepository(executor, dialect),
    github: new GitHubRepository(executor, dialect),
    federationProfiles: new FederationProfileRepository(executor, dialect),
    signingKeys: new SigningKeyRepository(executor, dialect),
    authThrottles: new AuthThrottleRepository(executor, dialect),
    setupTokens: new SetupTokenRepository(executor, dialect),
    artifacts: new ArtifactRepository(executor, dialect),
  };
}

/** Runs `fn` with repositories inside one transaction: committed if it resolves, rolled back if it throws. */
export function inTransaction<T>(db: Database, fn: (stores: Stores) => Promise<T>): Promise<T> {
  return db.knex.transaction((trx) => fn(createStores(trx, db.dialect)));
}
