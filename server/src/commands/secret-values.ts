import type { Services } from "./services.ts";

/**
 * The workspace's sensitive variable values as they are now, opened on the host. They belong in
 * the redaction set of every run of the workspace, also of one whose input snapshot leaves them
 * out (a speculative run, a fork's pull request): such a run never receives them, but copies of
 * them can sit in the prior state and print in its plan. Never pass them into a sandbox.
 */
export async function workspaceSecretValues(services: Services, workspaceId: string): Promise<string[]> {
  const values: string[] = [];
  for (const variable of await services.stores.variables.listByWorkspace(workspaceId)) {
    if (variable.sensitive && variable.valueCiphertext)
      values.push(services.keys.secrets.openText(variable.valueCiphertext));
  }
  return values;
}
