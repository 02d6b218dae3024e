// A workspace's current state version as the tfe API serves it, checked against the row it came from.
import * as assert from "uvu/assert";
import { getCurrentStateVersion } from "../../../generated/tfe/client/sdk.gen.ts";
import { sha256 } from "./factories.ts";
import type { TestServer } from "./test-server.ts";

export interface CurrentState {
  id: string;
  serial: number;
  /** The SHA-256 the state_versions row records. */
  sha256: string;
  /** The bytes its hosted-state-download-url serves. */
  bytes: Buffer;
}

/** The workspace's current state version: its serial, recorded SHA-256 and the bytes it serves. */
export async function currentState(server: TestServer, token: string, workspaceId: string): Promise<CurrentState> {
  const current = await getCurrentStateVersion({ client: server.tfe(token), path: { workspace_id: workspaceId } });
  const version = (current.data as { data: { id: string; attributes: Record<string, unknown> } }).data;
  const response = await fetch(`${server.baseUrl}${version.attributes["hosted-state-download-url"] as string}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  assert.is(response.status, 200);
  const row = await server.db.knex("state_versions").where({ id: version.id }).first<{ sha256: string }>("sha256");
  return {
    id: version.id,
    serial: version.attributes.serial as number,
    sha256: row.sha256,
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

/**
 * The workspace's current state: version `serial`, its bytes the ones recorded, and (when named)
 * holding the resource `resource`.
 */
export async function expectPublished(
  server: TestServer,
  token: string,
  workspaceId: string,
  serial: number,
  resource?: string,
): Promise<CurrentState> {
  const published = await currentState(server, token, workspaceId);
  assert.is(published.serial, serial);
  assert.is(sha256(published.bytes), published.sha256, "the published state's bytes are the ones recorded");
  if (resource !== undefined) {
    const { resources } = JSON.parse(published.bytes.toString("utf8")) as { resources: Array<{ name: string }> };
    assert.ok(
      resources.some((r) => r.name === resource),
      `state ${serial} holds no resource named ${resource}`,
    );
  }
  return published;
}
