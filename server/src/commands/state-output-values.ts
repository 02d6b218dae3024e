import { REDACTED, sensitiveValueSet, ValueMatcher } from "../domain/redaction/index.ts";
import { RUN_TOKEN_SECRET_PREFIX } from "../domain/token-secrets.ts";
import type { StateVersion, StateVersionOutput } from "../store/index.ts";
import { workspaceSecretValues } from "./secret-values.ts";
import type { Services } from "./services.ts";
import { readStateBytes, stateArtifact } from "./state-versions.ts";

/** A StackShip token secret (run tokens `ssr.`, API tokens `ss1.`) anywhere in a text: 32 random bytes, base64url. */
const TOKEN_SECRET = new RegExp(`(?:${RUN_TOKEN_SECRET_PREFIX.replace(".", "\\.")}|ss1\\.)[A-Za-z0-9_-]{43}`, "g");

/**
 * The output values of a state version as a reader may see them: every value passes through the
 * same value-based redaction as the logs. The redaction set is the workspace's sensitive
 * variable values (as they are now) ∪ every value at a sensitive path of the version's own state;
 * a StackShip token secret (a run's token a configuration read into an output) is redacted by
 * its shape. A string, number or object key holding one of them becomes `[sensitive value]`
 * (within a string, just the occurrence). Sensitive outputs stay null (never stored).
 */
export async function redactedOutputValues(
  services: Services,
  stateVersion: StateVersion,
): Promise<StateVersionOutput[]> {
  const outputs = stateVersion.outputs ?? [];
  if (outputs.every((output) => output.sensitive || output.value === null)) return outputs;
  const workspaceSecrets = await workspaceSecretValues(services, stateVersion.workspaceId);
  let state: unknown;
  try {
    // The state's own sensitive paths (a version not uploaded yet has none).
    if (stateArtifact(stateVersion))
      state = JSON.parse((await readStateBytes(services, stateVersion)).toString("utf8"));
  } catch (error) {
    // Unreadable: which values are sensitive cannot be told, so no value is shown.
    services.logger.warn(
      { stateVersionId: stateVersion.id, err: (error as Error).message },
      "the state could not be read to redact its outputs; their values are withheld",
    );
    return outputs.map((output) => ({ ...output, value: null }));
  }
  const matcher = new ValueMatcher(sensitiveValueSet({ variables: workspaceSecrets, priorState: state }));
  const text = (value: string) => matcher.redact(value).replace(TOKEN_SECRET, REDACTED);
  const redact = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return text(value);
    if (typeof value === "number") return text(String(value)) === String(value) ? value : REDACTED;
    if (value === null || typeof value !== "object" || depth > 256) return value;
    if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [text(key), redact(item, depth + 1)]));
  };
  return outputs.map((output) => (output.sensitive ? output : { ...output, value: redact(output.value, 0) }));
}
