import { DomainError } from "../domain/errors.ts";
import type { Workspace } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { inTransaction, type LockHolder, type Stores, type WorkspaceLock } from "../store/index.ts";
import { auditWorkspace } from "./workspace-audit.ts";

// The workspace lock (ARCHITECTURE invariant 4). A run holds it for its whole lifecycle: the
// runner takes it with lockWorkspaceForRun and releases it with unlockWorkspaceForRun. Every
// acquisition gets a new, larger fencing token; a state version is accepted only under the
// current one. People lock and unlock through the compatibility API (`tofu force-unlock`, local
// state commands); run tokens never take or release a lock there (contract §12.3 (b)).

/** The reason recorded on a lock the runner takes for a run. */
export const RUN_LOCK_REASON = "Locked by StackShip for a run";

/** How a lock's holder reads in an error detail; the tofu CLI matches "is locked by Run" / "… User". */
export function describeHolder(lock: WorkspaceLock): string {
  return lock.holder.kind === "run" ? `Run ${lock.holder.id}` : `User ${lock.holder.id}`;
}

/** The refusal for a workspace someone else holds, worded the way the CLI recognises. */
export function lockedBy(workspaceId: string, lock: WorkspaceLock, hint = ""): DomainError {
  return new DomainError(
    "WORKSPACE_LOCKED",
    `Workspace ${workspaceId} is locked by ${describeHolder(lock)} (fence ${lock.fence}).${hint ? ` ${hint}` : ""}`,
    {
      meta: { holder_kind: lock.holder.kind, holder_id: lock.holder.id, fence: lock.fence },
    },
  );
}

/** The refusal for a workspace nobody holds; the CLI shows it as "workspace already unlocked". */
export function alreadyUnlocked(workspaceId: string): DomainError {
  return new DomainError("WORKSPACE_NOT_LOCKED", `Workspace ${workspaceId} is already unlocked.`);
}

function sameHolder(lock: WorkspaceLock, holder: LockHolder): boolean {
  return lock.holder.kind === holder.kind && lock.holder.id === holder.id;
}

async function audit(
  stores: Stores,
  workspace: Workspace,
  actorId: string | null,
  action: string,
  lock: WorkspaceLock,
  now: Date,
): Promise<void> {
  await auditWorkspace(stores, workspace, actorId, action, now, {
    holder_kind: lock.holder.kind,
    holder_id: lock.holder.id,
    fence: lock.fence,
  });
}

/**
 * Takes the workspace lock for a run and returns its fence. Re-entrant: when the run already
 * holds the lock, its existing fence is returned and nothing changes. A lock held by anyone else
 * is WORKSPACE_LOCKED (409).
 */
export async function lockWorkspaceForRun(services: Services, workspaceId: string, runId: string): Promise<number> {
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const run = await stores.runs.getById(runId);
    if (!run || run.workspaceId !== workspaceId)
      throw new DomainError("NOT_FOUND", `Run ${runId} does not exist in workspace ${workspaceId}.`);
    const workspace = await stores.workspaces.getById(workspaceId);
    if (!workspace) throw new DomainError("NOT_FOUND", `Workspace ${workspaceId} does not exist.`);
    const holder: LockHolder = { kind: "run", id: runId };
    const result = await stores.workspaceLocks.acquire(workspaceId, holder, RUN_LOCK_REASON, now);
    if (!result.acquired) {
      if (sameHolder(result.lock, holder)) return result.lock.fence;
      throw lockedBy(workspaceId, result.lock);
    }
    await audit(stores, workspace, runId, "workspace.locked", result.lock, now);
    return result.lock.fence;
  });
}

/**
 * Releases the workspace lock a run holds. Idempotent: false (and nothing changes) when the run
 * does not hold it, so the runner may call it whenever a run ends.
 */
export async function unlockWorkspaceForRun(services: Services, workspaceId: string, runId: string): Promise<boolean> {
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const lock = await stores.workspaceLocks.current(workspaceId, { forUpdate: true });
    if (!lock || !sameHolder(lock, { kind: "run", id: runId })) return false;
    const released = await stores.workspaceLocks.release(workspaceId, lock.holder);
    const workspace = await stores.workspaces.getById(workspaceId);
    if (released && workspace) await audit(stores, workspace, runId, "workspace.unlocked", lock, now);
    return released;
  });
}

/** The lock currently held on the workspace, if any. */
export function currentWorkspaceLock(services: Services, workspaceId: string): Promise<WorkspaceLock | undefined> {
  return services.stores.workspaceLocks.current(workspaceId);
}

/**
 * One person's change to the workspace lock, in a transaction: `change` returns the lock it took
 * or released (or throws, and nothing is written), audited as `action` by the person.
 */
async function changeLockAs(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  action: string,
  change: (stores: Stores, now: Date) => Promise<WorkspaceLock>,
): Promise<WorkspaceLock> {
  const now = services.clock();
  return inTransaction(services.db, async (stores) => {
    const lock = await change(stores, now);
    await audit(stores, workspace, actor.id, action, lock, now);
    return lock;
  });
}

/** A person's lock through the API: a new fence; WORKSPACE_LOCKED when anyone (the caller too) holds it. */
export function lockWorkspaceForUser(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  reason: string,
): Promise<WorkspaceLock> {
  return changeLockAs(services, actor, workspace, "workspace.locked", async (stores, now) => {
    const result = await stores.workspaceLocks.acquire(workspace.id, { kind: "user", id: actor.id }, reason, now);
    if (!result.acquired) throw lockedBy(workspace.id, result.lock);
    return result.lock;
  });
}

/** A person's unlock through the API: only their own lock; otherwise WORKSPACE_LOCKED or WORKSPACE_NOT_LOCKED. */
export function unlockWorkspaceForUser(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
): Promise<WorkspaceLock> {
  return changeLockAs(services, actor, workspace, "workspace.unlocked", async (stores) => {
    const lock = await stores.workspaceLocks.current(workspace.id, { forUpdate: true });
    if (!lock) throw alreadyUnlocked(workspace.id);
    if (!sameHolder(lock, { kind: "user", id: actor.id })) {
      throw lockedBy(
        workspace.id,
        lock,
        lock.holder.kind === "run"
          ? "The runner releases it when the run ends; an organization administrator can force-unlock it."
          : "Only its holder can unlock it; an organization administrator can force-unlock it.",
      );
    }
    await stores.workspaceLocks.release(workspace.id, lock.holder);
    return lock;
  });
}

/**
 * Releases the lock whoever holds it (an administrator's decision, audited with the released
 * holder and fence). A run whose lock is released this way can no longer publish state: its fence
 * is stale. WORKSPACE_NOT_LOCKED when nobody holds it.
 */
export function forceUnlockWorkspace(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
): Promise<WorkspaceLock> {
  return changeLockAs(services, actor, workspace, "workspace.force_unlocked", async (stores) => {
    const released = await stores.workspaceLocks.forceRelease(workspace.id);
    if (!released) throw alreadyUnlocked(workspace.id);
    return released;
  });
}
