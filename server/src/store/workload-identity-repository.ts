import type { FederationProfile, FederationProfileContent } from "../domain/workload-identity.ts";
import { newId } from "../domain/ids.ts";
import { Repository } from "./repository.ts";
import type { DbTimestamp } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite } from "./values.ts";
import { rowMapper } from "./columns.ts";

interface FederationProfileRow {
  id: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  provider: string;
  audience: string;
  target: string;
  phases: string;
  verified_at: DbTimestamp | null;
  verified_by: string | null;
  verified_digest: string | null;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
}

const toProfile = rowMapper<FederationProfileRow, FederationProfile>()(
  "id organization_id workspace_id name provider:as audience target:json phases:json verified_at:iso? verified_by verified_digest created_at:iso updated_at:iso",
);

/** Federation profiles: which cloud identity a workspace's phases may assume. */
export class FederationProfileRepository extends Repository {
  /** Creates an unverified profile; a name taken in the workspace throws FEDERATION_PROFILE_NAME_TAKEN. */
  async create(
    input: FederationProfileContent & { organizationId: string; workspaceId: string; now: Date | string },
  ): Promise<FederationProfile> {
    const at = isoForWrite(input.now);
    const row = toProfile.write({
      ...input,
      id: newId("federationProfile"),
      verifiedAt: null,
      verifiedBy: null,
      verifiedDigest: null,
      createdAt: at,
      updatedAt: at,
    });
    return translating(this.dialect, async () => {
      await this.db<FederationProfileRow>("federation_profiles").insert(row);
      return toProfile(row);
    });
  }

  async getById(id: string): Promise<FederationProfile | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<FederationProfileRow>("federation_profiles").where({ id }).first();
      return row && toProfile(row);
    });
  }

  /** The workspace's profiles, by name. */
  async listByWorkspace(workspaceId: string): Promise<FederationProfile[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<FederationProfileRow>("federation_profiles")
        .where({ workspace_id: workspaceId })
        .orderBy([
          { column: "name", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return rows.map(toProfile);
    });
  }

  /** Replaces what the profile says and clears its verification (any change does). */
  async update(
    id: string,
    content: FederationProfileContent,
    now: Date | string,
  ): Promise<FederationProfile | undefined> {
    return translating(this.dialect, async () => {
      await this.db<FederationProfileRow>("federation_profiles")
        .where({ id })
        .update({
          name: content.name,
          provider: content.provider,
          audience: content.audience,
          target: JSON.stringify(content.target),
          phases: JSON.stringify(content.phases),
          verified_at: null,
          verified_by: null,
          verified_digest: null,
          updated_at: isoForWrite(now),
        });
      return this.getById(id);
    });
  }

  /** Records a verification of the profile as it is (its digest), by whom and when. */
  async verify(
    id: string,
    verifiedBy: string,
    digest: string,
    now: Date | string,
  ): Promise<FederationProfile | undefined> {
    return translating(this.dialect, async () => {
      await this.db<FederationProfileRow>("federation_profiles")
        .where({ id })
        .update({ verified_at: isoForWrite(now), verified_by: verifiedBy, verified_digest: digest });
      return this.getById(id);
    });
  }

  async delete(id: string): Promise<boolean> {
    return translating(this.dialect, async () => (await this.db("federation_profiles").where({ id }).delete()) > 0);
  }
}

interface SigningKeyRow {
  kid: string;
  algorithm: string;
  public_jwk: string;
  private_key_sealed: string;
  created_at: DbTimestamp;
  signs_from: DbTimestamp;
  last_token_expires_at: DbTimestamp | null;
}

/** A stored signing key; the private half stays sealed until the signer opens it. */
export interface StoredSigningKey {
  kid: string;
  algorithm: string;
  publicJwk: Record<string, unknown>;
  privateKeySealed: string;
  createdAt: string;
  signsFrom: string;
  lastTokenExpiresAt: string | null;
}

const toKey = rowMapper<SigningKeyRow, StoredSigningKey>()(
  "kid algorithm public_jwk:json private_key_sealed created_at:iso signs_from:iso last_token_expires_at:iso?",
);

/** The issuer's signing keys. */
export class SigningKeyRepository extends Repository {
  async add(key: Omit<StoredSigningKey, "lastTokenExpiresAt">): Promise<StoredSigningKey> {
    const row = toKey.write({ ...key, lastTokenExpiresAt: null });
    return translating(this.dialect, async () => {
      await this.db<SigningKeyRow>("workload_identity_keys").insert(row);
      return toKey(row);
    });
  }

  /** Every stored key, oldest first. */
  async list(): Promise<StoredSigningKey[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<SigningKeyRow>("workload_identity_keys").orderBy([
        { column: "signs_from", order: "asc" },
        { column: "kid", order: "asc" },
      ]);
      return rows.map(toKey);
    });
  }

  /**
   * Records that the key signed a token expiring at `expiresAt` (kept as the latest such time):
   * written before the token leaves the signer, so the key stays published while it is valid.
   */
  async noteTokenExpiry(kid: string, expiresAt: Date): Promise<void> {
    const at = isoForWrite(expiresAt);
    return translating(this.dialect, async () => {
      await this.db("workload_identity_keys")
        .where({ kid })
        .andWhere((q) => void q.whereNull("last_token_expires_at").orWhere("last_token_expires_at", "<", at))
        .update({ last_token_expires_at: at });
    });
  }

  async delete(kids: readonly string[]): Promise<number> {
    if (kids.length === 0) return 0;
    return translating(this.dialect, async () => this.db("workload_identity_keys").whereIn("kid", kids).delete());
  }
}
