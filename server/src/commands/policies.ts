import { isAllowed } from "../domain/authorization.ts";
import { DomainError, isDomainError, type ErrorCode } from "../domain/errors.ts";
import {
  OVERRIDE_DEFAULT_SECONDS,
  OVERRIDE_MAX_SECONDS,
  policySetVersionDigest,
  preparePolicies,
  type EnforcementLevel,
} from "../domain/policy/index.ts";
import type { Organization, Run } from "../domain/records.ts";
import { isTerminalRunStatus } from "../domain/run.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import {
  inTransaction,
  type PolicyOverride,
  type PolicySet,
  type PolicySetVersion,
  type Stores,
} from "../store/index.ts";
import { recordRunEvent, releaseRun } from "./run-transitions.ts";
import { audited } from "./audited.ts";

/** A policy as the API sends it. */
export interface PolicyInput {
  name: string;
  enforcement_level: EnforcementLevel;
  source: string;
}

/** What creating a policy set takes. */
export interface CreatePolicySetInput {
  name: string;
  description?: string;
  global?: boolean;
  projectIds?: string[];
  workspaceIds?: string[];
  policies: PolicyInput[];
}

/** A policy set with its current version. */
export interface PolicySetWithVersion {
  set: PolicySet;
  version: PolicySetVersion;
}

async function checkAttachments(stores: Stores, organizationId: string, input: CreatePolicySetInput): Promise<void> {
  const projectIds = input.projectIds ?? [];
  const workspaceIds = input.workspaceIds ?? [];
  if (input.global && (projectIds.length > 0 || workspaceIds.length > 0)) {
    throw new DomainError(
      "POLICY_SET_ATTACHMENT_INVALID",
      "A global policy set applies to every workspace; send no project_ids or workspace_ids with it.",
      {
        source: { pointer: "/data/attributes/global" },
      },
    );
  }
  if (!input.global && projectIds.length === 0 && workspaceIds.length === 0) {
    throw new DomainError(
      "POLICY_SET_ATTACHMENT_INVALID",
      "A policy set is either global or attached to at least one project or workspace.",
      {
        source: { pointer: "/data/attributes" },
      },
    );
  }
  for (const [index, id] of projectIds.entries()) {
    const project = await stores.projects.getById(id);
    if (!project || project.organizationId !== organizationId) {
      throw new DomainError("POLICY_SET_ATTACHMENT_INVALID", `Project ${id} is not a project of this organization.`, {
        source: { pointer: `/data/attributes/project_ids/${index}` },
      });
    }
  }
  for (const [index, id] of workspaceIds.entries()) {
    const workspace = await stores.workspaces.getById(id);
    if (!workspace || workspace.organizationId !== organizationId) {
      throw new DomainError(
        "POLICY_SET_ATTACHMENT_INVALID",
        `Workspace ${id} is not a workspace of this organization.`,
        {
          source: { pointer: `/data/attributes/workspace_ids/${index}` },
        },
      );
    }
  }
}

/** Creates a policy set with its first immutable, digested version. */
export async function createPolicySet(
  services: Services,
  actor: AuthenticatedPrincipal,
  organization: Organization,
  input: CreatePolicySetInput,
): Promise<PolicySetWithVersion> {
  const policies = preparePolicies(input.policies);
  const digest = policySetVersionDigest(policies);
  try {
    return await audited(
      services,
      { organizationId: organization.id, actorId: actor.id },
      async (stores, record, now) => {
        await checkAttachments(stores, organization.id, input);
        if (await stores.policySets.getByName(organization.id, input.name)) throw nameTaken(input.name);
        const set = await stores.policySets.create({
          organizationId: organization.id,
          name: input.name,
          description: input.description ?? null,
          global: input.global ?? false,
          projectIds: [...new Set(input.projectIds ?? [])],
          workspaceIds: [...new Set(input.workspaceIds ?? [])],
          now,
        });
        const version = await stores.policySets.addVersion(set.id, policies, digest, now);
        await record("policy_set.created", ["policy-sets", set.id], {
          name: set.name,
          version: version.version,
          digest,
          global: set.global,
          project_ids: set.projectIds,
          workspace_ids: set.workspaceIds,
        });
        return { set: { ...set, currentVersionId: version.id }, version };
      },
    );
  } catch (error) {
    // Two concurrent creations with one name: the unique index decides.
    if (isDomainError(error, "CONSTRAINT_VIOLATION")) throw nameTaken(input.name);
    throw error;
  }
}

function nameTaken(name: string): DomainError {
  return new DomainError("POLICY_SET_NAME_TAKEN", `A policy set named '${name}' already exists in this organization.`, {
    source: { pointer: "/data/attributes/name" },
  });
}

/** Publishes the next immutable version of a policy set; runs evaluated earlier keep theirs. */
export async function createPolicySetVersion(
  services: Services,
  actor: AuthenticatedPrincipal,
  set: PolicySet,
  policies: PolicyInput[],
): Promise<PolicySetWithVersion> {
  const prepared = preparePolicies(policies);
  const digest = policySetVersionDigest(prepared);
  return audited(services, { organizationId: set.organizationId, actorId: actor.id }, async (stores, record, now) => {
    const version = await stores.policySets.addVersion(set.id, prepared, digest, now);
    await record("policy_set.version_created", ["policy-sets", set.id], {
      version: version.version,
      digest,
    });
    return { set: { ...set, currentVersionId: version.id }, version };
  });
}

/** The policy sets of an organization with their current versions. */
export async function listPolicySets(services: Services, organization: Organization): Promise<PolicySetWithVersion[]> {
  const sets = await services.stores.policySets.listByOrganization(organization.id);
  const out: PolicySetWithVersion[] = [];
  for (const set of sets) {
    const version =
      set.currentVersionId === null ? undefined : await services.stores.policySets.getVersion(set.currentVersionId);
    if (version) out.push({ set, version });
  }
  return out;
}

/** What an override request carries. */
export interface PolicyOverrideInput {
  resultDigest: string;
  reason: string;
  durationSeconds?: number;
}

/**
 * Overrides a soft policy failure of a run for a limited time, bound to the run's exact result
 * digest. A run that waits in policy_soft_failed moves on to awaiting approval; a run already
 * awaiting approval on a soft failure (its earlier override expired) gets a fresh override.
 * Every refusal is audited, outside the refused transaction, before it is reported.
 */
export async function createPolicyOverride(
  services: Services,
  actor: AuthenticatedPrincipal,
  run: Run,
  input: PolicyOverrideInput,
): Promise<PolicyOverride> {
  const now = services.clock();
  const duration = input.durationSeconds ?? OVERRIDE_DEFAULT_SECONDS;
  const refuse = async (code: ErrorCode, detail: string): Promise<never> => {
    await services.stores.audit.record({
      organizationId: run.organizationId,
      actorId: actor.id,
      action: "policy.override_refused",
      targetType: "runs",
      targetId: run.id,
      reason: input.reason,
      data: { code, result_digest: input.resultDigest, duration_seconds: duration },
      createdAt: now,
    });
    throw new DomainError(code, detail);
  };
  if (
    !isAllowed(actor, "policy:override_soft", {
      organizationId: run.organizationId,
      projectId: run.projectId,
      workspaceId: run.workspaceId,
    })
  ) {
    return refuse(
      "POLICY_OVERRIDE_PERMISSION_REQUIRED",
      "Overriding a soft-mandatory policy failure needs the 'policy:override_soft' permission (organization admins have it).",
    );
  }
  if (duration < 1 || duration > OVERRIDE_MAX_SECONDS) {
    // The request schema already bounds it; this keeps the command safe for other callers.
    throw new DomainError("DOCUMENT_INVALID", `duration_seconds must be between 1 and ${OVERRIDE_MAX_SECONDS}.`, {
      source: { pointer: "/data/attributes/duration_seconds" },
    });
  }
  try {
    let moved: Run | undefined;
    const recorded = await inTransaction(services.db, async (stores) => {
      const current = await stores.runs.getById(run.id);
      if (!current) throw new DomainError("NOT_FOUND", `Run ${run.id} does not exist.`);
      const x = current.execution;
      if (x.policyOutcome === "hard_failed" || x.policyOutcome === "errored") {
        throw new DomainError(
          "POLICY_OVERRIDE_HARD_FAILED",
          `Run ${run.id} failed a hard-mandatory policy or its evaluation errored (${x.policyOutcome}); only a soft-mandatory failure can be overridden.`,
        );
      }
      const waiting =
        current.status === "policy_soft_failed" ||
        (current.status === "awaiting_approval" && x.policyOutcome === "soft_failed");
      if (!waiting) {
        throw new DomainError(
          "POLICY_OVERRIDE_NOT_SOFT_FAILED",
          `Run ${run.id} is ${current.status} with policy outcome ${x.policyOutcome ?? "not recorded"}; it is not waiting on a soft policy failure.`,
        );
      }
      if (input.resultDigest !== x.policyResultDigest) {
        throw new DomainError(
          "POLICY_OVERRIDE_DIGEST_MISMATCH",
          `The result digest sent (${input.resultDigest}) is not this run's current policy result (${x.policyResultDigest}). Review the current result and override again.`,
        );
      }
      const override = await stores.policyResults.createOverride({
        runId: run.id,
        organizationId: run.organizationId,
        resultDigest: input.resultDigest,
        reason: input.reason,
        actorId: actor.id,
        createdAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + duration * 1000).toISOString(),
      });
      await stores.audit.record({
        organizationId: run.organizationId,
        actorId: actor.id,
        action: "policy.overridden",
        targetType: "runs",
        targetId: run.id,
        reason: input.reason,
        data: {
          override_id: override.id,
          result_digest: override.resultDigest,
          expires_at: override.expiresAt,
          duration_seconds: duration,
        },
        createdAt: now,
      });
      if (current.status === "policy_soft_failed")
        moved = await recordRunEvent(stores, current, { type: "policy_overridden" }, { now });
      return override;
    });
    // A soft-failed run without changes (or a speculative one) ends here: release what it holds.
    if (moved && isTerminalRunStatus(moved.status)) await releaseRun(services, moved);
    return recorded;
  } catch (error) {
    if (isDomainError(error) && error.code.startsWith("POLICY_OVERRIDE_")) return refuse(error.code, error.message);
    throw error;
  }
}
