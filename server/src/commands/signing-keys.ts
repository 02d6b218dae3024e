import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, importPKCS8, SignJWT } from "jose";
import { DomainError } from "../domain/errors.ts";
import {
  CLAIMS_SUPPORTED,
  publishedKeysAt,
  retiredKeysAt,
  SIGNING_ALGORITHM,
  type TokenClaims,
} from "../domain/workload-identity.ts";
import type { Services } from "./services.ts";
import { inTransaction, type StoredSigningKey } from "../store/index.ts";

/**
 * The workload identity issuer: its discovery document and key set, its signing keys (made,
 * sealed, rotated, opened) and the signing of one token.
 */

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
async function newSigningKey(
  services: Services,
  createdAt: Date,
  signsFrom: Date,
): Promise<Omit<StoredSigningKey, "lastTokenExpiresAt">> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALGORITHM, {
    extractable: true,
    modulusLength: 2048,
  });
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
export async function keysWithOne(services: Services): Promise<StoredSigningKey[]> {
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
  return {
    keys: keys.map(
      (key) => key.publicJwk as { kty: "RSA"; kid: string; use: "sig"; alg: "RS256"; n: string; e: string },
    ),
  };
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
export async function rotateSigningKeys(
  services: Services,
  { publishLeadMs }: { publishLeadMs: number },
): Promise<RotationResult> {
  if (!Number.isFinite(publishLeadMs) || publishLeadMs < 0)
    throw new Error("the publish lead must be zero or more milliseconds");
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
    found = importPKCS8(services.keys.signingKeys.openText(key.privateKeySealed), SIGNING_ALGORITHM);
    found.catch(() => imported.delete(key.kid));
    imported.set(key.kid, found);
  }
  return found;
}

/** Signs one token (RS256 signatures are deterministic: the same inputs give the same token). */
export function signWorkloadToken(
  privateKey: CryptoKey,
  kid: string,
  issuer: string,
  audience: string,
  claims: TokenClaims,
  times: { iat: number; nbf: number; exp: number },
): Promise<string> {
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
