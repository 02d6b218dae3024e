import { DomainError } from "../../domain/errors.ts";
import type { Run } from "../../domain/records.ts";
import { signToken, verifyToken } from "../../domain/signed-tokens.ts";
import type { Services } from "../../commands/services.ts";
import type { StoredLogPhase } from "../../store/index.ts";

// The CLI's log protocol (contract §6.6): an absolute `log-read-url` whose query string the CLI
// replaces with `limit=…&offset=…`, read without an Authorization header. The proof therefore
// lives in the path: a signed, expiring token naming the run and the phase.

/** How long a log URL stays valid (the CLI fetches a fresh one with each plan/apply read). */
export const LOG_URL_TTL_SECONDS = 6 * 3600;

/** The phases whose logs the CLI streams. */
export type TfeLogPhase = "plan" | "apply";

/** Start and end of the framed stream (the CLI strips them). */
const STX = 0x02;
const ETX = 0x03;

/** A signed, expiring token naming one run's phase log (domain/signed-tokens.ts, purpose log-read). */
export function signLogToken(key: Buffer, runId: string, phase: TfeLogPhase, expiresAt: Date): string {
  return signToken(key, "log-read", { run: runId, phase }, expiresAt);
}

/** The run and phase a token names; a forged, tampered or expired token is 404. */
export function verifyLogToken(key: Buffer, token: string, now: Date): { runId: string; phase: TfeLogPhase } {
  const claims = verifyToken(key, "log-read", token, ["run", "phase"], now);
  if (claims === null || (claims.phase !== "plan" && claims.phase !== "apply")) {
    throw new DomainError(
      "NOT_FOUND",
      "This log URL is invalid or has expired. Read the plan or apply again to get a fresh one.",
    );
  }
  return { runId: claims.run, phase: claims.phase };
}

/** The absolute log URL of a run's phase. */
export function logReadUrl(services: Services, baseUrl: string, runId: string, phase: TfeLogPhase): string {
  const expiresAt = new Date(services.clock().getTime() + LOG_URL_TTL_SECONDS * 1000);
  return `${baseUrl}/api/v2/logs/${signLogToken(services.keys.uploadUrl, runId, phase, expiresAt)}`;
}

/**
 * The three lines the CLI drops from the start of every apply log (it expects HCP's
 * version/platform/initializing header there), so the real output is shown whole.
 */
export function applyLogHeader(run: Run): string {
  return `StackShip apply of run ${run.id}\nOpenTofu v${run.opentofuVersion} on ${run.platform}\nApplying the approved plan...\n`;
}

/** Run statuses in which the policy stage may still write its log. */
const BEFORE_POLICY_DECISION = new Set<Run["status"]>(["pending", "planning", "policy_checking"]);

/** One piece of the framed stream: its length in bytes and how to read a range of it. */
interface Segment {
  length: number;
  read(start: number, end: number): Promise<Buffer> | Buffer;
}

function fixed(bytes: Buffer): Segment {
  return { length: bytes.length, read: (start, end) => bytes.subarray(start, end) };
}

/**
 * The pieces of the stream the CLI reads for a phase: STX, the phase's log (the apply log after
 * the header the CLI drops) and, once complete, ETX. The plan stream carries the plan log and,
 * once that is complete, the policy stage's log (the CLI shows no policy checks of its own, so
 * this is where users see findings); it is complete when the policy stage is over. Every log only
 * grows at the end, so byte offsets stay valid between reads. Only log lengths are read here; the
 * text of the chunks a window overlaps is read by `readFramedLog`.
 */
async function segments(services: Services, run: Run, phase: TfeLogPhase): Promise<Segment[]> {
  const logs = services.stores.logs;
  // The run is read before the log positions: the runner closes the policy log before the run leaves the policy stage.
  const positions = await logs.allPositions(run.id);
  const log = (of: StoredLogPhase): Segment => ({
    length: positions[of].byteLength,
    read: (start, end) => logs.readBytes(run.id, of, start, end),
  });
  // A run with structured output: the `-json` UI lines its plan and apply printed, which the CLI
  // renders (the human form of the same log is what /v1 and the dashboard read).
  const plan = run.structuredRunOutput ? "plan_json" : "plan";
  const apply = run.structuredRunOutput ? "apply_json" : "apply";
  const out: Segment[] = [fixed(Buffer.from([STX]))];
  let complete: boolean;
  if (phase === "apply") {
    out.push(fixed(Buffer.from(applyLogHeader(run), "utf8")), log(apply));
    complete = positions[apply].complete;
  } else {
    out.push(log(plan));
    complete = positions[plan].complete && (positions.policy.complete || !BEFORE_POLICY_DECISION.has(run.status));
    if (positions[plan].complete && positions.policy.byteLength > 0) out.push(fixed(Buffer.from("\n")), log("policy"));
  }
  if (complete) out.push(fixed(Buffer.from([ETX])));
  return out;
}

/**
 * The bytes `[offset, offset+limit)` of STX, the phase's UTF-8 log and (once the log is complete)
 * ETX. Empty past the end or before anything was written.
 */
export async function readFramedLog(
  services: Services,
  run: Run,
  phase: TfeLogPhase,
  offset: number,
  limit: number,
): Promise<Uint8Array> {
  const end = offset + limit;
  const parts: Buffer[] = [];
  let at = 0;
  for (const segment of await segments(services, run, phase)) {
    const from = Math.max(offset, at);
    const to = Math.min(end, at + segment.length);
    if (from < to) parts.push(await segment.read(from - at, to - at));
    at += segment.length;
    if (at >= end) break;
  }
  return new Uint8Array(Buffer.concat(parts));
}
