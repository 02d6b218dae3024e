import { randomUUID } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, importPKCS8, SignJWT } from "jose";
import { DomainError } from "../domain/errors.ts";
import type { Run, Workspace } from "../domain/records.ts";
import {
  CLAIMS_SUPPORTED,
  isVerified,
  profileDigest,
  profilesServing,
  publishedKeysAt,
  retiredKeysAt,
  SIGNING_ALGORITHM,
  signingKeyAt,
  tokenClaims,
  tokenLifetime,
  validateProfileContent,
  type CredentialRefusal,
  type FederationPhase,
  type FederationProfile,
  type FederationProvider,
  type FederationTarget,
  type TokenClaims,
} from "../domain/workload-identity.ts";
import type { Services } from "../services.ts";
import { inTransaction, type StoredSigningKey } from "../store/index.ts";
import { applyRunEvent } from "../api/commands/run-decisions.ts";

/**
 * Workload identity use cases: the issuer (discovery, key set, key rotation), federation
 * profiles (create, change, verify, delete) and the tokens a phase attempt gets.
 */

/** Who changes or verifies a profile: the principal's id and how it is shown (`verified_by`). */
export interface Actor {
  id: string;
  label: string;
}

/** The issuer: exactly STACKSHIP_PUBLIC_URL, or null (workload identity off). */
export function issuerOf(services: Services): string | null {
  return services.config.publicUrl;
}

function requireIssuer(services: Services): string {
  const issuer = issuerOf(services);
  if (issuer === null) {
    throw new DomainError(
      "WORKLOAD_IDENTITY_UNAVAILABLE",
      "Workload identity is off on this deployment: set STACKSHIP_PUBLIC_URL to the URL clouds reach StackShip at (it becomes the token issuer).",
    );
  }
  return issuer;
}

/** The OpenID Connect discovery document. */
export function openIdConfiguration(services: Services) {
  const issuer = requireIssuer(services);
  return {
    issuer,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    response_types_supported: ["id_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [SIGNING_ALGORITHM],
    scopes_supported: ["openid"],
    claims_supported: [...CLAIMS_SUPPORTED],
  };
}

/** A fresh RS256 key pair, the private half sealed with the master key. */
async function newSigningKey(services: Services, createdAt: Date, signsFrom: Date): Promise<Omit<StoredSigningKey, "lastTokenExpiresAt">> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true, modulusLength: 2048 });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk);
  return {
    kid,
    algorithm: SIGNING_ALGORITHM,
    publicJwk: { kty: jwk.kty, n: jwk.n, e: jwk.e, kid, use: "sig", alg: SIGNING_ALGORITHM },
    privateKeySealed: services.keys.signingKeys.sealText(await exportPKCS8(privateKey)),
    createdAt: createdAt.toISOString(),
    signsFrom: signsFrom.toISOString(),
  };
}

/** The stored keys, creating the first one (signing at once: nobody can have cached a key set yet). */
async function keysWithOne(services: Services): Promise<StoredSigningKey[]> {
  const keys = await services.stores.signingKeys.list();
  if (keys.length > 0) return keys;
  const now = services.clock();
  await services.stores.signingKeys.add(await newSigningKey(services, now, now));
  return services.stores.signingKeys.list();
}

/** The JWKS: the signing key, keys about to sign, and retired keys while a token of theirs is valid. */
export async function jsonWebKeySet(services: Services) {
  requireIssuer(services);
  const keys = publishedKeysAt(await keysWithOne(services), services.clock());
  return { keys: keys.map((key) => key.publicJwk as { kty: "RSA"; kid: string; use: "sig"; alg: "RS256"; n: string; e: string }) };
}

/** What a rotation did. */
export interface RotationResult {
  added: { kid: string; signsFrom: string };
  /** Keys deleted: superseded, and every token they signed has expired. */
  removed: string[];
  published: string[];
}

/**
 * Rotation: a new key is published now and signs from `now + publishLeadMs`, so relying parties
 * that cache the key set see it before any token it signed. The key it supersedes stays
 * published until the last token it signed has expired; keys past that are deleted.
 */
export async function rotateSigningKeys(services: Services, { publishLeadMs }: { publishLeadMs: number }): Promise<RotationResult> {
  if (!Number.isFinite(publishLeadMs) || publishLeadMs < 0) throw new Error("the publish lead must be zero or more milliseconds");
  const now = services.clock();
  const existing = await services.stores.signingKeys.list();
  // With no key at all nothing can have been cached: the first key signs at once.
  const signsFrom = existing.length === 0 ? now : new Date(now.getTime() + publishLeadMs);
  const key = await newSigningKey(services, now, signsFrom);
  const removed = retiredKeysAt(existing, now).map((k) => k.kid);
  await inTransaction(services.db, async (stores) => {
    await stores.signingKeys.add(key);
    await stores.signingKeys.delete(removed);
    await stores.audit.record({
      organizationId: null,
      actorId: null,
      action: "workload_identity.key_rotated",
      targetType: "workload-identity-keys",
      targetId: key.kid,
      data: { kid: key.kid, signs_from: key.signsFrom, removed },
      createdAt: now,
    });
  });
  const published = publishedKeysAt(await services.stores.signingKeys.list(), now).map((k) => k.kid);
  return { added: { kid: key.kid, signsFrom: key.signsFrom }, removed, published };
}

// Imported private keys by kid: importing an RSA key costs more than signing with it.
const imported = new Map<string, Promise<CryptoKey>>();

function privateKeyOf(services: Services, key: StoredSigningKey): Promise<CryptoKey> {
  let found = imported.get(key.kid);
  if (!found) {
    found = importPKCS8(services.keys.signingKeys.openText(key.privateKeySealed), SIGNING_ALGORITHM) as Promise<CryptoKey>;
    found.catch(() => imported.delete(key.kid));
    imported.set(key.kid, found);
  }
  return found;
}

/** Signs one token (RS256 signatures are deterministic: the same inputs give the same token). */
export function signWorkloadToken(privateKey: CryptoKey, kid: string, issuer: string, audience: string, claims: TokenClaims, times: { iat: number; nbf: number; exp: number }): Promise<string> {
  const { sub, jti, ...rest } = claims;
  return new SignJWT({ ...rest })
    .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid, typ: "JWT" })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject(sub)
    .setIssuedAt(times.iat)
    .setNotBefore(times.nbf)
    .setExpirationTime(times.exp)
    .setJti(jti)
    .sign(privateKey);
}

/** The private key of a stored signing key, opened from its seal (imported once per process). */
export function openSigningKey(services: Services, key: StoredSigningKey): Promise<CryptoKey> {
  return privateKeyOf(services, key);
}

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
  const why = issuerOf(services) === null ? "workload_identity_off" : (await profilesForPhase(services, run, "plan")).refusal;
  const now = services.clock();
  try {
    await inTransaction(services.db, async (stores) => {
      const current = await stores.runs.getById(run.id);
      if (!current) return;
      await applyRunEvent(stores, current, { type: "plan_credentials_unavailable" }, now, { planStatus: "canceled", finishedAt: now.toISOString() });
      await stores.audit.record({
        organizationId: run.organizationId,
        actorId: null,
        action: "run.plan_credentials_required",
        targetType: "runs",
        targetId: run.id,
        data: { refusal: why, workspace_id: workspace.id },
        createdAt: now,
      });
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
export async function mintPhaseCredentials(services: Services, run: Run, phase: "plan" | "apply", { startedAt, phaseTimeoutMs }: { startedAt: Date; phaseTimeoutMs: number }): Promise<PhaseCredentials> {
  const issuer = issuerOf(services);
  const { profiles, refusal } = await profilesForPhase(services, run, phase);
  if (profiles.length === 0) return { tokens: [], refusal };
  if (issuer === null) return { tokens: [], refusal: "workload_identity_off" };
  const [workspace, organization, project] = await Promise.all([
    services.stores.workspaces.getById(run.workspaceId),
    services.stores.organizations.getById(run.organizationId),
    services.stores.projects.getById(run.projectId),
  ]);
  if (!workspace || !organization || !project) throw new Error(`run ${run.id}: its workspace, project or organization is missing`);
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
  const privateKey = await privateKeyOf(services, key);
  const { iat, nbf, exp } = tokenLifetime(startedAt, phaseTimeoutMs);
  const expiresAt = new Date(exp * 1000);
  // Recorded before any token exists: the key stays published for as long as the tokens are valid.
  await services.stores.signingKeys.noteTokenExpiry(key.kid, expiresAt);
  const tokens: MintedToken[] = [];
  for (const profile of profiles) {
    const jti = randomUUID();
    const token = await signWorkloadToken(privateKey, key.kid, issuer, profile.audience, tokenClaims(scope, run, phase, profile, jti), { iat, nbf, exp });
    tokens.push({ profile, token, jti, expiresAt });
  }
  await services.stores.audit.record({
    organizationId: run.organizationId,
    actorId: null,
    action: "workload_identity.tokens_minted",
    targetType: "runs",
    targetId: run.id,
    data: { phase, kid: key.kid, expires_at: expiresAt.toISOString(), tokens: tokens.map((t) => ({ federation_profile_id: t.profile.id, jti: t.jti, audience: t.profile.audience })) },
    createdAt: services.clock(),
  });
  return { tokens, refusal: null };
}

// ---- federation profiles

/** What creating a profile takes. */
export interface NewFederationProfile {
  name: string;
  provider: FederationProvider;
  audience?: string;
  target: FederationTarget;
  phases: FederationPhase[];
}

function profileAuditData(profile: FederationProfile) {
  return { name: profile.name, provider: profile.provider, audience: profile.audience, target: profile.target, phases: profile.phases, workspace_id: profile.workspaceId };
}

/** Creates an unverified profile in the workspace. */
export function createFederationProfile(services: Services, actor: Actor, workspace: Workspace, input: NewFederationProfile): Promise<FederationProfile> {
  const content = validateProfileContent(input);
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const profile = await stores.federationProfiles.create({ ...content, organizationId: workspace.organizationId, workspaceId: workspace.id, now });
    await stores.audit.record({ organizationId: workspace.organizationId, actorId: actor.id, action: "federation_profile.created", targetType: "federation-profiles", targetId: profile.id, data: profileAuditData(profile), createdAt: now });
    return profile;
  });
}

/**
 * Changes a profile; any change clears its verification. A new provider without a new target
 * (or audience) is checked as a whole, so members of the old provider are refused.
 */
export function updateFederationProfile(services: Services, actor: Actor, current: FederationProfile, changes: Partial<NewFederationProfile>): Promise<FederationProfile> {
  const provider = changes.provider ?? current.provider;
  const target = changes.target ?? current.target;
  // The old audience was the old provider's default or a choice; a provider or target change without one recomputes the default.
  const audience = changes.audience ?? (changes.provider !== undefined || changes.target !== undefined ? undefined : current.audience);
  const content = validateProfileContent({ name: changes.name ?? current.name, provider, audience, target, phases: changes.phases ?? current.phases });
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const updated = await stores.federationProfiles.update(current.id, content, now);
    if (!updated) throw new DomainError("NOT_FOUND", `Federation profile ${current.id} does not exist.`);
    await stores.audit.record({
      organizationId: current.organizationId,
      actorId: actor.id,
      action: "federation_profile.updated",
      targetType: "federation-profiles",
      targetId: current.id,
      data: { ...profileAuditData(updated), verification_cleared: current.verifiedAt !== null },
      createdAt: now,
    });
    return updated;
  });
}

/** Records an organization admin's verification of the profile as it is now. */
export function verifyFederationProfile(services: Services, actor: Actor, current: FederationProfile): Promise<FederationProfile> {
  const now = services.clock();
  const digest = profileDigest(current);
  return inTransaction(services.db, async (stores) => {
    const verified = await stores.federationProfiles.verify(current.id, actor.label, digest, now);
    if (!verified) throw new DomainError("NOT_FOUND", `Federation profile ${current.id} does not exist.`);
    await stores.audit.record({
      organizationId: current.organizationId,
      actorId: actor.id,
      action: "federation_profile.verified",
      targetType: "federation-profiles",
      targetId: current.id,
      data: { ...profileAuditData(verified), digest },
      createdAt: now,
    });
    return verified;
  });
}

export function deleteFederationProfile(services: Services, actor: Actor, current: FederationProfile): Promise<void> {
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    await stores.federationProfiles.delete(current.id);
    await stores.audit.record({ organizationId: current.organizationId, actorId: actor.id, action: "federation_profile.deleted", targetType: "federation-profiles", targetId: current.id, data: profileAuditData(current), createdAt: now });
  });
}

/** Sets whether the workspace's plans need a cloud credential. */
export function setPlanRequiresCredential(services: Services, actor: Actor, workspace: Workspace, value: boolean): Promise<Workspace> {
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const updated = await stores.workspaces.updatePlanRequiresCredential(workspace.id, value, now);
    if (!updated) throw new DomainError("NOT_FOUND", `Workspace ${workspace.id} does not exist.`);
    await stores.audit.record({ organizationId: workspace.organizationId, actorId: actor.id, action: "workspace.updated", targetType: "workspaces", targetId: workspace.id, data: { plan_requires_credential: value }, createdAt: now });
    return updated;
  });
}

export { isVerified };
