import { canonicalize, sha256Hex } from "./canonical-json.ts";
import type { AuditEvent } from "./records.ts";
import { openNote } from "./signed-note.ts";

/**
 * The tamper-evident audit history.
 *
 * Every organization's audit events form one hash chain; events without an organization
 * (sign-ins, users, deployment keys) form the chain named `deployment`. Event `n` of a chain (its
 * position, from 0) stores the digest of event `n - 1` (event 0: GENESIS_DIGEST) and its own
 * digest: SHA-256 over the RFC 8785 (JCS) encoding of its fields, the chain, its position and
 * the previous digest (see auditEventDigest). canonicalize() is JCS for what audit events hold
 * (strings, finite numbers, booleans, null, arrays, plain objects): keys sorted by UTF-16 code
 * units, ECMAScript number and string serialisation, no whitespace.
 *
 * A checkpoint is a C2SP signed note whose text is a tlog checkpoint body: the origin
 * (`<key name>/<chain>`), the tree size (how many events it covers) and the base64 of the
 * digest of the last covered event. Anyone holding the verifier key can check it with
 * golang.org/x/mod/sumdb/note, and then the events it covers with verifyAuditChain.
 */

/** The chain of events that belong to no organization. */
export const DEPLOYMENT_CHAIN = "deployment";
/** What event 0 of every chain links to. */
export const GENESIS_DIGEST = "0".repeat(64);

const DIGEST = /^[0-9a-f]{64}$/u;

/** The chain an event with this organization belongs to. */
export function auditChainOf(organizationId: string | null): string {
  return organizationId ?? DEPLOYMENT_CHAIN;
}

/** An audit event with its place in its chain. */
export interface ChainedAuditEvent extends AuditEvent {
  chain: string;
  /** Position in the chain, from 0. */
  sequence: number;
  previousDigest: string;
  digest: string;
}

/** A signed checkpoint of one chain. */
export interface AuditCheckpoint {
  chain: string;
  /** How many events it covers (positions 0 … treeSize - 1). */
  treeSize: number;
  /** The digest of event treeSize - 1. */
  headDigest: string;
  keyName: string;
  /** The signed note. */
  note: string;
  createdAt: string;
}

/**
 * What an event records and where, under the column names it is stored with: the fields its
 * digest covers, so that the stored row and the digest cannot drift apart.
 */
export function auditEventFields(event: Omit<ChainedAuditEvent, "digest">) {
  return {
    id: event.id,
    organization_id: event.organizationId,
    actor_id: event.actorId,
    action: event.action,
    target_type: event.targetType,
    target_id: event.targetId,
    reason: event.reason,
    data: event.data,
    created_at: event.createdAt,
    chain: event.chain,
    sequence: event.sequence,
    previous_digest: event.previousDigest,
  };
}

/** The digest of one event: SHA-256 over the JCS encoding of what it records and where. */
export function auditEventDigest(event: Omit<ChainedAuditEvent, "digest">): string {
  return sha256Hex(canonicalize({ v: 1, ...auditEventFields(event) }));
}

/** The origin line of a chain's checkpoints. */
export function checkpointOrigin(keyName: string, chain: string): string {
  return `${keyName}/${chain}`;
}

/** The checkpoint text (the part that is signed). */
export function checkpointText(origin: string, treeSize: number, headDigest: string): string {
  if (!Number.isSafeInteger(treeSize) || treeSize < 1) throw new TypeError("a checkpoint covers at least one event");
  if (!DIGEST.test(headDigest)) throw new TypeError("the head digest is 64 lowercase hex digits");
  return `${origin}\n${treeSize}\n${Buffer.from(headDigest, "hex").toString("base64")}\n`;
}

/** A checkpoint text parsed; undefined when malformed. */
export function parseCheckpointText(
  text: string,
): { origin: string; treeSize: number; headDigest: string } | undefined {
  const match = /^([^\n]+)\n(0|[1-9][0-9]{0,15})\n([A-Za-z0-9+/]{43}=)\n/u.exec(text);
  if (match === null) return undefined;
  const hash = Buffer.from(match[3], "base64");
  if (hash.length !== 32) return undefined;
  return { origin: match[1], treeSize: Number(match[2]), headDigest: hash.toString("hex") };
}

/** The first thing wrong with a chain, at the first position it makes untrustworthy. */
export interface AuditChainProblem {
  position: number;
  message: string;
}

/** What verifyAuditChain needs. */
export interface AuditChainInput {
  chain: string;
  /** The events, in the order they are stored or exported (by position). */
  events: readonly ChainedAuditEvent[];
  checkpoints: readonly AuditCheckpoint[];
  /** The verifier key (note.NewVerifier form) checkpoints must be signed by. */
  verifierKey: string;
  /** Start at this checkpoint's tree size, trusting its signed head instead of the events before it. */
  fromCheckpoint?: number;
  /** The stored chain head (size and digest), when verifying against the database. */
  head?: { size: number; digest: string };
}

/** What verifyAuditChain found. */
export interface AuditChainReport {
  chain: string;
  /** Events recomputed. */
  verifiedEvents: number;
  /** Checkpoints whose signature and head were checked. */
  verifiedCheckpoints: number;
  problem: AuditChainProblem | null;
}

/** Recomputes a chain from its events and checks every checkpoint at or after the start. */
export function verifyAuditChain(input: AuditChainInput): AuditChainReport {
  let verifiedEvents = 0;
  let verifiedCheckpoints = 0;
  const report = (problem: AuditChainProblem | null): AuditChainReport => ({
    chain: input.chain,
    verifiedEvents,
    verifiedCheckpoints,
    problem,
  });

  // 1. Every checkpoint: signed by the key, for this chain, its text matching its stored fields.
  const bySize = new Map<number, AuditCheckpoint>();
  const ordered = [...input.checkpoints].sort((a, b) => a.treeSize - b.treeSize);
  for (const checkpoint of ordered) {
    const opened = openNote(checkpoint.note, input.verifierKey);
    if (!opened.ok)
      return report({
        position: checkpoint.treeSize - 1,
        message: `checkpoint of size ${checkpoint.treeSize}: ${opened.reason}`,
      });
    const body = parseCheckpointText(opened.text);
    if (
      body === undefined ||
      body.origin !== checkpointOrigin(checkpoint.keyName, input.chain) ||
      body.treeSize !== checkpoint.treeSize ||
      body.headDigest !== checkpoint.headDigest
    ) {
      return report({
        position: checkpoint.treeSize - 1,
        message: `checkpoint of size ${checkpoint.treeSize}: its signed text does not match its chain, size or head`,
      });
    }
    bySize.set(checkpoint.treeSize, checkpoint);
  }

  // 2. The start: position 0, or a signed checkpoint.
  let expected = 0;
  let previous = GENESIS_DIGEST;
  let lastAnchor = 0;
  if (input.fromCheckpoint !== undefined && input.fromCheckpoint > 0) {
    const anchor = bySize.get(input.fromCheckpoint);
    if (anchor === undefined)
      return report({
        position: input.fromCheckpoint,
        message: `there is no checkpoint of size ${input.fromCheckpoint} to start from`,
      });
    expected = anchor.treeSize;
    previous = anchor.headDigest;
    lastAnchor = anchor.treeSize;
  }
  verifiedCheckpoints = ordered.filter((c) => c.treeSize <= expected).length;

  // 3. The events, one by one.
  const start = expected;
  for (const event of input.events) {
    // From a checkpoint, what comes before it is vouched for by the signature (an export holds it all).
    if (start > 0 && expected === start && event.sequence < start) continue;
    if (event.chain !== input.chain)
      return report({
        position: expected,
        message: `position ${expected}: event ${event.id} belongs to chain ${event.chain}`,
      });
    if (event.sequence !== expected) {
      const what =
        event.sequence > expected
          ? `missing (the next event, ${event.id}, is at position ${event.sequence})`
          : `out of order (event ${event.id} claims position ${event.sequence})`;
      return report({ position: expected, message: `position ${expected}: event ${what}` });
    }
    if (event.previousDigest !== previous)
      return report({
        position: expected,
        message: `position ${expected}: event ${event.id} does not link to the event before it (deleted, reordered or edited)`,
      });
    if (auditEventDigest(event) !== event.digest)
      return report({
        position: expected,
        message: `position ${expected}: event ${event.id} was edited (its content does not match its digest)`,
      });
    previous = event.digest;
    expected += 1;
    verifiedEvents += 1;
    const checkpoint = bySize.get(expected);
    if (checkpoint !== undefined) {
      if (checkpoint.headDigest !== previous) {
        return report({
          position: lastAnchor,
          message: `positions ${lastAnchor}…${expected - 1} differ from the signed checkpoint of size ${expected} (rewritten)`,
        });
      }
      lastAnchor = expected;
      verifiedCheckpoints += 1;
    }
  }

  // 4. Nothing signed or recorded may be missing at the end.
  const last = ordered.at(-1);
  if (last !== undefined && last.treeSize > expected) {
    return report({
      position: expected,
      message: `position ${expected}: missing; the signed checkpoint of size ${last.treeSize} covers ${last.treeSize} events, only ${expected} are present (truncated)`,
    });
  }
  if (input.head !== undefined && (input.head.size !== expected || (expected > 0 && input.head.digest !== previous))) {
    const position = Math.min(expected, input.head.size);
    return report({
      position,
      message: `position ${position}: the chain head records ${input.head.size} events ending in ${input.head.digest.slice(0, 12)}…, the events give ${expected} ending in ${previous.slice(0, 12)}…`,
    });
  }
  return report(null);
}
