import type { ArtifactDescriptor } from "../artifacts/artifact-store.ts";
import { FRAMED_FORMAT } from "../artifacts/framed.ts";
import type { Run } from "../domain/records.ts";
import type { Services } from "../commands/services.ts";
import { ArtifactDescriptorRepository } from "../store/artifact-descriptor-repository.ts";

// The plan JSON is stored framed (artifacts/framed.ts) with a descriptor (workspace, kind, size,
// SHA-256), so GET /api/v2/plans/{id}/json-output can stream it without holding it in memory.

/** Stores a run's plan JSON framed and records its descriptor. */
export async function storePlanJson(services: Services, run: Run, planJson: Uint8Array | AsyncIterable<Uint8Array>): Promise<ArtifactDescriptor> {
  const key = `runs/${run.id}/plan.json`;
  const stored = await services.artifacts.putFramed(key, { kind: "plan_json", workspaceId: run.workspaceId }, planJson);
  await new ArtifactDescriptorRepository(services.db.knex, services.db.dialect).record({
    artifactKey: key,
    workspaceId: run.workspaceId,
    runId: run.id,
    kind: "plan_json",
    format: FRAMED_FORMAT,
    sizeBytes: stored.sizeBytes,
    sha256: stored.sha256,
    createdAt: services.clock(),
  });
  return stored;
}

/** The whole plan JSON of a run (the policy stage needs it in memory); verified against the run's record. */
export async function readPlanJson(services: Services, run: Run): Promise<Buffer> {
  const x = run.execution;
  const expected = { sizeBytes: x.planJsonSizeBytes!, sha256: x.planJsonDigest! };
  const descriptor = await new ArtifactDescriptorRepository(services.db.knex, services.db.dialect).findByRun(run.id, "plan_json");
  // Plans stored before the framed format are whole sealed objects.
  if (!descriptor || descriptor.artifactKey !== x.planJsonArtifactKey) return services.artifacts.get(x.planJsonArtifactKey!, expected);
  return services.artifacts.getFramed(descriptor.artifactKey, { kind: "plan_json", workspaceId: run.workspaceId }, expected);
}
