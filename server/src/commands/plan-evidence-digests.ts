import type { Run } from "../domain/records.ts";
import type { Stores } from "../store/index.ts";

/**
 * Whether the artifacts recorded for the run's plan are exactly the evidence its plan phase
 * recorded: the saved plan (`planDigest`), the plan JSON (`planJsonDigest`) and the redacted plan
 * changes (`planDiffDigest`; null: none may be recorded). An approval binds all three, and an apply
 * of a plan whose recorded digests disagree refuses.
 */
export async function planEvidenceAgrees(stores: Stores, run: Run): Promise<boolean> {
  const x = run.execution;
  if (x.planDigest === null || x.planJsonDigest === null) return false;
  const [plan, planJson, planDiff] = await Promise.all([
    stores.artifacts.forRun(run.id, "plan"),
    stores.artifacts.forRun(run.id, "plan_json"),
    stores.artifacts.forRun(run.id, "plan_diff"),
  ]);
  const digest = (record: typeof plan) =>
    record === undefined || record.workspaceId !== run.workspaceId ? null : record.ref.sha256;
  return (
    digest(plan) === x.planDigest && digest(planJson) === x.planJsonDigest && digest(planDiff) === x.planDiffDigest
  );
}
