import { canonicalize, sha256Hex } from "./canonical-json.ts";
import { DomainError } from "./errors.ts";
import type { RunKind } from "./run.ts";

/**
 * Workload identity: StackShip as an OpenID Connect issuer of short-lived tokens that a phase's
 * sandbox exchanges for cloud credentials. Pure rules: which federation profiles serve which
 * phase of which run, the token's subject and claims, the signing-key schedule.
 */

/** The clouds a profile can serve (and so the files and variables the sandbox gets). */
export const FEDERATION_PROVIDERS = ["aws", "gcp", "azure", "generic"] as const;
export type FederationProvider = (typeof FEDERATION_PROVIDERS)[number];

/** The phases a profile may serve. */
export const FEDERATION_PHASES = ["plan", "apply", "speculative_plan"] as const;
export type FederationPhase = (typeof FEDERATION_PHASES)[number];

/** What the token is exchanged for; the members used depend on the provider. */
export interface FederationTarget {
  role_arn?: string;
  workload_identity_provider?: string;
  service_account?: string;
  client_id?: string;
  tenant_id?: string;
}

/** The members each provider's target must have (and the only ones it may have). */
export const TARGET_MEMBERS: Record<FederationProvider, readonly (keyof FederationTarget)[]> = {
  aws: ["role_arn"],
  gcp: ["workload_identity_provider", "service_account"],
  azure: ["client_id", "tenant_id"],
  generic: [],
};

/** A federation profile of a workspace. */
export interface FederationProfile {
  id: string;
  organizationId: string;
  workspaceId: string;
  name: string;
  provider: FederationProvider;
  audience: string;
  target: FederationTarget;
  phases: FederationPhase[];
  verifiedAt: string | null;
  verifiedBy: string | null;
  /** The digest of the profile as it was verified (profileDigest); null when unverified. */
  verifiedDigest: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The members a profile is made of (what verification vouches for). */
export type FederationProfileContent = Pick<FederationProfile, "name" | "provider" | "audience" | "target" | "phases">;

/** The profile's audience when none is given; generic profiles have none. */
export function defaultAudience(provider: FederationProvider, target: FederationTarget): string | null {
  switch (provider) {
    case "aws":
      return "sts.amazonaws.com";
    case "gcp":
      return target.workload_identity_provider ? `//iam.googleapis.com/${target.workload_identity_provider}` : null;
    case "azure":
      return "api://AzureADTokenExchange";
    case "generic":
      return null;
  }
}

/**
 * Checks a whole profile: the target has exactly its provider's members, an audience is known.
 * Returns the profile with phases in a fixed order. FEDERATION_PROFILE_INVALID otherwise.
 */
export function validateProfileContent(input: {
  name: string;
  provider: FederationProvider;
  audience?: string | null;
  target: FederationTarget;
  phases: readonly FederationPhase[];
}): FederationProfileContent {
  const wanted = TARGET_MEMBERS[input.provider];
  const given = Object.keys(input.target) as (keyof FederationTarget)[];
  const foreign = given.filter((member) => !wanted.includes(member));
  if (foreign.length > 0) {
    throw new DomainError(
      "FEDERATION_PROFILE_INVALID",
      `A ${input.provider} profile's target has no ${foreign.join(", ")}; it takes ${wanted.length ? wanted.join(" and ") : "nothing (an empty object)"}.`,
      {
        source: { pointer: `/data/attributes/target/${foreign[0]}` },
      },
    );
  }
  const missing = wanted.filter((member) => !input.target[member]);
  if (missing.length > 0) {
    throw new DomainError(
      "FEDERATION_PROFILE_INVALID",
      `A ${input.provider} profile's target needs ${missing.join(" and ")}.`,
      { source: { pointer: "/data/attributes/target" } },
    );
  }
  const audience = input.audience ?? defaultAudience(input.provider, input.target);
  if (!audience) {
    throw new DomainError(
      "FEDERATION_PROFILE_INVALID",
      "A generic profile needs an audience: the value its relying party expects in the token's aud.",
      {
        source: { pointer: "/data/attributes/audience" },
      },
    );
  }
  const phases = FEDERATION_PHASES.filter((phase) => input.phases.includes(phase));
  if (phases.length === 0)
    throw new DomainError("FEDERATION_PROFILE_INVALID", "A profile serves at least one phase.", {
      source: { pointer: "/data/attributes/phases" },
    });
  const target: FederationTarget = {};
  for (const member of wanted) target[member] = input.target[member];
  return { name: input.name, provider: input.provider, audience, target, phases };
}

/** The digest of what a profile says; verification is bound to it. */
export function profileDigest(content: FederationProfileContent): string {
  return sha256Hex(
    canonicalize({
      name: content.name,
      provider: content.provider,
      audience: content.audience,
      target: content.target,
      phases: [...content.phases].sort(),
    }),
  );
}

/** Whether the profile is verified as it is now (a verification of an earlier version does not count). */
export function isVerified(profile: FederationProfile): boolean {
  return (
    profile.verifiedAt !== null && profile.verifiedDigest !== null && profile.verifiedDigest === profileDigest(profile)
  );
}

/** Where a run came from, as far as credentials care; today's runs are `api` or `cli`. */
export interface RunOrigin {
  kind: RunKind;
  /** `api`, `cli`, `github_push`, `github_pull_request` (older rows: `tfe-api` = cli). */
  source: string;
  /** The commit the run was made from, when its source recorded one. */
  commit?: { sha: string; fork: boolean } | null;
}

/** The run's source as the token's `source` claim names it. */
export function sourceClaim(run: RunOrigin): string {
  if (run.source === "tfe-api") return "cli";
  if (run.source === "github") return "github_push";
  return run.source;
}

/**
 * Whether the run comes from a fork pull request. A pull-request run whose commit (and so its
 * fork flag) was not recorded counts as a fork: without proof it is not one, it gets nothing.
 */
export function isForkRun(run: RunOrigin): boolean {
  if (run.commit?.fork === true) return true;
  return sourceClaim(run) === "github_pull_request" && (run.commit === undefined || run.commit === null);
}

/** The phase of a run as profiles name it. */
export function profilePhaseOf(kind: RunKind, phase: "plan" | "apply"): FederationPhase | null {
  if (kind === "speculative") return phase === "plan" ? "speculative_plan" : null;
  return phase;
}

/** Why a run's phase gets no profile. */
export type CredentialRefusal = "fork_pull_request" | "no_profile";

/**
 * The profiles that serve this phase of this run: none for a fork pull request; for a
 * speculative plan only verified `speculative_plan` profiles; for a plan_and_apply run the
 * profiles of its phase. Sorted by name.
 */
export function profilesServing(
  run: RunOrigin,
  phase: "plan" | "apply",
  profiles: readonly FederationProfile[],
): { profiles: FederationProfile[]; refusal: CredentialRefusal | null } {
  if (isForkRun(run)) return { profiles: [], refusal: "fork_pull_request" };
  const wanted = profilePhaseOf(run.kind, phase);
  if (wanted === null) return { profiles: [], refusal: "no_profile" };
  const serving = profiles
    .filter((profile) => profile.phases.includes(wanted) && (wanted !== "speculative_plan" || isVerified(profile)))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { profiles: serving, refusal: serving.length === 0 ? "no_profile" : null };
}

/** Names of the organization, project and workspace, for the subject. */
export interface TokenScope {
  organizationId: string;
  organizationName: string;
  projectId: string;
  projectName: string;
  workspaceId: string;
  workspaceName: string;
}

/**
 * The token's `sub`:
 * `organization_id:<id>:project_id:<id>:workspace_id:<id>:run_phase:<phase>:run_kind:<kind>:organization:<o>:project:<p>:workspace:<w>`.
 * The ids come first and identify the workspace for good: a workspace renamed, or deleted and
 * re-created under the same name, gets another id, so a trust policy matching the ids (e.g.
 * `organization_id:org-…:project_id:*:workspace_id:ws-…:run_phase:apply:*`) never trusts it.
 * The names, which their owners choose (project names may hold spaces and colons), come last,
 * with `%` and `:` percent-encoded, so no name can imitate the `:`-separated ids or phase even
 * under a wildcard.
 */
export function subjectOf(scope: TokenScope, phase: "plan" | "apply", kind: RunKind): string {
  const name = (value: string) => value.replaceAll("%", "%25").replaceAll(":", "%3A");
  return (
    `organization_id:${scope.organizationId}:project_id:${scope.projectId}:workspace_id:${scope.workspaceId}:run_phase:${phase}:run_kind:${kind}` +
    `:organization:${name(scope.organizationName)}:project:${name(scope.projectName)}:workspace:${name(scope.workspaceName)}`
  );
}

/** Everything a token says besides `iss`, `aud` and the times. */
export interface TokenClaims {
  sub: string;
  jti: string;
  organization_id: string;
  organization_name: string;
  project_id: string;
  project_name: string;
  workspace_id: string;
  workspace_name: string;
  run_id: string;
  run_phase: "plan" | "apply";
  run_kind: RunKind;
  source: string;
  federation_profile_id: string;
  commit_sha?: string;
}

/** The claims of one token (jti is the caller's random id). */
export function tokenClaims(
  scope: TokenScope,
  run: RunOrigin & { id: string },
  phase: "plan" | "apply",
  profile: FederationProfile,
  jti: string,
): TokenClaims {
  const claims: TokenClaims = {
    sub: subjectOf(scope, phase, run.kind),
    jti,
    organization_id: scope.organizationId,
    organization_name: scope.organizationName,
    project_id: scope.projectId,
    project_name: scope.projectName,
    workspace_id: scope.workspaceId,
    workspace_name: scope.workspaceName,
    run_id: run.id,
    run_phase: phase,
    run_kind: run.kind,
    source: sourceClaim(run),
    federation_profile_id: profile.id,
  };
  if (run.commit?.sha) claims.commit_sha = run.commit.sha;
  return claims;
}

/** The names of every claim a token may carry (the discovery document lists them). */
export const CLAIMS_SUPPORTED = [
  "iss",
  "aud",
  "sub",
  "exp",
  "iat",
  "nbf",
  "jti",
  "organization_id",
  "organization_name",
  "project_id",
  "project_name",
  "workspace_id",
  "workspace_name",
  "run_id",
  "run_phase",
  "run_kind",
  "source",
  "federation_profile_id",
  "commit_sha",
] as const;

/** The signing algorithm (RS256: what AWS, GCP and Azure all accept). */
export const SIGNING_ALGORITHM = "RS256";

/** A signing key as the schedule sees it. */
export interface SigningKeySchedule {
  kid: string;
  createdAt: string;
  /** From when it signs (a rotated-in key is published first and signs only from here). */
  signsFrom: string;
  /** The latest `exp` of any token it signed; null when it signed none. */
  lastTokenExpiresAt: string | null;
}

/**
 * The key that signs at `now`: the newest one whose `signsFrom` has come (of two, the greater
 * kid). A newer key that does not sign yet is only published. The attestation keys rotate by the
 * same rule (commands/attestations.ts).
 */
export function signingKeyAt<K extends Pick<SigningKeySchedule, "kid" | "signsFrom">>(
  keys: readonly K[],
  now: Date,
): K | undefined {
  return [...keys]
    .filter((key) => Date.parse(key.signsFrom) <= now.getTime())
    .sort((a, b) => Date.parse(b.signsFrom) - Date.parse(a.signsFrom) || (b.kid < a.kid ? -1 : 1))[0];
}

/**
 * The keys the JWKS publishes at `now`: the signing key, every key that will sign later, and
 * every older key until the last token it signed has expired. A key that was superseded is
 * retired: nothing it signed may still be valid, so it is left out.
 */
export function publishedKeysAt<K extends SigningKeySchedule>(keys: readonly K[], now: Date): K[] {
  const signing = signingKeyAt(keys, now);
  return keys.filter((key) => {
    if (key === signing) return true;
    if (Date.parse(key.signsFrom) > now.getTime()) return true;
    return key.lastTokenExpiresAt !== null && Date.parse(key.lastTokenExpiresAt) > now.getTime();
  });
}

/** The keys rotation may delete at `now`: superseded and with no token of theirs still valid. */
export function retiredKeysAt<K extends SigningKeySchedule>(keys: readonly K[], now: Date): K[] {
  const published = new Set(publishedKeysAt(keys, now));
  return keys.filter((key) => !published.has(key));
}

/** The token lifetime: until the phase's wall-clock limit, never beyond. */
export function tokenLifetime(startedAt: Date, phaseTimeoutMs: number): { iat: number; nbf: number; exp: number } {
  const iat = Math.floor(startedAt.getTime() / 1000);
  // Floor the end too: exp never passes the phase's own deadline.
  const exp = Math.floor((startedAt.getTime() + phaseTimeoutMs) / 1000);
  return { iat, nbf: iat, exp };
}
