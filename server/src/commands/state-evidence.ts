import type { Stores } from "../store/index.ts";

/** The workspace's current published state as approval evidence: its id and SHA-256. */
export interface StateEvidence {
  stateVersionId: string;
  digest: string;
}

/** The current state evidence of a workspace, or null when it has no published state. */
export async function currentStateEvidence(stores: Stores, workspaceId: string): Promise<StateEvidence | null> {
  const current = await stores.stateVersions.current(workspaceId);
  if (!current || current.sha256 === null) return null;
  return { stateVersionId: current.id, digest: current.sha256 };
}
