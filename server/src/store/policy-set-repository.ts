import { canonicalize } from "../domain/canonical-json.ts";
import { newId } from "../domain/ids.ts";
import type { EnforcementLevel, PolicyModule } from "../domain/policy/index.ts";
import { Repository } from "./repository.ts";
import { translating } from "./translate-error.ts";
import type { DbBoolean, DbTimestamp } from "./rows.ts";
import { booleanFromRow, isoForWrite, isoFromRow, numberFromRow } from "./values.ts";

/** policy_sets */
interface PolicySetRow {
  id: string;
  organization_id: string;
  name: string;
  description: string | null;
  global: DbBoolean;
  /** Canonical JSON: { project_ids: [...], workspace_ids: [...] }. */
  attachments: string;
  current_version_id: string | null;
  created_at: DbTimestamp;
}

/** policy_set_versions */
interface PolicySetVersionRow {
  id: string;
  policy_set_id: string;
  version: number | string;
  digest: string;
  /** Canonical JSON: the policies with their names, levels, packages and sources. */
  policies: string;
  created_at: DbTimestamp;
}

/** An immutable, digested version of a policy set. */
export interface PolicySetVersion {
  id: string;
  policySetId: string;
  version: number;
  digest: string;
  policies: PolicyModule[];
  createdAt: string;
}

/** A policy set: where it applies, and its newest version. */
export interface PolicySet {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  global: boolean;
  projectIds: string[];
  workspaceIds: string[];
  currentVersionId: string | null;
  createdAt: string;
}

/** What creating a policy set needs. */
export type CreatePolicySetInput = Omit<PolicySet, "id" | "currentVersionId" | "createdAt"> & { now: Date | string };

function toSet(row: PolicySetRow): PolicySet {
  const attachments = JSON.parse(row.attachments) as { project_ids: string[]; workspace_ids: string[] };
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    description: row.description ?? null,
    global: booleanFromRow(row.global),
    projectIds: attachments.project_ids,
    workspaceIds: attachments.workspace_ids,
    currentVersionId: row.current_version_id ?? null,
    createdAt: isoFromRow(row.created_at),
  };
}

function toVersion(row: PolicySetVersionRow): PolicySetVersion {
  const policies = JSON.parse(row.policies) as Array<{
    name: string;
    enforcement_level: EnforcementLevel;
    package: string;
    source: string;
    source_sha256: string;
  }>;
  return {
    id: row.id,
    policySetId: row.policy_set_id,
    version: numberFromRow(row.version),
    digest: row.digest,
    policies: policies.map((p) => ({
      name: p.name,
      enforcementLevel: p.enforcement_level,
      package: p.package,
      source: p.source,
      sourceDigest: p.source_sha256,
    })),
    createdAt: isoFromRow(row.created_at),
  };
}

/** Policy sets and their versions. Versions are only ever inserted, never changed. */
export class PolicySetRepository extends Repository {
  /** Creates a policy set without a version (add one with `addVersion` in the same transaction). */
  async create(input: CreatePolicySetInput): Promise<PolicySet> {
    const row = {
      id: newId("policySet"),
      organization_id: input.organizationId,
      name: input.name,
      description: input.description,
      global: input.global,
      attachments: canonicalize({ project_ids: input.projectIds, workspace_ids: input.workspaceIds }),
      current_version_id: null,
      created_at: isoForWrite(input.now),
    };
    return translating(this.dialect, async () => {
      await this.db("policy_sets").insert(row);
      return toSet(row);
    });
  }

  /** Adds the next immutable version and makes it current. */
  async addVersion(
    policySetId: string,
    policies: readonly PolicyModule[],
    digest: string,
    now: Date | string,
  ): Promise<PolicySetVersion> {
    return translating(this.dialect, async () => {
      const last = await this.db("policy_set_versions")
        .where({ policy_set_id: policySetId })
        .max({ n: "version" })
        .first<{ n: number | string | null } | undefined>();
      const row = {
        id: newId("policySetVersion"),
        policy_set_id: policySetId,
        version: (last?.n === null || last?.n === undefined ? 0 : numberFromRow(last.n)) + 1,
        digest,
        policies: canonicalize(
          policies.map((p) => ({
            name: p.name,
            enforcement_level: p.enforcementLevel,
            package: p.package,
            source: p.source,
            source_sha256: p.sourceDigest,
          })),
        ),
        created_at: isoForWrite(now),
      };
      await this.db("policy_set_versions").insert(row);
      await this.db("policy_sets").where({ id: policySetId }).update({ current_version_id: row.id });
      return toVersion(row);
    });
  }

  async getById(id: string): Promise<PolicySet | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<PolicySetRow>("policy_sets").where({ id }).first();
      return row ? toSet(row) : undefined;
    });
  }

  async getByName(organizationId: string, name: string): Promise<PolicySet | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<PolicySetRow>("policy_sets").where({ organization_id: organizationId, name }).first();
      return row ? toSet(row) : undefined;
    });
  }

  async getVersion(id: string): Promise<PolicySetVersion | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<PolicySetVersionRow>("policy_set_versions").where({ id }).first();
      return row ? toVersion(row) : undefined;
    });
  }

  /** The organization's policy sets by name. */
  async listByOrganization(organizationId: string): Promise<PolicySet[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<PolicySetRow>("policy_sets")
        .where({ organization_id: organizationId })
        .orderBy("name", "asc");
      return rows.map(toSet);
    });
  }

  /** The current versions of every policy set that applies to the workspace (global, or attached to it or its project). */
  async applicableVersions(target: {
    organizationId: string;
    projectId: string;
    workspaceId: string;
  }): Promise<Array<{ set: PolicySet; version: PolicySetVersion }>> {
    const sets = (await this.listByOrganization(target.organizationId)).filter(
      (set) =>
        set.currentVersionId !== null &&
        (set.global || set.projectIds.includes(target.projectId) || set.workspaceIds.includes(target.workspaceId)),
    );
    const out: Array<{ set: PolicySet; version: PolicySetVersion }> = [];
    for (const set of sets) {
      const version = await this.getVersion(set.currentVersionId!);
      if (version) out.push({ set, version });
    }
    return out;
  }
}
