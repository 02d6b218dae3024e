import { canonicalize } from "../domain/canonical-json.ts";
import { newId } from "../domain/ids.ts";
import type { AuditEvent } from "../domain/records.ts";
import { Repository } from "./repository.ts";
import type { AuditEventRow } from "./rows.ts";
import { translating } from "./translate-error.ts";
import { isoForWrite } from "./values.ts";
import { rowMapper } from "./columns.ts";

/** What recording an audit event needs. */
export interface RecordAuditEventInput {
  id?: string;
  organizationId: string | null;
  actorId: string | null;
  action: string;
  targetType: string;
  targetId: string;
  reason?: string | null;
  /** Plain JSON data; stored as canonical JSON. */
  data?: Record<string, unknown>;
  createdAt: Date | string;
}

/** Who made an audited change, in which organization, and when. */
export interface AuditActor {
  organizationId: string | null;
  actorId: string | null;
  createdAt: Date | string;
}

/** The audit trail. */
export class AuditRepository extends Repository {
  /** Records an audit event. */
  async record(input: RecordAuditEventInput): Promise<AuditEvent> {
    const row: AuditEventRow = {
      id: input.id ?? newId("auditEvent"),
      organization_id: input.organizationId,
      actor_id: input.actorId,
      action: input.action,
      target_type: input.targetType,
      target_id: input.targetId,
      reason: input.reason ?? null,
      data: canonicalize(input.data ?? {}),
      created_at: isoForWrite(input.createdAt),
    };
    return translating(this.dialect, async () => {
      await this.db<AuditEventRow>("audit_events").insert(row);
      return toAuditEvent(row);
    });
  }

  /** Records `action` on one resource (its JSON:API type and id) by `by`: record() in one line. */
  async recordAction(by: AuditActor, action: string, target: readonly [type: string, id: string], data?: Record<string, unknown>): Promise<AuditEvent> {
    return this.record({ ...by, action, targetType: target[0], targetId: target[1], data });
  }

  /** The organization's audit events, oldest first. */
  async listByOrganization(organizationId: string): Promise<AuditEvent[]> {
    return translating(this.dialect, async () => {
      const rows = await this.db<AuditEventRow>("audit_events")
        .where({ organization_id: organizationId })
        .orderBy([
          { column: "created_at", order: "asc" },
          { column: "id", order: "asc" },
        ]);
      return rows.map(toAuditEvent);
    });
  }
}

const toAuditEvent = rowMapper<AuditEventRow, AuditEvent>()("id organization_id actor_id action target_type target_id reason data:json created_at:iso");
