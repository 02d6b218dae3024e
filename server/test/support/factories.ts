// Builders shared by the API and invariant tests (their assertions on answers are in responses.ts,
// on the database in database.ts). Every API call goes through the
// generated SDK; only the signed upload PUT (which needs no Authorization header and carries raw
// bytes to an absolute URL) uses plain fetch.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import * as assert from "uvu/assert";
import {
  createConfigurationVersion,
  createOrganization,
  createOrganizationToken,
  createVariable as sdkCreateVariable,
  createWorkspace as sdkCreateWorkspace,
  type ConfigurationVersion,
  type Variable,
  type Workspace,
} from "../../../client/src/index.ts";
import { REPO_ROOT } from "../../src/config.ts";
import { answered } from "./responses.ts";
import type { TestServer } from "./test-server.ts";

/** A role an organization token can carry. */
export type Role = "viewer" | "operator" | "admin";

/** The OpenTofu version scripts/tool-versions.env pins (read independently of the server). */
export function pinnedOpenTofuVersion(): string {
  const text = readFileSync(join(REPO_ROOT, "scripts/tool-versions.env"), "utf8");
  const match = /^OPENTOFU_VERSION=(\S+)\s*$/m.exec(text);
  if (!match) throw new Error("scripts/tool-versions.env has no OPENTOFU_VERSION");
  return match[1];
}

/** The platform runs on this host must pin, derived from Node's own view of the host. */
export function expectedPlatform(): string {
  const arch =
    ({ x64: "amd64", arm64: "arm64", ia32: "386", arm: "arm" } as Record<string, string>)[process.arch] ?? process.arch;
  return `${process.platform}_${arch}`;
}

/** Lower-case hex SHA-256. */
export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Creates an organization (as the deployment administrator) and a token of `role` in it. */
export async function createOrganizationWithToken(
  server: TestServer,
  name: string,
  role: Role = "admin",
): Promise<{ organizationName: string; organizationId: string; token: string; tokenId: string }> {
  const organization = await createOrganization({
    client: server.admin,
    body: { data: { type: "organizations", attributes: { name } } },
  });
  assert.is(organization.response.status, 201, `createOrganization ${name}: ${JSON.stringify(organization.error)}`);
  const { token, tokenId } = await createToken(server, server.bootstrapToken, name, role);
  return { organizationName: name, organizationId: organization.data!.data.id, token, tokenId };
}

/** Creates one more token of `role` in an organization, with the given caller's token. */
export async function createToken(
  server: TestServer,
  callerToken: string,
  organizationName: string,
  role: Role,
): Promise<{ token: string; tokenId: string }> {
  const result = await createOrganizationToken({
    client: server.v1(callerToken),
    path: { organization_name: organizationName },
    body: { data: { type: "tokens", attributes: { role } } },
  });
  assert.is(
    result.response.status,
    201,
    `createOrganizationToken ${organizationName}/${role}: ${JSON.stringify(result.error)}`,
  );
  return { token: result.data!.data.attributes.secret, tokenId: result.data!.data.id };
}

/** Attributes of a v1 workspace creation. */
export interface WorkspaceAttributes {
  name?: string;
  description?: string;
  tracked_branch?: string;
  working_directory?: string;
  opentofu_version?: string;
  execution_region?: string;
  structured_run_output_enabled?: boolean;
}

let workspaceCounter = 0;

/** Creates a workspace through v1 and returns its resource. */
export async function createWorkspace(
  server: TestServer,
  token: string,
  organizationName: string,
  attributes: WorkspaceAttributes = {},
): Promise<Workspace> {
  workspaceCounter += 1;
  const result = await sdkCreateWorkspace({
    client: server.v1(token),
    path: { organization_name: organizationName },
    body: { data: { type: "workspaces", attributes: { name: `ws-${workspaceCounter}`, ...attributes } } },
  });
  assert.is(result.response.status, 201, `createWorkspace: ${JSON.stringify(result.error)}`);
  return result.data!.data;
}

/** The configuration every test uses unless it says otherwise. */
export const DEFAULT_CONFIGURATION: Record<string, string> = { "main.tf": 'resource "terraform_data" "x" {}\n' };

/** A real .tar.gz of `files` (path → content), made by the system tar. */
export function makeConfigurationTarball(files: Record<string, string> = DEFAULT_CONFIGURATION): Buffer {
  const root = mkdtempSync(join(tmpdir(), "ss-config-"));
  try {
    const source = join(root, "src");
    mkdirSync(source);
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(source, path)), { recursive: true });
      writeFileSync(join(source, path), content);
    }
    const archive = join(root, "config.tar.gz");
    execFileSync("tar", ["-czf", archive, "-C", source, "."]);
    return readFileSync(archive);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Creates a pending configuration version and returns its resource (with the signed upload_url). */
export async function createPendingConfiguration(
  server: TestServer,
  token: string,
  workspaceId: string,
  speculative = false,
): Promise<ConfigurationVersion> {
  const created = await createConfigurationVersion({
    client: server.v1(token),
    path: { workspace_id: workspaceId },
    body: { data: { type: "configuration-versions", attributes: { speculative } } },
  });
  answered(created);
  assert.is(created.response.status, 201, `createConfigurationVersion: ${JSON.stringify(created.error)}`);
  const configurationVersion = created.data!.data;
  assert.is(configurationVersion.attributes.status, "pending");
  assert.type(configurationVersion.attributes.upload_url, "string");
  return configurationVersion;
}

/** PUTs bytes to a signed upload URL exactly as a client would: no Authorization, octet-stream. */
export function putUpload(uploadUrl: string, bytes: Uint8Array): Promise<Response> {
  return fetch(uploadUrl, {
    method: "PUT",
    headers: { "Content-Type": "application/octet-stream" },
    body: bytes as unknown as BodyInit,
  });
}

/**
 * Creates a configuration version, uploads `tarball` to its signed URL and returns the uploaded
 * configuration version with the bytes that were sent.
 */
export async function uploadConfiguration(
  server: TestServer,
  token: string,
  workspaceId: string,
  tarball: Buffer = makeConfigurationTarball(),
  speculative = false,
): Promise<{ configurationVersion: ConfigurationVersion; bytes: Buffer; digest: string }> {
  const pending = await createPendingConfiguration(server, token, workspaceId, speculative);
  const response = await putUpload(pending.attributes.upload_url!, tarball);
  const body = (await response.json()) as { data: ConfigurationVersion };
  assert.is(response.status, 200, `upload: ${JSON.stringify(body)}`);
  assert.is(body.data.attributes.status, "uploaded");
  return { configurationVersion: body.data, bytes: tarball, digest: sha256(tarball) };
}

/** Attributes of a workspace variable. */
export interface VariableAttributes {
  key: string;
  value: string;
  category?: "terraform" | "env";
  hcl?: boolean;
  sensitive?: boolean;
  description?: string;
}

/** Creates a workspace variable through v1. */
export async function createVariable(
  server: TestServer,
  token: string,
  workspaceId: string,
  attributes: VariableAttributes,
): Promise<Variable> {
  const result = await sdkCreateVariable({
    client: server.v1(token),
    path: { workspace_id: workspaceId },
    body: { data: { type: "variables", attributes } },
  });
  assert.is(result.response.status, 201, `createVariable ${attributes.key}: ${JSON.stringify(result.error)}`);
  return result.data!.data;
}

/**
 * A signed value (`payload.mac`, as cursors and signed URL tokens are) with one bit of its MAC's
 * first byte flipped: always a different MAC, never the same one spelled another way.
 */
export function withTamperedMac(token: string): string {
  const [payload, mac] = token.split(".");
  const bytes = Buffer.from(mac, "base64url");
  bytes[0] ^= 1;
  return `${payload}.${bytes.toString("base64url")}`;
}

/** `text` with the character at `index` changed to another one of the base64url alphabet. */
export function withCharacterChanged(text: string, index: number): string {
  return text.slice(0, index) + (text[index] === "A" ? "B" : "A") + text.slice(index + 1);
}

/** A random well-formed id of a prefixed kind (`run`, `ws`, `cv`, …) that no row has. */
export function randomId(prefix: string): string {
  const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
  let suffix = "";
  for (let i = 0; i < 16; i += 1) suffix += alphabet[Math.floor(Math.random() * alphabet.length)];
  return `${prefix}-${suffix}`;
}
