import { canonicalize } from "../domain/canonical-json.ts";
import { newId } from "../domain/ids.ts";
import type { EnforcementLevel, PinnedPolicySetVersion, PolicyFinding } from "../domain/policy/index.ts";
import type { PolicyOutcome } from "../domain/run-lifecycle.ts";
import { Repository } from "./repository.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite, isoFromRow, numberFromRow } from "./values.ts";
import { rowMapper } from "./columns.ts";
import type { DbTimestamp } from "./rows.ts";

/** run_policy_evaluations */
interface EvaluationRow {
  run_id: string;
  outcome: PolicyOutcome;
  result_digest: string;
  opa_version: string | null;
  opa_build_commit: string | null;
  /** Canonical JSON: [{ policy_set_id, version, digest }]. */
  policy_set_versions: string;
  error: string | null;
  evaluated_at: DbTimestamp;
}

/** run_policy_findings */
interface FindingRow {
  id: string;
  run_id: string;
  seq: number | string;
  policy_set_id: string;
  policy_set_version: number | string;
  policy_name: string;
  enforcement_level: EnforcementLevel;
  title: string;
  message: string;
  address: string | null;
}

/** The persisted result of a run's policy stage (findings are stored beside it). */
export interface PolicyEvaluation {
  runId: string;
  outcome: PolicyOutcome;
  resultDigest: string;
  opaVersion: string | null;
  opaBuildCommit: string | null;
  policySetVersions: PinnedPolicySetVersion[];
  /** Why OPA failed (sanitized), null otherwise. */
  error: string | null;
  evaluatedAt: string;
}

/** A time-bounded override of a soft policy failure, bound to one result digest. */
export interface PolicyOverride {
  id: string;
  runId: string;
  organizationId: string;
  resultDigest: string;
  reason: string;
  actorId: string | null;
  createdAt: string;
  expiresAt: string;
}

function toEvaluation(row: EvaluationRow): PolicyEvaluation {
  const versions = JSON.parse(row.policy_set_versions) as Array<{
    policy_set_id: string;
    version: number;
    digest: string;
  }>;
  return {
    runId: row.run_id,
    outcome: row.outcome,
    resultDigest: row.result_digest,
    opaVersion: row.opa_version ?? null,
    opaBuildCommit: row.opa_build_commit ?? null,
    policySetVersions: versions.map((v) => ({ policySetId: v.policy_set_id, version: v.version, digest: v.digest })),
    error: row.error ?? null,
    evaluatedAt: isoFromRow(row.evaluated_at),
  };
}

function toFinding(row: FindingRow): PolicyFinding {
  return {
    policySetId: row.policy_set_id,
    policySetVersion: numberFromRow(row.policy_set_version),
    policy: row.policy_name,
    enforcementLevel: row.enforcement_level,
    title: row.title,
    message: row.message,
    address: row.address ?? null,
  };
}

/** policy_overrides */
interface OverrideRow {
  id: string;
  run_id: string;
  organization_id: string;
  result_digest: string;
  reason: string;
  actor_id: string | null;
  created_at: DbTimestamp;
  expires_at: DbTimestamp;
}

const toOverride = rowMapper<OverrideRow, PolicyOverride>()(
  "id run_id organization_id result_digest reason actor_id created_at:iso expires_at:iso",
);

/** Policy results, findings and overrides of runs. */
export class PolicyResultRepository extends Repository {
  /** Records a run's policy result and its (already sanitized) findings, once. */
  async record(evaluation: PolicyEvaluation, findings: readonly PolicyFinding[]): Promise<void> {
    await translating(this.dialect, async () => {
      await this.db("run_policy_evaluations").insert({
        run_id: evaluation.runId,
        outcome: evaluation.outcome,
        result_digest: evaluation.resultDigest,
        opa_version: evaluation.opaVersion,
        opa_build_commit: evaluation.opaBuildCommit,
        policy_set_versions: canonicalize(
          evaluation.policySetVersions.map((v) => ({
            policy_set_id: v.policySetId,
            version: v.version,
            digest: v.digest,
          })),
        ),
        error: evaluation.error,
        evaluated_at: isoForWrite(evaluation.evaluatedAt),
      });
      if (findings.length === 0) return;
      const rows = findings.map((f, seq) => ({
        id: newId("policyFinding"),
        run_id: evaluation.runId,
        seq,
        policy_set_id: f.policySetId,
        policy_set_version: f.policySetVersion,
        policy_name: f.policy,
        enforcement_level: f.enforcementLevel,
        title: f.title,
        message: f.message,
        address: f.address,
      }));
      for (let i = 0; i < rows.length; i += 100) await this.db("run_policy_findings").insert(rows.slice(i, i + 100));
    });
  }

  async getEvaluation(runId: string): Promise<PolicyEvaluation | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<EvaluationRow>("run_policy_evaluations").where({ run_id: runId }).first();
      return row ? toEvaluation(row) : undefined;
    });
  }

  async listFindings(runId: string): Promise<PolicyFinding[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<FindingRow>("run_policy_findings").where({ run_id: runId }).orderBy("seq", "asc");
      return rows.map(toFinding);
    });
  }

  async createOverride(input: Omit<PolicyOverride, "id">): Promise<PolicyOverride> {
    const row = toOverride.write({ id: newId("policyOverride"), ...input });
    return translating(this.dialect, async () => {
      await this.db("policy_overrides").insert(row);
      return toOverride(row);
    });
  }

  /** At most `limit` overrides of the run, newest first, and whether there are more. */
  async listOverrides(runId: string, limit: number): Promise<{ overrides: PolicyOverride[]; truncated: boolean }> {
    return translating(this.dialect, async () => {
      const rows = await this.db<OverrideRow>("policy_overrides")
        .where({ run_id: runId })
        .orderBy([
          { column: "created_at", order: "desc" },
          { column: "id", order: "desc" },
        ])
        .limit(limit + 1);
      return { overrides: rows.slice(0, limit).map(toOverride), truncated: rows.length > limit };
    });
  }

  /** An override of the run for exactly `digest` that has not expired at `now`, if any. */
  async findActiveOverride(runId: string, digest: string, now: Date): Promise<PolicyOverride | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<OverrideRow>("policy_overrides")
        .where({ run_id: runId, result_digest: digest })
        .andWhere("expires_at", ">", isoForWrite(now))
        .orderBy("expires_at", "desc")
        .first();
      return row ? toOverride(row) : undefined;
    });
  }

  /** Whether the run has any override for `digest` (expired or not). */
  async hasOverride(runId: string, digest: string): Promise<boolean> {
    return translating(this.dialect, async () =>
      Boolean(await this.db("policy_overrides").where({ run_id: runId, result_digest: digest }).first()),
    );
  }
}
