import type { ArtifactRef } from "../domain/artifacts.ts";
import type { Run } from "../domain/records.ts";
import type { Services } from "../commands/services.ts";
import { runArtifact, writeRunArtifact } from "../commands/run-artifacts.ts";

// The plan JSON is stored framed with a descriptor (workspace, kind, size, SHA-256), so
// GET /api/v2/plans/{id}/json-output can stream it without holding it in memory.

/** Stores a run's plan JSON and records its ref. */
export async function storePlanJson(
  services: Services,
  run: Run,
  planJson: Uint8Array | AsyncIterable<Uint8Array>,
): Promise<ArtifactRef> {
  return writeRunArtifact(services, run, "plan_json", planJson);
}

/** The whole plan JSON of a run (the policy stage needs it in memory), verified against its ref. */
export async function readPlanJson(services: Services, run: Run): Promise<Buffer> {
  const ref = await runArtifact(services, run, "plan_json");
  if (!ref) throw new Error(`run ${run.id} has no stored plan JSON`);
  return services.artifacts.read(ref, run.workspaceId);
}
