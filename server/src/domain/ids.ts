import { randomBytes } from "node:crypto";

/** Each entity kind and the prefix its ids carry. */
export const ID_PREFIXES = {
  organization: "org",
  project: "prj",
  workspace: "ws",
  variable: "var",
  configurationVersion: "cv",
  inputSnapshot: "snap",
  snapshotSecret: "sec",
  run: "run",
  principal: "prn",
  apiToken: "at",
  grant: "grt",
  auditEvent: "evt",
  attempt: "att",
  review: "rev",
  job: "job",
  policySet: "pset",
  policySetVersion: "psv",
  policyFinding: "pfnd",
  policyOverride: "povr",
  user: "usr",
  membership: "mbr",
  session: "ses",
  federationProfile: "fp",
  attestation: "atst",
} as const;

/** An entity kind that has prefixed ids. */
export type IdKind = keyof typeof ID_PREFIXES;

declare const idBrand: unique symbol;

/** A prefixed id of one kind, e.g. `Id<'run'>` is `run-…`. */
export type Id<K extends IdKind> = `${(typeof ID_PREFIXES)[K]}-${string}` & { readonly [idBrand]: K };

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";
const SUFFIX_LENGTH = 16;
// 252 is the largest multiple of 36 below 256; bytes at or above it are dropped so every
// character is equally likely.
const UNBIASED_LIMIT = 252;

const PATTERNS = Object.fromEntries(
  Object.entries(ID_PREFIXES).map(([kind, prefix]) => [kind, new RegExp(`^${prefix}-[0-9a-z]{${SUFFIX_LENGTH}}$`)]),
) as Record<IdKind, RegExp>;

/** A new random id of the given kind: its prefix, a dash, 16 characters of [0-9a-z]. */
export function newId<K extends IdKind>(kind: K): Id<K> {
  let suffix = "";
  while (suffix.length < SUFFIX_LENGTH) {
    for (const byte of randomBytes(SUFFIX_LENGTH * 2)) {
      if (byte >= UNBIASED_LIMIT) continue;
      suffix += ALPHABET[byte % ALPHABET.length];
      if (suffix.length === SUFFIX_LENGTH) break;
    }
  }
  return `${ID_PREFIXES[kind]}-${suffix}` as Id<K>;
}

/** Whether `value` is a well-formed id of the given kind. */
export function isId<K extends IdKind>(kind: K, value: unknown): value is Id<K> {
  return typeof value === "string" && PATTERNS[kind].test(value);
}

/** The regular expression that matches ids of the given kind exactly. */
export function idPattern(kind: IdKind): RegExp {
  return PATTERNS[kind];
}
