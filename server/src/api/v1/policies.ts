import { findingDocument, pinnedVersionDocument, REVIEW_OVERRIDE_LIMIT } from "../../domain/policy/index.ts";
import type { PolicyOverride } from "../../store/index.ts";
import { authorize, notFound, principalOf } from "../authorize.ts";
import {
  createPolicyOverride,
  createPolicySet,
  createPolicySetVersion,
  listPolicySets,
  type PolicySetWithVersion,
} from "../../commands/policies.ts";
import { loadOrganization, loadRun } from "../lookup.ts";
import type { H, S } from "./types.ts";

function presentPolicySet({ set, version }: PolicySetWithVersion): S["PolicySet"] {
  return {
    type: "policy-sets",
    id: set.id,
    attributes: {
      name: set.name,
      description: set.description,
      global: set.global,
      project_ids: set.projectIds,
      workspace_ids: set.workspaceIds,
      current_version: {
        id: version.id,
        version: version.version,
        digest: version.digest,
        policies: version.policies.map((p) => ({
          name: p.name,
          enforcement_level: p.enforcementLevel,
          package: p.package,
          source_digest: p.sourceDigest,
        })),
        created_at: version.createdAt,
      },
      created_at: set.createdAt,
    },
    relationships: { organization: { data: { type: "organizations", id: set.organizationId } } },
  };
}

function presentOverride(override: PolicyOverride): S["PolicyOverride"] {
  return {
    type: "policy-overrides",
    id: override.id,
    attributes: {
      result_digest: override.resultDigest,
      reason: override.reason,
      actor_id: override.actorId,
      created_at: override.createdAt,
      expires_at: override.expiresAt,
    },
  };
}

/** Policy sets, a run's policy result, and overrides of soft failures. */
export const policyHandlers = {
  async listPolicySets({ path, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "workspace:read");
    return { status: 200, body: { data: (await listPolicySets(ctx.services, organization)).map(presentPolicySet) } };
  },

  async createPolicySet({ path, body, ctx }) {
    const organization = await loadOrganization(ctx, path.organization_name, "org:admin");
    const a = body.data.attributes;
    const created = await createPolicySet(ctx.services, principalOf(ctx), organization, {
      name: a.name,
      description: a.description,
      global: a.global,
      projectIds: a.project_ids,
      workspaceIds: a.workspace_ids,
      policies: a.policies,
    });
    return { status: 201, body: { data: presentPolicySet(created) } };
  },

  async createPolicySetVersion({ path, body, ctx }) {
    const set = await ctx.services.stores.policySets.getById(path.policy_set_id);
    const what = `Policy set ${path.policy_set_id}`;
    if (!set) throw notFound(what);
    authorize(ctx, "org:admin", { organizationId: set.organizationId }, what);
    const created = await createPolicySetVersion(ctx.services, principalOf(ctx), set, body.data.attributes.policies);
    return { status: 201, body: { data: presentPolicySet(created) } };
  },

  async getRunPolicyEvaluation({ path, ctx }) {
    const run = await loadRun(ctx, path.run_id, "run:read");
    const results = ctx.services.stores.policyResults;
    const evaluation = await results.getEvaluation(run.id);
    const findings = evaluation ? await results.listFindings(run.id) : [];
    const { overrides, truncated } = await results.listOverrides(run.id, REVIEW_OVERRIDE_LIMIT);
    return {
      status: 200,
      body: {
        data: {
          type: "policy-evaluations",
          id: run.id,
          attributes: {
            outcome: evaluation?.outcome ?? null,
            result_digest: evaluation?.resultDigest ?? null,
            opa_version: evaluation?.opaVersion ?? null,
            opa_build_commit: evaluation?.opaBuildCommit ?? null,
            policy_set_versions: (evaluation?.policySetVersions ?? []).map(pinnedVersionDocument),
            findings: findings.map(findingDocument),
            error: evaluation?.error ?? null,
            overrides: overrides.map(presentOverride),
            overrides_truncated: truncated,
            evaluated_at: evaluation?.evaluatedAt ?? null,
          },
        },
      },
    };
  },

  async createPolicyOverride({ path, body, ctx }) {
    // Anyone who can see the run reaches the command, so a refusal for lack of permission is audited too.
    const run = await loadRun(ctx, path.run_id, "run:read");
    const a = body.data.attributes;
    const override = await createPolicyOverride(ctx.services, principalOf(ctx), run, {
      resultDigest: a.result_digest,
      reason: a.reason,
      durationSeconds: a.duration_seconds,
    });
    return { status: 201, body: { data: presentOverride(override) } };
  },
} satisfies Partial<H>;
