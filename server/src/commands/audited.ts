import { inTransaction, type Stores } from "../store/index.ts";
import type { Services } from "./services.ts";

/** Records `action` on one resource (its JSON:API type and id), with its data, in the command's transaction. */
export type RecordAction = (
  action: string,
  target: readonly [type: string, id: string],
  data?: Record<string, unknown>,
) => Promise<void>;

/** Who a command acts as, in which organization (null: the deployment), and optionally when. */
export interface AuditedBy {
  organizationId: string | null;
  actorId: string | null;
  /** The command's clock reading when it took one before its writes; else `services.clock()`. */
  at?: Date;
}

/**
 * Runs a command's writes in one transaction with the audit events they make. `record` appends an
 * event by `by.actorId` in `by.organizationId` at `now`, the one clock reading the writes get too:
 * the events commit with the writes or not at all.
 */
export function audited<T>(
  services: Pick<Services, "db" | "clock">,
  by: AuditedBy,
  work: (stores: Stores, record: RecordAction, now: Date) => Promise<T>,
): Promise<T> {
  const now = by.at ?? services.clock();
  const actor = { organizationId: by.organizationId, actorId: by.actorId, createdAt: now };
  return inTransaction(services.db, (stores) =>
    work(
      stores,
      async (action, target, data) => {
        await stores.audit.recordAction(actor, action, target, data);
      },
      now,
    ),
  );
}
