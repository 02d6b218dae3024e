import {
  verifyAuditChain,
  type AuditChainReport,
  type AuditCheckpoint,
  type ChainedAuditEvent,
} from "./audit-chain.ts";

/**
 * The audit history exported as JSON Lines, verifiable offline: one `key` line (the verifier key
 * the checkpoints are signed for), then the chain's events in order (`event` lines), its
 * checkpoints (`checkpoint` lines) and its head when exported (`head`). Fields are the API's
 * snake_case attributes.
 */

/** One chain, everything a verifier needs. */
export interface AuditChainExport {
  chain: string;
  verifierKey: string;
  events: ChainedAuditEvent[];
  checkpoints: AuditCheckpoint[];
  head?: { size: number; digest: string };
}

/** The chain as JSON Lines. */
export function exportAuditChain(exported: AuditChainExport): string {
  const lines: unknown[] = [{ kind: "key", chain: exported.chain, verifier_key: exported.verifierKey }];
  for (const e of exported.events) {
    lines.push({
      kind: "event",
      chain: e.chain,
      sequence: e.sequence,
      id: e.id,
      organization_id: e.organizationId,
      actor_id: e.actorId,
      action: e.action,
      target_type: e.targetType,
      target_id: e.targetId,
      reason: e.reason,
      data: e.data,
      created_at: e.createdAt,
      previous_digest: e.previousDigest,
      digest: e.digest,
    });
  }
  for (const c of exported.checkpoints) {
    lines.push({
      kind: "checkpoint",
      chain: c.chain,
      tree_size: c.treeSize,
      head_digest: c.headDigest,
      key_name: c.keyName,
      note: c.note,
      created_at: c.createdAt,
    });
  }
  if (exported.head !== undefined)
    lines.push({ kind: "head", chain: exported.chain, size: exported.head.size, digest: exported.head.digest });
  return lines.map((line) => JSON.stringify(line)).join("\n") + "\n";
}

/** Thrown for a file that is not an audit export. */
export class AuditExportError extends Error {}

/** Parses an export; throws AuditExportError naming the first bad line. */
export function parseAuditExport(text: string): AuditChainExport {
  let chain: string | undefined;
  let verifierKey: string | undefined;
  let head: { size: number; digest: string } | undefined;
  const events: ChainedAuditEvent[] = [];
  const checkpoints: AuditCheckpoint[] = [];
  const lines = text.split("\n");
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue;
    const where = `line ${index + 1}`;
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new AuditExportError(`${where}: not JSON`);
    }
    if (typeof value !== "object" || value === null) throw new AuditExportError(`${where}: not a JSON object`);
    const str = (key: string) => {
      if (typeof value[key] !== "string") throw new AuditExportError(`${where}: ${key} is not a string`);
      return value[key];
    };
    const strOrNull = (key: string) => (value[key] === null ? null : str(key));
    const int = (key: string) => {
      if (typeof value[key] !== "number" || !Number.isSafeInteger(value[key]))
        throw new AuditExportError(`${where}: ${key} is not a whole number`);
      return value[key];
    };
    switch (value.kind) {
      case "key":
        chain = str("chain");
        verifierKey = str("verifier_key");
        break;
      case "event": {
        const data = value.data;
        if (typeof data !== "object" || data === null || Array.isArray(data))
          throw new AuditExportError(`${where}: data is not an object`);
        events.push({
          chain: str("chain"),
          sequence: int("sequence"),
          id: str("id"),
          organizationId: strOrNull("organization_id"),
          actorId: strOrNull("actor_id"),
          action: str("action"),
          targetType: str("target_type"),
          targetId: str("target_id"),
          reason: strOrNull("reason"),
          data: data as Record<string, unknown>,
          createdAt: str("created_at"),
          previousDigest: str("previous_digest"),
          digest: str("digest"),
        });
        break;
      }
      case "checkpoint":
        checkpoints.push({
          chain: str("chain"),
          treeSize: int("tree_size"),
          headDigest: str("head_digest"),
          keyName: str("key_name"),
          note: str("note"),
          createdAt: str("created_at"),
        });
        break;
      case "head":
        head = { size: int("size"), digest: str("digest") };
        break;
      default:
        throw new AuditExportError(`${where}: unknown kind ${JSON.stringify(value.kind)}`);
    }
  }
  if (chain === undefined || verifierKey === undefined)
    throw new AuditExportError("no key line: the export names no chain and verifier key");
  return { chain, verifierKey, events, checkpoints, head };
}

/**
 * Verifies an export. `verifierKey`, when given (obtained out of band), replaces the key the file
 * names: a file's own key proves only that the file is self-consistent.
 */
export function verifyAuditExport(
  text: string,
  options: { verifierKey?: string; fromCheckpoint?: number } = {},
): AuditChainReport {
  const exported = parseAuditExport(text);
  return verifyAuditChain({
    chain: exported.chain,
    events: exported.events,
    checkpoints: exported.checkpoints.filter((c) => c.chain === exported.chain),
    verifierKey: options.verifierKey ?? exported.verifierKey,
    fromCheckpoint: options.fromCheckpoint,
    head: exported.head,
  });
}
