import { createHash } from "node:crypto";
import { isAllowed } from "../domain/authorization.ts";
import { artifactRefOf, type ArtifactRef } from "../domain/artifacts.ts";
import { DomainError } from "../domain/errors.ts";
import type { Workspace } from "../domain/records.ts";
import { isRunPrincipal, type AuthenticatedPrincipal } from "../domain/principal.ts";
import { signToken, verifyToken, type TokenPurpose } from "../domain/signed-tokens.ts";
import type { Services } from "./services.ts";
import {
  inTransaction,
  type StateVersion,
  type StateVersionOutput,
  type Stores,
  type WorkspaceLock,
} from "../store/index.ts";
import { describeHolder } from "./workspace-locks.ts";
import { audited } from "./audited.ts";
import { sha256Hex } from "../domain/canonical-json.ts";

// State publication (ARCHITECTURE invariant 4, issue "State through the compatibility API"):
// 1. the apply-phase `tofu` creates a state version through /api/v2; it is accepted only from the
//    apply-phase run token of the run holding the workspace lock at the fence the token is bound to;
// 2. it PUTs the bytes to a signed URL; they are stored encrypted and the version stays `pending`;
// 3. after `tofu apply` succeeded, the runner calls confirmStatePublication with the exact
//    metadata; only then is the version finalized and current. No state body passes the runner.

/** How long the signed state upload URLs stay valid (the CLI PUTs right after creating). */
export const STATE_UPLOAD_URL_TTL_SECONDS = 900;

type UploadKind = "state" | "json";

/** Each of a state version's two uploads has its own purpose, so neither token passes for the other or for a configuration upload. */
const UPLOAD_PURPOSE = { state: "state-upload", json: "state-json-upload" } as const satisfies Record<
  UploadKind,
  TokenPurpose
>;

/** A signed, expiring token naming one state version and which of its two uploads it is for. */
export function signStateUploadToken(
  services: Services,
  stateVersionId: string,
  kind: UploadKind,
  expiresAt: Date,
): string {
  return signToken(services.keys.uploadUrl, UPLOAD_PURPOSE[kind], { sv: stateVersionId }, expiresAt);
}

/** The state version a token names; a forged, tampered, expired or wrong-kind token is 404. */
export function verifyStateUploadToken(services: Services, token: string, kind: UploadKind): string {
  const claims = verifyToken(services.keys.uploadUrl, UPLOAD_PURPOSE[kind], token, ["sv"], services.clock());
  if (claims === null) throw new DomainError("NOT_FOUND", "This state upload URL is invalid or has expired.");
  return claims.sv;
}

/** The absolute upload URLs of a state version that has no bytes yet (null once uploaded or no longer pending). */
export function stateUploadUrls(
  services: Services,
  baseUrl: string,
  stateVersion: StateVersion,
): { state: string; json: string } | null {
  if (stateVersion.status !== "pending" || stateVersion.sha256 !== null) return null;
  const expiresAt = new Date(services.clock().getTime() + STATE_UPLOAD_URL_TTL_SECONDS * 1000);
  return {
    state: `${baseUrl}/api/v2/uploads/state-versions/${signStateUploadToken(services, stateVersion.id, "state", expiresAt)}`,
    json: `${baseUrl}/api/v2/uploads/state-versions-json/${signStateUploadToken(services, stateVersion.id, "json", expiresAt)}`,
  };
}

/** What the CLI sends to create a state version (`relationships.run` when TFE_RUN_ID is set). */
export interface NewStateVersion {
  serial: number;
  md5: string;
  lineage: string;
  force?: boolean;
  /** Base64 of `{"<name>": {"sensitive", "type", "value"}}` (or of `null`). */
  jsonStateOutputs?: string;
  runId?: string | null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Outputs from a `{"<name>": {sensitive, type, value}}` object (the shape of both json-state-outputs and a state file's `outputs`). */
function outputsFrom(map: Record<string, unknown>): StateVersionOutput[] | undefined {
  const outputs: StateVersionOutput[] = [];
  for (const [name, entry] of Object.entries(map)) {
    if (!isObject(entry)) return undefined;
    const sensitive = entry.sensitive === true;
    outputs.push({ name, sensitive, type: entry.type ?? null, value: sensitive ? null : (entry.value ?? null) });
  }
  return outputs;
}

/** The declared outputs (sensitive values dropped at once), null when none were declared. */
export function parseDeclaredOutputs(encoded: string | undefined): StateVersionOutput[] | null {
  if (encoded === undefined || encoded === "") return null;
  const invalid = () =>
    new DomainError(
      "DOCUMENT_INVALID",
      "/data/attributes/json-state-outputs must be base64 of a JSON object of outputs.",
      {
        source: { pointer: "/data/attributes/json-state-outputs" },
      },
    );
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(encoded)) throw invalid();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(encoded, "base64").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (decoded === null) return null;
  if (!isObject(decoded)) throw invalid();
  const outputs = outputsFrom(decoded);
  if (!outputs) throw invalid();
  return outputs;
}

/** Refuses anything but a lock held by `runId` at exactly `fence`. */
function assertFencedLock(
  lock: WorkspaceLock | undefined,
  workspaceId: string,
  runId: string,
  fence: number | null,
): void {
  if (!lock) {
    throw new DomainError(
      "STATE_VERSION_LOCK_REQUIRED",
      `Run ${runId} does not hold the lock of workspace ${workspaceId}: the workspace is not locked. State is accepted only from the run holding the workspace lock.`,
    );
  }
  if (fence === null || lock.fence !== fence) {
    throw new DomainError(
      "STATE_VERSION_FENCE_STALE",
      `The workspace lock was released and taken again since this apply started (it was granted fence ${fence ?? "none"}; the lock is now fence ${lock.fence}, held by ${describeHolder(lock)}). This apply may no longer write state.`,
      { meta: { fence, current_fence: lock.fence } },
    );
  }
  if (lock.holder.kind !== "run" || lock.holder.id !== runId) {
    throw new DomainError(
      "STATE_VERSION_LOCK_REQUIRED",
      `Run ${runId} does not hold the lock of workspace ${workspaceId}; it is locked by ${describeHolder(lock)}.`,
    );
  }
}

/** Refuses a successor that would not follow the current state: another lineage, or a serial that does not increase. */
async function assertSuccessor(stores: Stores, workspaceId: string, serial: number, lineage: string): Promise<void> {
  const current = await stores.stateVersions.current(workspaceId);
  if (!current) return;
  if (current.lineage !== lineage) {
    throw new DomainError(
      "STATE_VERSION_LINEAGE_MISMATCH",
      `The state's lineage ${lineage} differs from the current state's (${current.lineage}, serial ${current.serial}). StackShip does not replace a workspace's state with an unrelated one.`,
    );
  }
  if (serial <= current.serial) {
    throw new DomainError(
      "STATE_VERSION_SERIAL_NOT_INCREASING",
      `The state's serial ${serial} must be greater than the current state's serial ${current.serial}.`,
      {
        meta: { serial, current_serial: current.serial },
      },
    );
  }
}

/**
 * Creates a pending state version for the workspace. Accepted only from the apply-phase run token
 * of the run that holds the workspace lock at the fence the token is bound to, with a serial
 * greater than the current one and the same lineage; everything else is a 409 with a stable
 * code, and nothing is written.
 */
export async function createStateVersion(
  services: Services,
  principal: AuthenticatedPrincipal,
  workspace: Workspace,
  input: NewStateVersion,
): Promise<StateVersion> {
  if (!isRunPrincipal(principal)) {
    throw new DomainError(
      "STATE_VERSION_RUN_REQUIRED",
      "StackShip publishes state only through a reviewed apply: state versions are accepted from a run's apply phase, not from API tokens (`tofu state push`, `state mv/rm`, `taint`, local runs). Change the configuration and run `tofu apply` instead.",
    );
  }
  const scope = principal.run;
  if (scope.workspaceId !== workspace.id)
    throw new DomainError("NOT_FOUND", `Workspace ${workspace.id} does not exist, or this token may not see it.`);
  if (scope.phase !== "apply") {
    throw new DomainError(
      "STATE_VERSION_PHASE_FORBIDDEN",
      `This token belongs to the ${scope.phase} phase of run ${scope.runId}; only its apply phase may write state. A plan never writes state.`,
    );
  }
  if (input.runId && input.runId !== scope.runId) {
    throw new DomainError(
      "STATE_VERSION_RUN_MISMATCH",
      `relationships.run names ${input.runId}, but this token belongs to run ${scope.runId}.`,
      {
        source: { pointer: "/data/relationships/run/data/id" },
      },
    );
  }
  const outputs = parseDeclaredOutputs(input.jsonStateOutputs);
  return audited(
    services,
    { organizationId: workspace.organizationId, actorId: principal.id },
    async (stores, record, now) => {
      const lock = await stores.workspaceLocks.current(workspace.id, { forUpdate: true });
      assertFencedLock(lock, workspace.id, scope.runId, scope.fence);
      await assertSuccessor(stores, workspace.id, input.serial, input.lineage);
      const stateVersion = await stores.stateVersions.create({
        workspaceId: workspace.id,
        runId: scope.runId,
        serial: input.serial,
        lineage: input.lineage,
        md5: input.md5,
        fence: lock!.fence,
        outputs,
        createdAt: now,
      });
      await record("state_version.created", ["state-versions", stateVersion.id], {
        workspace_id: workspace.id,
        run_id: scope.runId,
        serial: input.serial,
        lineage: input.lineage,
        fence: stateVersion.fence,
      });
      return stateVersion;
    },
  );
}

/** The serial and lineage a state file says it has; STATE_VERSION_UPLOAD_INVALID when it is no state file. */
function readStateHeader(bytes: Buffer): { serial: unknown; lineage: unknown; outputs: StateVersionOutput[] | null } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new DomainError("STATE_VERSION_UPLOAD_INVALID", "The upload is not a JSON state file.");
  }
  if (!isObject(parsed)) throw new DomainError("STATE_VERSION_UPLOAD_INVALID", "The upload is not a JSON state file.");
  const outputs = isObject(parsed.outputs) ? (outputsFrom(parsed.outputs) ?? null) : null;
  return { serial: parsed.serial, lineage: parsed.lineage, outputs };
}

/**
 * Stores the raw state of a pending version, encrypted. The bytes must have the declared MD5 and
 * be a state file with the declared serial and lineage. The same bytes again are accepted
 * (idempotent); other bytes are STATE_VERSION_ALREADY_UPLOADED. The version stays pending.
 */
export async function uploadState(services: Services, token: string, body: Uint8Array): Promise<StateVersion> {
  const id = verifyStateUploadToken(services, token, "state");
  const stateVersion = await services.stores.stateVersions.getById(id);
  if (!stateVersion) throw new DomainError("NOT_FOUND", "This state upload URL is invalid or has expired.");
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const sha256 = sha256Hex(bytes);
  if (stateVersion.sha256 !== null) {
    if (stateVersion.sha256 === sha256) return stateVersion;
    throw new DomainError(
      "STATE_VERSION_ALREADY_UPLOADED",
      `State version ${id} already has its state; it is immutable.`,
    );
  }
  if (stateVersion.status !== "pending")
    throw new DomainError("STATE_VERSION_NOT_PENDING", `State version ${id} is ${stateVersion.status}.`);
  const md5 = createHash("md5").update(bytes).digest("hex");
  if (md5 !== stateVersion.md5) {
    throw new DomainError(
      "STATE_VERSION_UPLOAD_INVALID",
      `The uploaded state's MD5 is ${md5}, but the state version declared ${stateVersion.md5}.`,
    );
  }
  const header = readStateHeader(bytes);
  if (header.serial !== stateVersion.serial || header.lineage !== stateVersion.lineage) {
    throw new DomainError(
      "STATE_VERSION_UPLOAD_INVALID",
      `The uploaded state has serial ${JSON.stringify(header.serial)} and lineage ${JSON.stringify(header.lineage)}, but the state version declared serial ${stateVersion.serial} and lineage ${stateVersion.lineage}.`,
    );
  }
  const key = `state-versions/${id}/${sha256}.tfstate`;
  const descriptor = await services.artifacts.write(
    { kind: "state", workspaceId: stateVersion.workspaceId, key },
    bytes,
  );
  const workspace = await services.stores.workspaces.getById(stateVersion.workspaceId);
  const uploaded = await audited(
    services,
    { organizationId: workspace?.organizationId ?? null, actorId: null },
    async (stores, record, now) => {
      const marked = await stores.stateVersions.markUploaded(id, {
        sha256: descriptor.sha256,
        sizeBytes: descriptor.sizeBytes,
        artifactKey: key,
        uploadedAt: now,
        outputs: header.outputs,
      });
      if (!marked) return undefined;
      await record("state_version.uploaded", ["state-versions", id], {
        sha256: descriptor.sha256,
        size_bytes: descriptor.sizeBytes,
      });
      return marked;
    },
  );
  if (uploaded) return uploaded;
  // A concurrent upload won: keep its bytes; these are dropped unless they are the same object.
  const after = await services.stores.stateVersions.getById(id);
  if (after?.sha256 === sha256) return after;
  await services.artifacts.delete(key);
  throw new DomainError(
    "STATE_VERSION_ALREADY_UPLOADED",
    `State version ${id} already has its state; it is immutable.`,
  );
}

/** Accepts the JSON state upload and discards it: StackShip reads state only from the raw upload. */
export async function uploadJsonState(services: Services, token: string): Promise<void> {
  const id = verifyStateUploadToken(services, token, "json");
  if (!(await services.stores.stateVersions.getById(id)))
    throw new DomainError("NOT_FOUND", "This state upload URL is invalid or has expired.");
}

/** What the runner read back after a successful `tofu apply` and asks StackShip to publish. */
export interface StatePublication {
  runId: string;
  stateVersionId: string;
  serial: number;
  lineage: string;
  /** Hex SHA-256 of the state bytes. */
  sha256: string;
  /** The fence lockWorkspaceForRun returned for this apply. */
  fence: number;
}

/** The publication of a run's uploaded pending state version at the given fence (its sha256 is set once uploaded). */
export function publicationOf(runId: string, version: StateVersion, fence: number): StatePublication {
  return {
    runId,
    stateVersionId: version.id,
    serial: version.serial,
    lineage: version.lineage,
    sha256: version.sha256!,
    fence,
  };
}

/**
 * Publishes a pending state version after its apply succeeded: every given field must equal what
 * was uploaded (the run link, serial, lineage, the SHA-256 of the stored plaintext, the fence),
 * the run must still hold the workspace lock at that fence, and the version must still follow the
 * current state. Then it is finalized with `published_at` and becomes the workspace's current
 * state version. Any mismatch is a 409 DomainError and nothing changes.
 */
export async function confirmStatePublication(
  services: Services,
  publication: StatePublication,
): Promise<StateVersion> {
  const { runId, stateVersionId, serial, lineage, sha256, fence } = publication;
  const stateVersion = await services.stores.stateVersions.getById(stateVersionId);
  if (!stateVersion) throw new DomainError("NOT_FOUND", `State version ${stateVersionId} does not exist.`);
  if (stateVersion.status !== "pending")
    throw new DomainError(
      "STATE_VERSION_NOT_PENDING",
      `State version ${stateVersionId} is ${stateVersion.status}, not pending.`,
    );
  const stored = stateArtifact(stateVersion);
  if (!stored)
    throw new DomainError("STATE_VERSION_NOT_UPLOADED", `State version ${stateVersionId} has no uploaded state yet.`);
  const differences: Record<string, { expected: unknown; recorded: unknown }> = {};
  const compare = (field: string, expected: unknown, recorded: unknown) => {
    if (expected !== recorded) differences[field] = { expected, recorded };
  };
  compare("run_id", runId, stateVersion.runId);
  compare("serial", serial, stateVersion.serial);
  compare("lineage", lineage, stateVersion.lineage);
  compare("sha256", typeof sha256 === "string" ? sha256.toLowerCase() : sha256, stateVersion.sha256);
  compare("fence", fence, stateVersion.fence);
  if (Object.keys(differences).length > 0) {
    throw new DomainError(
      "STATE_PUBLICATION_MISMATCH",
      `State version ${stateVersionId} was not published: ${Object.entries(differences)
        .map(
          ([field, { expected, recorded }]) =>
            `${field} is ${JSON.stringify(recorded)}, not ${JSON.stringify(expected)}`,
        )
        .join("; ")}.`,
      { meta: { differences } },
    );
  }
  // The stored ciphertext must open to exactly the recorded bytes (the artifact store checks size and SHA-256).
  try {
    await services.artifacts.read(stored, stateVersion.workspaceId);
  } catch (error) {
    throw new DomainError(
      "STATE_PUBLICATION_MISMATCH",
      `The stored state of ${stateVersionId} does not match its recorded SHA-256 and size; it was not published.`,
      {
        cause: error,
      },
    );
  }
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const lock = await stores.workspaceLocks.current(stateVersion.workspaceId, { forUpdate: true });
    assertFencedLock(lock, stateVersion.workspaceId, runId, fence);
    await assertSuccessor(stores, stateVersion.workspaceId, serial, lineage);
    const finalized = await stores.stateVersions.finalize(stateVersionId, now);
    if (!finalized)
      throw new DomainError(
        "STATE_VERSION_NOT_PENDING",
        `State version ${stateVersionId} changed while it was being published.`,
      );
    const workspace = await stores.workspaces.getById(stateVersion.workspaceId);
    await stores.audit.recordAction(
      { organizationId: workspace?.organizationId ?? null, actorId: runId, createdAt: now },
      "state_version.published",
      ["state-versions", stateVersionId],
      { workspace_id: stateVersion.workspaceId, run_id: runId, serial, lineage, sha256: finalized.sha256, fence },
    );
    return finalized;
  });
}

/** The run's pending state versions, oldest first: what recovery looks at after an uncertain apply. */
export function listPendingStateVersions(services: Services, runId: string): Promise<StateVersion[]> {
  return services.stores.stateVersions.listPendingByRun(runId);
}

/** The workspace's current (published) state version, if any. */
export function currentStateVersion(services: Services, workspaceId: string): Promise<StateVersion | undefined> {
  return services.stores.stateVersions.current(workspaceId);
}

/**
 * Whether the caller may read a state version's raw bytes. Raw state holds sensitive values
 * (ARCHITECTURE invariant 6), so only a run token of the workspace may: a published version, or a
 * pending one its own run uploaded. People get the guarded emergency-state download instead.
 */
export function mayReadRawState(
  principal: AuthenticatedPrincipal,
  stateVersion: StateVersion,
  workspace?: { organizationId: string; projectId: string; id: string },
): boolean {
  if (!isRunPrincipal(principal)) {
    // `tofu state pull` and `tofu output` for people and automation: published state only, with state:read.
    return (
      workspace !== undefined &&
      stateVersion.status === "finalized" &&
      isAllowed(principal, "state:read", {
        organizationId: workspace.organizationId,
        projectId: workspace.projectId,
        workspaceId: workspace.id,
      })
    );
  }
  if (principal.run.workspaceId !== stateVersion.workspaceId) return false;
  return (
    stateVersion.status === "finalized" ||
    (stateVersion.status === "pending" && stateVersion.runId === principal.run.runId)
  );
}

/** The exact stored bytes of an uploaded state version (decrypted and checked against its `artifacts` row). */
export async function readStateBytes(services: Services, stateVersion: StateVersion): Promise<Buffer> {
  const ref = stateArtifact(stateVersion);
  if (!ref && stateVersion.sha256 !== null)
    throw new Error(`state version ${stateVersion.id}: no artifacts row describes its stored state`);
  if (!ref)
    throw new DomainError("STATE_VERSION_NOT_UPLOADED", `State version ${stateVersion.id} has no uploaded state yet.`);
  return services.artifacts.read(ref, stateVersion.workspaceId);
}

/**
 * The ref of a state version's uploaded state: its `artifacts` row (the repository gives the
 * record a size only when that row describes the version's object); null until it is uploaded.
 */
export function stateArtifact(stateVersion: StateVersion): ArtifactRef | null {
  return artifactRefOf("state", {
    key: stateVersion.artifactKey,
    sizeBytes: stateVersion.sizeBytes,
    sha256: stateVersion.sha256,
  });
}
