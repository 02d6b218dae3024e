import type { ArtifactRef, RunArtifactKind } from "../domain/artifacts.ts";
import type { Run } from "../domain/records.ts";
import type { Services } from "./services.ts";

/** Where each kind of run artifact is stored. */
// plan_json_redacted: the redacted plan the CLI renders (json-output-redacted, issue 29).
const FILE_NAMES: Record<RunArtifactKind, string> = {
  plan: "plan.tfplan",
  plan_json: "plan.json",
  plan_diff: "plan-diff.json",
  plan_json_redacted: "plan-redacted.json",
};

/** The object key of a run's artifact of `kind`. */
export function runArtifactKey(runId: string, kind: RunArtifactKind): string {
  return `runs/${runId}/${FILE_NAMES[kind]}`;
}

/** Stores one of a run's artifacts (framed, streamed) and records its ref in the descriptor store. */
export async function writeRunArtifact(
  services: Services,
  run: Run,
  kind: RunArtifactKind,
  source: Uint8Array | AsyncIterable<Uint8Array>,
): Promise<ArtifactRef> {
  const ref = await services.artifacts.write(
    { kind, workspaceId: run.workspaceId, key: runArtifactKey(run.id, kind) },
    source,
  );
  await services.stores.artifacts.recordForRun(
    { ...ref, kind },
    { workspaceId: run.workspaceId, runId: run.id },
    services.clock(),
  );
  return ref;
}

/**
 * The ref of a run's artifact of `kind`: only once its plan finished (a plan that ended otherwise
 * published none, even if it wrote some), and only when recorded for the run's own workspace.
 */
export async function runArtifact(services: Services, run: Run, kind: RunArtifactKind): Promise<ArtifactRef | null> {
  if (run.execution.planStatus !== "finished") return null;
  const record = await services.stores.artifacts.forRun(run.id, kind);
  if (!record || record.workspaceId !== run.workspaceId || record.ref.kind !== kind) return null;
  return record.ref;
}

/** The kinds of artifact a run has published (runArtifact's rule), for the review's downloads. */
export async function publishedRunArtifacts(services: Services, run: Run): Promise<RunArtifactKind[]> {
  if (run.execution.planStatus !== "finished") return [];
  const records = await services.stores.artifacts.listForRun(run.id);
  return records
    .filter((r) => r.workspaceId === run.workspaceId && r.ref.kind in FILE_NAMES)
    .map((r) => r.ref.kind as RunArtifactKind);
}
