import { canonicalize, sha256Hex } from "../canonical-json.ts";
import { DomainError } from "../errors.ts";
import type { PolicyOutcome } from "../run-lifecycle.ts";

/**
 * The policy stage's pure rules: the policy module contract (policies/README.md), the digest of
 * a policy set version, the outcome of an evaluation from its findings, and the result digest
 * an approval binds to.
 */

/** How much a policy's findings block a run. */
export const ENFORCEMENT_LEVELS = ["advisory", "soft_mandatory", "hard_mandatory"] as const;
/** An enforcement level. */
export type EnforcementLevel = (typeof ENFORCEMENT_LEVELS)[number];

/** The format tag of the canonical policy result. */
export const POLICY_RESULT_FORMAT = "stackship.policy-result/v1";
/** The most findings one policy may report; more make the evaluation errored. */
export const MAX_FINDINGS_PER_POLICY = 500;
/** Longest stored title, message and address; longer text is cut with an ellipsis. */
export const MAX_FINDING_TEXT = 4000;
/** The most override records a run's review lists. */
export const REVIEW_OVERRIDE_LIMIT = 256;
/** Override duration bounds, in seconds. */
export const OVERRIDE_DEFAULT_SECONDS = 3600;
export const OVERRIDE_MAX_SECONDS = 86_400;

/** A policy as a version stores it. */
export interface PolicyModule {
  name: string;
  enforcementLevel: EnforcementLevel;
  /** The Rego package the module declares (the query is `data.<package>.violations`). */
  package: string;
  source: string;
  sourceDigest: string;
}

/** A version of a policy set as a run pins it. */
export interface PinnedPolicySetVersion {
  policySetId: string;
  version: number;
  digest: string;
}

/** One finding, as persisted (text already sanitized). */
export interface PolicyFinding {
  policySetId: string;
  policySetVersion: number;
  policy: string;
  enforcementLevel: EnforcementLevel;
  title: string;
  message: string;
  address: string | null;
}

/** A finding exactly as a policy's `violations` rule yields it (before sanitizing). */
export interface RawViolation {
  title: string;
  message: string;
  address: string | null;
}

const PACKAGE_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * The package a Rego module declares: the first `package` clause outside comments. Only dotted
 * identifiers are accepted, so the package path can be queried as `data.<package>.violations`.
 */
export function regoPackage(source: string): string {
  for (const rawLine of source.split("\n")) {
    const line = rawLine.replace(/#.*$/, "").trim();
    if (line === "") continue;
    const match = /^package\s+(\S+)\s*$/.exec(line);
    if (match && PACKAGE_PATTERN.test(match[1]) && match[1] !== "data" && !match[1].startsWith("data."))
      return match[1];
    break;
  }
  throw new DomainError(
    "POLICY_SOURCE_INVALID",
    "A policy module must start with a `package` clause naming a dotted identifier path (for example `package stackship.tags`).",
  );
}

/** The policies of a new version, validated, with their packages and source digests. */
export function preparePolicies(
  policies: ReadonlyArray<{ name: string; enforcement_level: EnforcementLevel; source: string }>,
): PolicyModule[] {
  const seen = new Set<string>();
  return policies.map((policy, index) => {
    if (seen.has(policy.name)) {
      throw new DomainError(
        "POLICY_SOURCE_INVALID",
        `Two policies are named '${policy.name}'; names are unique within a policy set.`,
        {
          source: { pointer: `/data/attributes/policies/${index}/name` },
        },
      );
    }
    seen.add(policy.name);
    let pkg: string;
    try {
      pkg = regoPackage(policy.source);
    } catch (error) {
      if (error instanceof DomainError)
        throw new DomainError(error.code, `Policy '${policy.name}': ${error.message}`, {
          source: { pointer: `/data/attributes/policies/${index}/source` },
        });
      throw error;
    }
    return {
      name: policy.name,
      enforcementLevel: policy.enforcement_level,
      package: pkg,
      source: policy.source,
      sourceDigest: sha256Hex(policy.source),
    };
  });
}

/** SHA-256 over the canonical encoding of a version's policies (names, levels, packages, sources). */
export function policySetVersionDigest(policies: readonly PolicyModule[]): string {
  return sha256Hex(
    canonicalize({
      format: "stackship.policy-set-version/v1",
      policies: policies.map((p) => ({
        name: p.name,
        enforcement_level: p.enforcementLevel,
        package: p.package,
        source_sha256: p.sourceDigest,
      })),
    }),
  );
}

function clip(text: string): string {
  return text.length <= MAX_FINDING_TEXT ? text : `${text.slice(0, MAX_FINDING_TEXT - 1)}…`;
}

/**
 * The violations of one policy from the value OPA printed for `data.<package>.violations`
 * (a set, which OPA prints as a JSON array). Anything else breaks the contract and throws.
 * `redact` runs on each text before it is clipped, so a sensitive value the clip would cut in two
 * is still replaced whole.
 */
export function parseViolations(value: unknown, redact: (text: string) => string = (text) => text): RawViolation[] {
  if (!Array.isArray(value)) throw new Error("the `violations` rule is not a set");
  if (value.length > MAX_FINDINGS_PER_POLICY)
    throw new Error(`the policy reported ${value.length} violations (at most ${MAX_FINDINGS_PER_POLICY})`);
  return value.map((item, index) => {
    if (typeof item !== "object" || item === null || Array.isArray(item))
      throw new Error(`violation ${index} is not an object`);
    const { title, message, address } = item as Record<string, unknown>;
    if (typeof title !== "string" || typeof message !== "string")
      throw new Error(`violation ${index} needs string \`title\` and \`message\``);
    if (address !== undefined && address !== null && typeof address !== "string")
      throw new Error(`violation ${index} has a non-string \`address\``);
    return {
      title: clip(redact(title)),
      message: clip(redact(message)),
      address: typeof address === "string" ? clip(redact(address)) : null,
    };
  });
}

/** The outcome from the findings: any hard-mandatory finding fails hard, any soft-mandatory fails soft; advisory never blocks. */
export function outcomeOf(
  findings: readonly Pick<PolicyFinding, "enforcementLevel">[],
  errored: boolean,
): PolicyOutcome {
  if (errored) return "errored";
  if (findings.some((f) => f.enforcementLevel === "hard_mandatory")) return "hard_failed";
  if (findings.some((f) => f.enforcementLevel === "soft_mandatory")) return "soft_failed";
  return "passed";
}

/** Findings in their canonical order (so the digest does not depend on OPA's set order). */
export function sortFindings<T extends PolicyFinding>(findings: readonly T[]): T[] {
  const key = (f: PolicyFinding) => canonicalize([f.policySetId, f.policy, f.address ?? "", f.title, f.message]);
  return [...findings].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** What the result digest covers. */
export interface PolicyResult {
  outcome: PolicyOutcome;
  policySetVersions: readonly PinnedPolicySetVersion[];
  findings: readonly PolicyFinding[];
  /** The OPA version that evaluated, null when none ran. */
  opaVersion: string | null;
}

/** A pinned policy set version as the result digest and the API write it. */
export function pinnedVersionDocument(v: PinnedPolicySetVersion): {
  policy_set_id: string;
  version: number;
  digest: string;
} {
  return { policy_set_id: v.policySetId, version: v.version, digest: v.digest };
}

/** A finding as the result digest and the API write it. */
export function findingDocument(f: PolicyFinding) {
  return {
    policy_set_id: f.policySetId,
    policy_set_version: f.policySetVersion,
    policy: f.policy,
    enforcement_level: f.enforcementLevel,
    title: f.title,
    message: f.message,
    address: f.address,
  };
}

/** SHA-256 over the canonical result: policy set versions, findings, outcome and OPA version. */
export function policyResultDigest(result: PolicyResult): string {
  const document: Record<string, unknown> = {
    format: POLICY_RESULT_FORMAT,
    outcome: result.outcome,
    policy_set_versions: [...result.policySetVersions]
      .sort((a, b) => (a.policySetId < b.policySetId ? -1 : a.policySetId > b.policySetId ? 1 : 0))
      .map(pinnedVersionDocument),
    findings: sortFindings(result.findings).map(findingDocument),
  };
  // A skipped stage ran no OPA; its digest keeps the shape it always had.
  if (result.opaVersion !== null) document.opa_version = result.opaVersion;
  return sha256Hex(canonicalize(document));
}

/** Whether an override record still covers `digest` at `now`. */
export function overrideCovers(
  override: { resultDigest: string; expiresAt: string },
  digest: string | null,
  now: Date,
): boolean {
  return digest !== null && override.resultDigest === digest && new Date(override.expiresAt).getTime() > now.getTime();
}
