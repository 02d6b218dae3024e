// A large plan for the Changes tab: a synthetic OpenTofu plan JSON (creates with unknowns,
// updates with a sensitive nested value, replaces, deletes) turned into stackship.plan-diff/v1 by
// the real builder, and stored as a run's plan-diff artifact. Used by the 5,000-resource e2e
// scenario and by `npm run bench dashboard`.
import { writeRunArtifact } from "../../../server/src/commands/run-artifacts.ts";
import { buildPlanDiff } from "../../../server/src/domain/plan-diff/plan-diff.mjs";
import type { TestServer } from "../../../server/test/support/test-server.ts";

/** The secret the updates carry: it must never reach the page. */
export const PLAN_SECRET = "hunter2-plan-diff-canary";

function change(i: number): Record<string, unknown> {
  const name = `res_${i}`;
  const module = i % 3 === 0 ? `module.svc_${i % 17}.` : "";
  const values = { name, path: "/", max_session_duration: 3600, tags: { env: "prod", service: `svc-${i % 17}` } };
  const base = {
    address: `${module}aws_iam_role.${name}`,
    ...(module ? { module_address: module.slice(0, -1) } : {}),
    mode: "managed",
    type: "aws_iam_role",
    name,
    provider_name: "registry.opentofu.org/hashicorp/aws",
  };
  const kind = i % 20;
  if (kind < 12)
    return {
      ...base,
      change: {
        actions: ["create"],
        before: null,
        after: values,
        after_unknown: { arn: true, id: true },
        before_sensitive: false,
        after_sensitive: {},
      },
    };
  if (kind < 17) {
    const before = { ...values, inline_policy: [{ name: "p", policy: `${PLAN_SECRET}-${i}` }] };
    const after = {
      ...values,
      max_session_duration: 7200,
      inline_policy: [{ name: "p", policy: `${PLAN_SECRET}-${i}-2` }],
    };
    return {
      ...base,
      change: {
        actions: ["update"],
        before,
        after,
        after_unknown: {},
        before_sensitive: { inline_policy: [{ policy: true }] },
        after_sensitive: { inline_policy: [{ policy: true }] },
      },
    };
  }
  if (kind < 19)
    return {
      ...base,
      action_reason: "replace_because_cannot_update",
      change: {
        actions: ["delete", "create"],
        before: values,
        after: { ...values, name: `${name}-2` },
        after_unknown: { arn: true },
        before_sensitive: {},
        after_sensitive: {},
        replace_paths: [["name"]],
      },
    };
  return {
    ...base,
    change: {
      actions: ["delete"],
      before: values,
      after: null,
      after_unknown: {},
      before_sensitive: {},
      after_sensitive: false,
    },
  };
}

/** The plan-diff bytes of a synthetic plan with `changed` changed resources (over 5,000 are cut). */
export function largePlanDiff(runId: string, changed: number): Buffer {
  const plan = {
    format_version: "1.2",
    terraform_version: "1.10.0",
    resource_changes: Array.from({ length: changed }, (_, i) => change(i)),
  };
  return Buffer.from(buildPlanDiff(plan, { runId }).json);
}

/** Replaces the run's plan-diff artifact with `bytes` (the run's own plan is left as it is). */
export async function storePlanDiff(server: TestServer, runId: string, bytes: Buffer): Promise<void> {
  await writeRunArtifact(server.services, (await server.services.stores.runs.getById(runId))!, "plan_diff", bytes);
}
