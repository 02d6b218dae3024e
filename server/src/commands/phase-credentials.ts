import { randomUUID } from "node:crypto";
import type { Run, Workspace } from "../domain/records.ts";
import {
  profilesServing,
  signingKeyAt,
  tokenClaims,
  tokenLifetime,
  type CredentialRefusal,
  type FederationProfile,
} from "../domain/workload-identity.ts";
import type { Services } from "./services.ts";
import { inTransaction } from "../store/index.ts";
import { recordRunEvent } from "./run-transitions.ts";
import { issuerOf, keysWithOne, openSigningKey, signWorkloadToken } from "./signing-keys.ts";

/**
 * The cloud credentials of a phase attempt: which federation profiles serve it, the tokens
 * minted for them where the attempt starts, and the run that may not have one
 * (`plan_credentials_required`).
 */

/** One minted token and the profile it is for. Hold it in memory only. */
export interface MintedToken {
  profile: FederationProfile;
  token: string;
  jti: string;
  expiresAt: Date;
}

/** What a phase attempt gets: tokens, or why none. */
export interface PhaseCredentials {
  tokens: MintedToken[];
  refusal: CredentialRefusal | "workload_identity_off" | null;
}

/** The profiles of the run's workspace that serve this phase of it (none for a fork pull request). */
export async function profilesForPhase(services: Services, run: Run, phase: "plan" | "apply") {
  const profiles = await services.stores.federationProfiles.listByWorkspace(run.workspaceId);
  return profilesServing(run, phase, profiles);
}

/**
 * Whether the run must end `plan_credentials_required` before its plan: its workspace requires
 * a credential for plans and this run may not have one.
 */
export async function planCredentialsMissing(services: Services, run: Run, workspace: Workspace): Promise<boolean> {
  if (!workspace.planRequiresCredential) return false;
  if (issuerOf(services) === null) return true;
  return (await profilesForPhase(services, run, "plan")).profiles.length === 0;
}

/**
 * Ends a pending run `plan_credentials_required` when its workspace requires a credential for
 * plans and the run may not have one; before any lock, token or sandbox. Returns whether it did
 * (false also when the run moved on concurrently).
 */
export async function endRunWithoutPlanCredentials(services: Services, run: Run): Promise<boolean> {
  if (run.status !== "pending") return false;
  const workspace = await services.stores.workspaces.getById(run.workspaceId);
  if (!workspace || !(await planCredentialsMissing(services, run, workspace))) return false;
  const why =
    issuerOf(services) === null ? "workload_identity_off" : (await profilesForPhase(services, run, "plan")).refusal;
  const now = services.clock();
  try {
    await inTransaction(services.db, async (stores) => {
      const current = await stores.runs.getById(run.id);
      if (!current) return;
      await recordRunEvent(
        stores,
        current,
        { type: "plan_credentials_unavailable" },
        {
          now,
          audit: [
            {
              organizationId: run.organizationId,
              actorId: null,
              action: "run.plan_credentials_required",
              targetType: "runs",
              targetId: run.id,
              data: { refusal: why, workspace_id: workspace.id },
            },
          ],
        },
      );
    });
  } catch (error) {
    if ((error as { code?: string }).code === "RUN_TRANSITION_INVALID") return false;
    throw error;
  }
  return true;
}

/**
 * Mints one token per profile serving this phase of the run, valid from `startedAt` until the
 * phase's wall-clock limit. Each mint is audited (profile, key, jti, expiry; never the token).
 */
export async function mintPhaseCredentials(
  services: Services,
  run: Run,
  phase: "plan" | "apply",
  { startedAt, phaseTimeoutMs }: { startedAt: Date; phaseTimeoutMs: number },
): Promise<PhaseCredentials> {
  const issuer = issuerOf(services);
  const { profiles, refusal } = await profilesForPhase(services, run, phase);
  if (profiles.length === 0) return { tokens: [], refusal };
  if (issuer === null) return { tokens: [], refusal: "workload_identity_off" };
  const [workspace, organization, project] = await Promise.all([
    services.stores.workspaces.getById(run.workspaceId),
    services.stores.organizations.getById(run.organizationId),
    services.stores.projects.getById(run.projectId),
  ]);
  if (!workspace || !organization || !project)
    throw new Error(`run ${run.id}: its workspace, project or organization is missing`);
  const scope = {
    organizationId: organization.id,
    organizationName: organization.name,
    projectId: project.id,
    projectName: project.name,
    workspaceId: workspace.id,
    workspaceName: workspace.name,
  };
  const key = signingKeyAt(await keysWithOne(services), services.clock());
  if (!key) throw new Error("no workload identity signing key signs yet");
  const privateKey = await openSigningKey(services, key);
  const { iat, nbf, exp } = tokenLifetime(startedAt, phaseTimeoutMs);
  const expiresAt = new Date(exp * 1000);
  // Recorded before any token exists: the key stays published for as long as the tokens are valid.
  await services.stores.signingKeys.noteTokenExpiry(key.kid, expiresAt);
  const tokens: MintedToken[] = [];
  for (const profile of profiles) {
    const jti = randomUUID();
    const token = await signWorkloadToken(
      privateKey,
      key.kid,
      issuer,
      profile.audience,
      tokenClaims(scope, run, phase, profile, jti),
      { iat, nbf, exp },
    );
    tokens.push({ profile, token, jti, expiresAt });
  }
  await services.stores.audit.record({
    organizationId: run.organizationId,
    actorId: null,
    action: "workload_identity.tokens_minted",
    targetType: "runs",
    targetId: run.id,
    data: {
      phase,
      kid: key.kid,
      expires_at: expiresAt.toISOString(),
      tokens: tokens.map((t) => ({ federation_profile_id: t.profile.id, jti: t.jti, audience: t.profile.audience })),
    },
    createdAt: services.clock(),
  });
  return { tokens, refusal: null };
}
