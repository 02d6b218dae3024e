import { auditVerifierKey } from "../../commands/audit-checkpoints.ts";
import { auditChainOf } from "../../domain/audit-chain.ts";
import { decodeAuditCursor, encodeAuditCursor, type AuditCursorKind } from "../../domain/audit-cursor.ts";
import type { RequestContext } from "../../http/app.ts";
import { loadOrganization } from "../lookup.ts";
import type { H } from "./types.ts";

/**
 * The organization a listing of its audit chain names (org:admin), the chain, the page size and
 * where the page starts: at the beginning, or where the query's cursor (of `kind`) says.
 */
async function auditListing(
  ctx: RequestContext,
  organizationName: string,
  query: { limit?: number; cursor?: string },
  kind: AuditCursorKind,
) {
  const organization = await loadOrganization(ctx, organizationName, "org:admin");
  const chain = auditChainOf(organization.id);
  const limit = query.limit ?? 100;
  const from =
    query.cursor === undefined ? 0 : decodeAuditCursor(query.cursor, ctx.services.keys.cursor, { kind, chain });
  return { organization, chain, limit, from };
}

/** The page's links and meta.page: the next cursor starts at `next` when there is more. */
function paging(
  ctx: RequestContext,
  kind: AuditCursorKind,
  chain: string,
  self: string,
  limit: number,
  next: number | null,
) {
  const nextCursor =
    next === null ? null : encodeAuditCursor({ kind, chain, position: next }, ctx.services.keys.cursor);
  return {
    page: { limit, next_cursor: nextCursor },
    links: { self, next: nextCursor === null ? null : `${self}&cursor=${encodeURIComponent(nextCursor)}` },
  };
}

/** The organization's audit history (a hash chain) and its signed checkpoints. */
export const auditHandlers = {
  async listAuditEvents({ path, query, ctx }) {
    const { organization, chain, limit, from } = await auditListing(ctx, path.organization_name, query, "events");
    const events = await ctx.services.stores.audit.listChain(chain, { from, limit: limit + 1 });
    const page = events.slice(0, limit);
    const { page: meta, links } = paging(
      ctx,
      "events",
      chain,
      `/v1/organizations/${organization.name}/audit-events?limit=${limit}`,
      limit,
      events.length > limit ? from + limit : null,
    );
    return {
      status: 200,
      body: {
        data: page.map((event) => ({
          type: "audit-events" as const,
          id: event.id,
          attributes: {
            sequence: event.sequence,
            action: event.action,
            actor_id: event.actorId,
            target_type: event.targetType,
            target_id: event.targetId,
            reason: event.reason,
            data: event.data,
            created_at: event.createdAt,
            previous_digest: event.previousDigest,
            digest: event.digest,
          },
        })),
        meta: { page: meta },
        links,
      },
    };
  },

  async listAuditCheckpoints({ path, query, ctx }) {
    const { organization, chain, limit, from } = await auditListing(ctx, path.organization_name, query, "checkpoints");
    const checkpoints = await ctx.services.stores.audit.listCheckpoints(chain, { from, limit: limit + 1 });
    const page = checkpoints.slice(0, limit);
    const last = page.at(-1);
    const next = checkpoints.length > limit && last !== undefined ? last.treeSize + 1 : null;
    const { page: meta, links } = paging(
      ctx,
      "checkpoints",
      chain,
      `/v1/organizations/${organization.name}/audit-checkpoints?limit=${limit}`,
      limit,
      next,
    );
    const key = await auditVerifierKey(ctx.services);
    const head = await ctx.services.stores.audit.head(chain);
    return {
      status: 200,
      body: {
        data: page.map((checkpoint) => ({
          type: "audit-checkpoints" as const,
          id: `${chain}:${checkpoint.treeSize}`,
          attributes: {
            tree_size: checkpoint.treeSize,
            head_digest: checkpoint.headDigest,
            key_name: checkpoint.keyName,
            note: checkpoint.note,
            created_at: checkpoint.createdAt,
          },
        })),
        meta: {
          page: meta,
          key_name: key.name,
          verifier_key: key.verifierKey,
          head: { size: head.size, digest: head.digest },
        },
        links,
      },
    };
  },
} satisfies Pick<H, "listAuditEvents" | "listAuditCheckpoints">;
