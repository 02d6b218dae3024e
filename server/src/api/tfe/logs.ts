import { createHmac, timingSafeEqual } from "node:crypto";
import { DomainError } from "../../domain/errors.ts";
import type { Run } from "../../domain/records.ts";
import type { Services } from "../../services.ts";

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

function mac(key: Buffer, payload: string): string {
  // A domain prefix keeps these signatures apart from the upload tokens signed with the same key.
  return createHmac("sha256", key).update(`tfe-log:${payload}`).digest().subarray(0, 16).toString("base64url");
}

/** A signed, expiring token naming one run's phase log: `base64url(payload).mac`. */
export function signLogToken(key: Buffer, runId: string, phase: TfeLogPhase, expiresAt: Date): string {
  const payload = Buffer.from(JSON.stringify({ run: runId, phase, exp: Math.floor(expiresAt.getTime() / 1000) })).toString("base64url");
  return `${payload}.${mac(key, payload)}`;
}

/** The run and phase a token names; a forged, tampered or expired token is 404. */
export function verifyLogToken(key: Buffer, token: string, now: Date): { runId: string; phase: TfeLogPhase } {
  const invalid = () => new DomainError("NOT_FOUND", "This log URL is invalid or has expired. Read the plan or apply again to get a fresh one.");
  const [payload, signature, extra] = token.split(".");
  if (!payload || !signature || extra !== undefined) throw invalid();
  const expected = Buffer.from(mac(key, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
  let parsed: { run?: unknown; phase?: unknown; exp?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (typeof parsed.run !== "string" || (parsed.phase !== "plan" && parsed.phase !== "apply")) throw invalid();
  if (typeof parsed.exp !== "number" || parsed.exp * 1000 < now.getTime()) throw invalid();
  return { runId: parsed.run, phase: parsed.phase };
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

/**
 * The text the CLI streams for a phase and whether it is complete. The plan stream carries the
 * plan log and, once that is complete, the policy stage's log (the CLI shows no policy checks of
 * its own, so this is where users see findings); it is complete when the policy stage is over.
 * Both logs only ever grow at the end, so byte offsets stay valid between reads.
 */
async function phaseText(services: Services, run: Run, phase: TfeLogPhase): Promise<{ text: string; complete: boolean }> {
  const window = await services.stores.logs.read(run.id, phase, 0, Number.MAX_SAFE_INTEGER);
  if (phase === "apply") return { text: applyLogHeader(run) + window.text, complete: window.complete };
  if (!window.complete) return { text: window.text, complete: false };
  // The run is read before the policy log: the runner closes that log before the run leaves the policy stage.
  const policy = await services.stores.logs.read(run.id, "policy", 0, Number.MAX_SAFE_INTEGER);
  return {
    text: policy.text.length > 0 ? `${window.text}\n${policy.text}` : window.text,
    complete: policy.complete || !BEFORE_POLICY_DECISION.has(run.status),
  };
}

/**
 * The bytes `[offset, offset+limit)` of STX, the phase's UTF-8 log and (once the log is complete)
 * ETX. Empty past the end or before anything was written.
 */
export async function readFramedLog(services: Services, run: Run, phase: TfeLogPhase, offset: number, limit: number): Promise<Uint8Array> {
  const { text, complete } = await phaseText(services, run, phase);
  const framed = Buffer.concat([Buffer.from([STX]), Buffer.from(text, "utf8"), complete ? Buffer.from([ETX]) : Buffer.alloc(0)]);
  if (offset >= framed.length) return new Uint8Array(0);
  return new Uint8Array(framed.subarray(offset, Math.min(framed.length, offset + limit)));
}
