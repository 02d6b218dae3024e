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

type MigrationModule = Pick<NamedMigration, "up" | "down">;

const named = (name: string, { up, down }: MigrationModule): NamedMigration => ({ name, up, down });

/** Every migration, oldest first. Add new ones here: nothing is discovered from the filesystem. */
export const migrations: readonly NamedMigration[] = [
  named("20261202000000_create_foundation", createFoundation),
  named("20261202010000_create_run_execution", createRunExecution),
  named("20261202020000_create_state_and_locks", createStateAndLocks),
  named("20261202040000_add_plan_diff", addPlanDiff),
  named("20261202050000_create_policies", createPolicies),
  named("20261202060000_create_artifact_descriptors", createArtifactDescriptors),
  named("20261202070000_create_users_and_sessions", createUsersAndSessions),
  named("20261202080000_create_workspace_tags", createWorkspaceTags),
  named("20261203000000_add_log_chunk_offsets", addLogChunkOffsets),
  named("20261203010000_create_github_source", createGithubSource),
  named("20261203100000_create_auth_throttles", createAuthThrottles),
  named("20261203110000_create_workload_identity", createWorkloadIdentity),
  named("20261203140500_create_artifact_objects", createArtifactObjects),
  named("20261203140600_create_artifacts", createArtifacts),
  named("20261204170000_add_plan_evidence_digests", addPlanEvidenceDigests),
  named("20261204180000_create_github_installation_bindings", createGithubInstallationBindings),
  named("20261204190000_add_access_revocation", addAccessRevocation),
  named("20261204200000_create_audit_chain", createAuditChain),
  named("20261204213000_create_run_attestations", createRunAttestations),
  named("20261204214000_add_attempt_provenance", addAttemptProvenance),
  named("20261204223500_add_attestation_first_key", addAttestationFirstKey),
  named("20261204224545_create_setup_tokens", createSetupTokens),
  named("20261205121500_add_structured_run_output", addStructuredRunOutput),
  named("20261205123000_add_workspace_deletion", addWorkspaceDeletion),
  named("20261205170000_add_json_log_phases", addJsonLogPhases),
  named("20261206100000_add_version_artifacts", addVersionArtifacts),
];
