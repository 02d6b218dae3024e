import { canonicalize, sha256Hex } from "./canonical-json.ts";

/** The format tag of an input snapshot document. */
export const INPUT_SNAPSHOT_FORMAT = "stackship.input-snapshot/v1";

/** A workspace variable category. */
export type VariableCategory = "terraform" | "env";

/** A workspace variable as the snapshot builder receives it (sensitive values already unsealed). */
export interface SnapshotVariableInput {
  key: string;
  category: VariableCategory;
  hcl: boolean;
  sensitive: boolean;
  value: string;
}

/** A variable inside a snapshot document: sensitive values appear only as a handle. */
export type SnapshotVariable =
  | { key: string; category: VariableCategory; hcl: boolean; sensitive: false; value: string }
  | { key: string; category: VariableCategory; hcl: boolean; sensitive: true; value_handle: string };

/** The immutable, canonical description of a run's inputs. */
export interface InputSnapshotDocument {
  format: typeof INPUT_SNAPSHOT_FORMAT;
  workspace_id: string;
  opentofu_version: string;
  execution_region: string;
  platform: string;
  credentials_profile: string | null;
  variables: SnapshotVariable[];
}

/** Everything buildInputSnapshot() needs. */
export interface BuildInputSnapshotArgs {
  workspaceId: string;
  speculative: boolean;
  opentofuVersion: string;
  executionRegion: string;
  platform: string;
  credentialsProfile: string | null;
  variables: SnapshotVariableInput[];
}

/** Stores a sensitive plaintext encrypted and returns its handle (`sec-…`). */
export type SealSecret = (plaintext: string) => string;

/**
 * Builds a run's input snapshot and its digest. Sensitive values are replaced by handles from
 * `seal`; a speculative snapshot leaves sensitive variables out entirely and never calls `seal`.
 */
export function buildInputSnapshot(
  args: BuildInputSnapshotArgs,
  seal: SealSecret,
): { document: InputSnapshotDocument; inputDigest: string } {
  const ordered = [...args.variables].sort(compareVariables);
  for (let index = 1; index < ordered.length; index += 1) {
    if (compareVariables(ordered[index - 1], ordered[index]) === 0) {
      // A tie would make the document depend on input order.
      throw new TypeError(`buildInputSnapshot: duplicate variable ${ordered[index].category}/${ordered[index].key}`);
    }
  }

  const variables: SnapshotVariable[] = [];
  for (const variable of ordered) {
    const { key, category, hcl } = variable;
    if (!variable.sensitive) {
      variables.push({ key, category, hcl, sensitive: false, value: variable.value });
    } else if (!args.speculative) {
      variables.push({ key, category, hcl, sensitive: true, value_handle: seal(variable.value) });
    }
  }

  const document: InputSnapshotDocument = {
    format: INPUT_SNAPSHOT_FORMAT,
    workspace_id: args.workspaceId,
    opentofu_version: args.opentofuVersion,
    execution_region: args.executionRegion,
    platform: args.platform,
    credentials_profile: args.credentialsProfile,
    variables,
  };
  return { document, inputDigest: sha256Hex(canonicalize(document)) };
}

function compareVariables(a: { category: string; key: string }, b: { category: string; key: string }): number {
  return compareCodeUnits(a.category, b.category) || compareCodeUnits(a.key, b.key);
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
