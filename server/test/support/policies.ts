// Policy sets for tests: policies that flag the fixtures' terraform_data resources (or nothing), and
// a policy set created through the v1 API.
import { createPolicySet, type PolicyInput } from "../../../client/src/index.ts";
import type { TestServer } from "./test-server.ts";

// Policy sources: one flagging every terraform_data resource of a plan, one finding nothing.
export const FLAG_EVERY_DATA = (pkg: string, title: string) =>
  `package ${pkg}\n\nviolations contains {"title": "${title}", "message": sprintf("%s is flagged", [rc.address]), "address": rc.address} if {\n  some rc in input.resource_changes\n  rc.type == "terraform_data"\n}\n`;
export const FIND_NOTHING = `package quiet\n\nviolations contains {"title": "never", "message": "never"} if {\n  some rc in input.resource_changes\n  rc.type == "no_such_type"\n}\n`;

/** A policy input. */
export function policy(name: string, enforcement_level: PolicyInput["enforcement_level"], source: string): PolicyInput {
  return { name, enforcement_level, source };
}

/** Creates a policy set of `policies` (global unless `attachments` says otherwise); returns the SDK result. */
export async function newPolicySet(
  server: TestServer,
  token: string,
  organizationName: string,
  name: string,
  policies: PolicyInput[],
  attachments: { global?: boolean; workspace_ids?: string[]; project_ids?: string[] } = { global: true },
) {
  const result = await createPolicySet({
    client: server.v1(token),
    path: { organization_name: organizationName },
    body: { data: { type: "policy-sets", attributes: { name, policies, ...attachments } } },
  });
  return result;
}
