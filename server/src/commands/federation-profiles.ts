import { DomainError } from "../domain/errors.ts";
import type { Workspace } from "../domain/records.ts";
import {
  profileDigest,
  validateProfileContent,
  type FederationPhase,
  type FederationProfile,
  type FederationProvider,
  type FederationTarget,
} from "../domain/workload-identity.ts";
import type { Services } from "./services.ts";
import { inTransaction } from "../store/index.ts";
import { auditWorkspace } from "./workspace-audit.ts";

/**
 * Federation profiles of a workspace (create, change, verify, delete) and the workspace's
 * `plan_requires_credential`. Any change clears a verification; each use case is audited.
 */

/** Who changes or verifies a profile: the principal's id and how it is shown (`verified_by`). */
export interface Actor {
  id: string;
  label: string;
}

/** What creating a profile takes. */
export interface NewFederationProfile {
  name: string;
  provider: FederationProvider;
  audience?: string;
  target: FederationTarget;
  phases: FederationPhase[];
}

/** The audit record of `action` on `profile`: its content as it is now, and `extra`. */
function profileAudit(
  actor: Actor,
  action: string,
  profile: FederationProfile,
  now: Date,
  extra: Record<string, unknown> = {},
) {
  const data = {
    name: profile.name,
    provider: profile.provider,
    audience: profile.audience,
    target: profile.target,
    phases: profile.phases,
    workspace_id: profile.workspaceId,
    ...extra,
  };
  return {
    organizationId: profile.organizationId,
    actorId: actor.id,
    action,
    targetType: "federation-profiles",
    targetId: profile.id,
    data,
    createdAt: now,
  };
}

/** Creates an unverified profile in the workspace. */
export function createFederationProfile(
  services: Services,
  actor: Actor,
  workspace: Workspace,
  input: NewFederationProfile,
): Promise<FederationProfile> {
  const content = validateProfileContent(input);
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const profile = await stores.federationProfiles.create({
      ...content,
      organizationId: workspace.organizationId,
      workspaceId: workspace.id,
      now,
    });
    await stores.audit.record(profileAudit(actor, "federation_profile.created", profile, now));
    return profile;
  });
}

/**
 * Changes a profile; any change clears its verification. A new provider without a new target
 * (or audience) is checked as a whole, so members of the old provider are refused.
 */
export function updateFederationProfile(
  services: Services,
  actor: Actor,
  current: FederationProfile,
  changes: Partial<NewFederationProfile>,
): Promise<FederationProfile> {
  const provider = changes.provider ?? current.provider;
  const target = changes.target ?? current.target;
  // The old audience was the old provider's default or a choice; a provider or target change without one recomputes the default.
  const audience =
    changes.audience ?? (changes.provider !== undefined || changes.target !== undefined ? undefined : current.audience);
  const content = validateProfileContent({
    name: changes.name ?? current.name,
    provider,
    audience,
    target,
    phases: changes.phases ?? current.phases,
  });
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const updated = await stores.federationProfiles.update(current.id, content, now);
    if (!updated) throw new DomainError("NOT_FOUND", `Federation profile ${current.id} does not exist.`);
    await stores.audit.record(
      profileAudit(actor, "federation_profile.updated", updated, now, {
        verification_cleared: current.verifiedAt !== null,
      }),
    );
    return updated;
  });
}

/** Records an organization admin's verification of the profile as it is now. */
export function verifyFederationProfile(
  services: Services,
  actor: Actor,
  current: FederationProfile,
): Promise<FederationProfile> {
  const now = services.clock();
  const digest = profileDigest(current);
  return inTransaction(services.db, async (stores) => {
    const verified = await stores.federationProfiles.verify(current.id, actor.label, digest, now);
    if (!verified) throw new DomainError("NOT_FOUND", `Federation profile ${current.id} does not exist.`);
    await stores.audit.record(profileAudit(actor, "federation_profile.verified", verified, now, { digest }));
    return verified;
  });
}

export function deleteFederationProfile(services: Services, actor: Actor, current: FederationProfile): Promise<void> {
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    await stores.federationProfiles.delete(current.id);
    await stores.audit.record(profileAudit(actor, "federation_profile.deleted", current, now));
  });
}

/** Sets whether the workspace's plans need a cloud credential. */
export function setPlanRequiresCredential(
  services: Services,
  actor: Actor,
  workspace: Workspace,
  value: boolean,
): Promise<Workspace> {
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const updated = await stores.workspaces.updatePlanRequiresCredential(workspace.id, value, now);
    if (!updated) throw new DomainError("NOT_FOUND", `Workspace ${workspace.id} does not exist.`);
    await auditWorkspace(stores, workspace, actor.id, "workspace.updated", now, { plan_requires_credential: value });
    return updated;
  });
}
