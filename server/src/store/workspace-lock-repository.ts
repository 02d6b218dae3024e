import { Repository } from "./repository.ts";
import type { WorkspaceLockFenceRow, WorkspaceLockRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite, isoFromRow, numberFromRow } from "./values.ts";

/** Who can hold a workspace lock: a run (through the runner) or a person's API token principal. */
export type LockHolderKind = "run" | "user";

/** The holder of a workspace lock. */
export interface LockHolder {
  kind: LockHolderKind;
  /** A run id for `run`, a principal id for `user`. */
  id: string;
}

/** A held workspace lock. `fence` is unique per acquisition and grows with every one. */
export interface WorkspaceLock {
  workspaceId: string;
  holder: LockHolder;
  fence: number;
  reason: string;
  lockedAt: string;
}

/** The outcome of an acquisition: the new lock, or the lock someone else (or the caller) holds. */
export type AcquireResult = { acquired: true; lock: WorkspaceLock } | { acquired: false; lock: WorkspaceLock };

/** Thrown inside the acquisition transaction to roll back the fence increment of a lost race. */
class LostRace extends Error {
  constructor(readonly lock: WorkspaceLock) {
    super("workspace lock taken concurrently");
  }
}

/**
 * Workspace locks with fencing tokens. The lock row's primary key is the mutual exclusion; the
 * per-workspace counter in workspace_lock_fences hands out the fences.
 */
export class WorkspaceLockRepository extends Repository {
  /**
   * Takes the lock for `holder` with the next fence, or reports the lock already held (also when
   * the caller itself holds it: re-entrancy is the caller's decision). Atomic: of two concurrent
   * acquisitions exactly one gets a lock; the loser's fence increment is rolled back.
   */
  async acquire(workspaceId: string, holder: LockHolder, reason: string, now: Date | string): Promise<AcquireResult> {
    const lockedAt = isoForWrite(now);
    return translating(this.dialect, async () => {
      try {
        return await this.db.transaction(async (trx) => {
          const existing = await trx<WorkspaceLockRow>("workspace_locks").where({ workspace_id: workspaceId }).first();
          if (existing !== undefined) throw new LostRace(toLock(existing));
          // On PostgreSQL the upsert also takes the counter row's lock, so concurrent acquirers of
          // one workspace queue here and each then sees the previous winner's committed lock row.
          await trx<WorkspaceLockFenceRow>("workspace_lock_fences")
            .insert({ workspace_id: workspaceId, fence: 1 })
            .onConflict("workspace_id")
            .merge({ fence: trx.raw("?? + 1", ["workspace_lock_fences.fence"]) as unknown as number });
          const counter = await trx<WorkspaceLockFenceRow>("workspace_lock_fences")
            .where({ workspace_id: workspaceId })
            .first();
          const fence = numberFromRow(counter!.fence);
          const row: WorkspaceLockRow = {
            workspace_id: workspaceId,
            holder_kind: holder.kind,
            holder_id: holder.id,
            fence,
            reason,
            locked_at: lockedAt,
          };
          await trx<WorkspaceLockRow>("workspace_locks").insert(row).onConflict("workspace_id").ignore();
          const held = await trx<WorkspaceLockRow>("workspace_locks").where({ workspace_id: workspaceId }).first();
          if (held === undefined) throw new Error(`workspace lock of ${workspaceId} vanished inside its acquisition`);
          const lock = toLock(held);
          if (lock.fence !== fence) throw new LostRace(lock);
          return { acquired: true as const, lock };
        });
      } catch (error) {
        if (error instanceof LostRace) return { acquired: false as const, lock: error.lock };
        throw error;
      }
    });
  }

  /** Releases the lock if `holder` holds it; whether it did. */
  async release(workspaceId: string, holder: LockHolder): Promise<boolean> {
    return translating(this.dialect, async () => {
      const deleted = await this.db<WorkspaceLockRow>("workspace_locks")
        .where({ workspace_id: workspaceId, holder_kind: holder.kind, holder_id: holder.id })
        .delete();
      return deleted > 0;
    });
  }

  /** Releases the lock whoever holds it; the lock that was released, if there was one. */
  async forceRelease(workspaceId: string): Promise<WorkspaceLock | undefined> {
    return translating(this.dialect, async () => {
      const row = await this.db<WorkspaceLockRow>("workspace_locks").where({ workspace_id: workspaceId }).first();
      if (row === undefined) return undefined;
      // Only that acquisition: a lock taken meanwhile (a new fence) stays.
      const deleted = await this.db<WorkspaceLockRow>("workspace_locks")
        .where({ workspace_id: workspaceId, fence: row.fence })
        .delete();
      return deleted > 0 ? toLock(row) : undefined;
    });
  }

  /**
   * The lock currently held on the workspace, if any. With `forUpdate` (inside a transaction)
   * PostgreSQL keeps the row from being released until the transaction ends; SQLite serialises
   * writers anyway.
   */
  async current(workspaceId: string, options: { forUpdate?: boolean } = {}): Promise<WorkspaceLock | undefined> {
    return translating(this.dialect, async () => {
      let query = this.db<WorkspaceLockRow>("workspace_locks").where({ workspace_id: workspaceId });
      if (options.forUpdate && this.dialect === "postgres") query = query.forUpdate();
      const row = await query.first();
      return row && toLock(row);
    });
  }

  /** The last fence handed out for the workspace (0 if it was never locked). */
  async lastFence(workspaceId: string): Promise<number> {
    return translating(this.dialect, async () => {
      const row = await this.db<WorkspaceLockFenceRow>("workspace_lock_fences")
        .where({ workspace_id: workspaceId })
        .first();
      return row === undefined ? 0 : numberFromRow(row.fence);
    });
  }
}

function toLock(row: WorkspaceLockRow): WorkspaceLock {
  return {
    workspaceId: row.workspace_id,
    holder: { kind: row.holder_kind as LockHolderKind, id: row.holder_id },
    fence: numberFromRow(row.fence),
    reason: row.reason,
    lockedAt: isoFromRow(row.locked_at),
  };
}
