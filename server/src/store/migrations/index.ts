import type { Knex } from "knex";
import * as createFoundation from "./20261202000000_create_foundation.ts";
import * as createRunExecution from "./20261202010000_create_run_execution.ts";
import * as createStateAndLocks from "./20261202020000_create_state_and_locks.ts";
import * as addPlanDiff from "./20261202040000_add_plan_diff.ts";
import * as createPolicies from "./20261202050000_create_policies.ts";
import * as createArtifactDescriptors from "./20261202060000_create_artifact_descriptors.ts";
import * as createUsersAndSessions from "./20261202070000_create_users_and_sessions.ts";
import * as createWorkspaceTags from "./20261202080000_create_workspace_tags.ts";
import * as addLogChunkOffsets from "./20261203000000_add_log_chunk_offsets.ts";
import * as createGithubSource from "./20261203010000_create_github_source.ts";
import * as createAuthThrottles from "./20261203100000_create_auth_throttles.ts";
import * as createWorkloadIdentity from "./20261203110000_create_workload_identity.ts";
import * as createArtifactObjects from "./20261203140500_create_artifact_objects.ts";
import * as createArtifacts from "./20261203140600_create_artifacts.ts";
import * as addAccessRevocation from "./20261204190000_add_access_revocation.ts";
import * as addPlanEvidenceDigests from "./20261204170000_add_plan_evidence_digests.ts";
import * as createGithubInstallationBindings from "./20261204180000_create_github_installation_bindings.ts";
import * as createAuditChain from "./20261204200000_create_audit_chain.ts";
import * as createRunAttestations from "./20261204213000_create_run_attestations.ts";
import * as addAttemptProvenance from "./20261204214000_add_attempt_provenance.ts";
import * as addAttestationFirstKey from "./20261204223500_add_attestation_first_key.ts";
import * as createSetupTokens from "./20261204224545_create_setup_tokens.ts";
import * as addStructuredRunOutput from "./20261205121500_add_structured_run_output.ts";
import * as addWorkspaceDeletion from "./20261205123000_add_workspace_deletion.ts";
import * as addJsonLogPhases from "./20261205170000_add_json_log_phases.ts";
import * as addVersionArtifacts from "./20261206100000_add_version_artifacts.ts";

/** A migration as the migration source serves it. */
export interface NamedMigration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Every migration, oldest first. Add new ones here: nothing is discovered from the filesystem. */
export const migrations: readonly NamedMigration[] = [
  { name: "20261202000000_create_foundation", up: createFoundation.up, down: createFoundation.down },
  { name: "20261202010000_create_run_execution", up: createRunExecution.up, down: createRunExecution.down },
  { name: "20261202020000_create_state_and_locks", up: createStateAndLocks.up, down: createStateAndLocks.down },
  { name: "20261202040000_add_plan_diff", up: addPlanDiff.up, down: addPlanDiff.down },
  { name: "20261202050000_create_policies", up: createPolicies.up, down: createPolicies.down },
  {
    name: "20261202060000_create_artifact_descriptors",
    up: createArtifactDescriptors.up,
    down: createArtifactDescriptors.down,
  },
  {
    name: "20261202070000_create_users_and_sessions",
    up: createUsersAndSessions.up,
    down: createUsersAndSessions.down,
  },
  { name: "20261202080000_create_workspace_tags", up: createWorkspaceTags.up, down: createWorkspaceTags.down },
  { name: "20261203000000_add_log_chunk_offsets", up: addLogChunkOffsets.up, down: addLogChunkOffsets.down },
  { name: "20261203010000_create_github_source", up: createGithubSource.up, down: createGithubSource.down },
  { name: "20261203100000_create_auth_throttles", up: createAuthThrottles.up, down: createAuthThrottles.down },
  { name: "20261203110000_create_workload_identity", up: createWorkloadIdentity.up, down: createWorkloadIdentity.down },
  { name: "20261203140500_create_artifact_objects", up: createArtifactObjects.up, down: createArtifactObjects.down },
  { name: "20261203140600_create_artifacts", up: createArtifacts.up, down: createArtifacts.down },
  {
    name: "20261204170000_add_plan_evidence_digests",
    up: addPlanEvidenceDigests.up,
    down: addPlanEvidenceDigests.down,
  },
  {
    name: "20261204180000_create_github_installation_bindings",
    up: createGithubInstallationBindings.up,
    down: createGithubInstallationBindings.down,
  },
  { name: "20261204190000_add_access_revocation", up: addAccessRevocation.up, down: addAccessRevocation.down },
  { name: "20261204200000_create_audit_chain", up: createAuditChain.up, down: createAuditChain.down },
  { name: "20261204213000_create_run_attestations", up: createRunAttestations.up, down: createRunAttestations.down },
  { name: "20261204214000_add_attempt_provenance", up: addAttemptProvenance.up, down: addAttemptProvenance.down },
  {
    name: "20261204223500_add_attestation_first_key",
    up: addAttestationFirstKey.up,
    down: addAttestationFirstKey.down,
  },
  { name: "20261204224545_create_setup_tokens", up: createSetupTokens.up, down: createSetupTokens.down },
  {
    name: "20261205121500_add_structured_run_output",
    up: addStructuredRunOutput.up,
    down: addStructuredRunOutput.down,
  },
  { name: "20261205123000_add_workspace_deletion", up: addWorkspaceDeletion.up, down: addWorkspaceDeletion.down },
  { name: "20261205170000_add_json_log_phases", up: addJsonLogPhases.up, down: addJsonLogPhases.down },
  { name: "20261206100000_add_version_artifacts", up: addVersionArtifacts.up, down: addVersionArtifacts.down },
];
