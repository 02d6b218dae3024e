import { DEFAULT_PHASE_LOG_MAX_BYTES } from "../config.ts";
import type { StoredLogPhase, Stores } from "../store/index.ts";
import { LogSanitizer, stripAnsi } from "./log-sanitizer.ts";
import { type ValueMatcher } from "../domain/redaction/index.ts";
import { JsonLogRenderer } from "./json-log.ts";

/** The line a log over its cap carries where its output was cut (the live feed and the CLI see it too). */
export function truncationLine(maxBytes: number): string {
  const head = Math.floor(maxBytes / 2);
  return `\n[StackShip: this log is over its cap of ${maxBytes} bytes (STACKSHIP_PHASE_LOG_MAX_BYTES). The first ${head} bytes are above; the newest ${maxBytes - head} bytes are kept and follow when the phase ends; the output between them is dropped.]\n`;
}

/**
 * Keeps a phase's stored log within its cap, never rewriting what was stored (readers' offsets
 * stay valid): the first half of the cap is stored as it comes; what follows is held until the
 * log is either complete within the cap (then stored whole) or over it: then the truncation line
 * is stored at once and only the newest half of the cap is kept, stored when the phase ends. A
 * log of exactly `maxBytes` bytes is stored whole; one byte more and it is cut. Works on the
 * sanitized text (nothing sensitive is left in it to cut in half).
 */
class LogCap {
  private readonly head: number;
  private readonly tail: number;
  private stored = 0;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private truncated = false;

  constructor(private readonly maxBytes: number) {
    this.head = Math.floor(maxBytes / 2);
    this.tail = maxBytes - this.head;
  }

  /** What of `text` (and of what was held) to store now. */
  take(text: string, final: boolean): string {
    let out = "";
    if (this.heldBytes === 0 && !this.truncated && this.stored + Buffer.byteLength(text, "utf8") <= this.head) {
      this.stored += Buffer.byteLength(text, "utf8");
      out = text;
    } else if (text.length > 0) {
      let bytes = Buffer.from(text, "utf8");
      if (!this.truncated && this.heldBytes === 0 && this.stored < this.head) {
        let cut = this.head - this.stored;
        while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) cut--; // never split a character
        out = bytes.subarray(0, cut).toString("utf8");
        this.stored += cut;
        bytes = bytes.subarray(cut);
      }
      this.held.push(bytes);
      this.heldBytes += bytes.length;
      if (!this.truncated && this.stored + this.heldBytes > this.maxBytes) {
        this.truncated = true;
        out += truncationLine(this.maxBytes);
      }
      if (this.truncated) this.keepNewest();
    }
    if (final && this.heldBytes > 0) {
      let tail = Buffer.concat(this.held);
      let start = 0;
      while (this.truncated && start < tail.length && (tail[start] & 0xc0) === 0x80) start++; // a whole first character
      tail = tail.subarray(start);
      out += tail.toString("utf8");
      this.held = [];
      this.heldBytes = 0;
    }
    return out;
  }

  /** Drops held output older than the newest `tail` bytes. */
  private keepNewest(): void {
    while (this.held.length > 0 && this.heldBytes - this.held[0].length >= this.tail)
      this.heldBytes -= this.held.shift()!.length;
    const excess = this.heldBytes - this.tail;
    if (excess > 0) {
      this.held[0] = this.held[0].subarray(excess);
      this.heldBytes -= excess;
    }
  }
}

/**
 * Appends sanitized phase output to the run's log in batches. A held log (the plan's) keeps its
 * text in memory until `release` names the phase's whole set of sensitive values: the values the
 * plan itself marks are only known once the plan exists, and nothing is stored (or streamed)
 * before they are redacted too. The stored log is capped (LogCap): its newest output is kept.
 *
 * A `json` log (a plan or apply of a run with structured output, whose tofu prints `-json` UI
 * lines) keeps both forms: the output as it came under `plan_json`/`apply_json` (the CLI renders
 * it) and its human rendering (json-log.ts) under the phase itself. Each is redacted and capped
 * on its own, with the same values. In a held plan log the human form shows tofu's own rendering
 * of the saved plan (`tofu show`: each resource's changes, moves, "No changes."), given to
 * `release`, where the plan's UI lines came; without it, their `@message` lines.
 */
export class PhaseLog {
  private buffer = "";
  private readonly json: PhaseLog | null = null;
  private readonly renderer: JsonLogRenderer | null = null;
  private writes: Promise<unknown> = Promise.resolve();
  /** The first append that failed: later chunks are not written, and close() throws it. */
  private failure: { error: unknown } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private sanitizer: LogSanitizer | null = null;
  private held: string[] = [];
  /** Where in `held` the plan's own rendering goes (a held structured plan log, json-log.ts). */
  private planAt: number | null = null;
  private readonly cap: LogCap;

  constructor(
    private readonly stores: Stores,
    private readonly runId: string,
    private readonly phase: StoredLogPhase,
    private readonly clock: () => Date,
    private readonly secrets: readonly string[] | ValueMatcher,
    options: { hold?: boolean; maxBytes?: number; json?: boolean } = {},
  ) {
    if (!options.hold) this.sanitizer = new LogSanitizer(secrets);
    this.cap = new LogCap(options.maxBytes ?? DEFAULT_PHASE_LOG_MAX_BYTES);
    if (options.json && phase !== "policy") {
      this.json = new PhaseLog(stores, runId, phase === "plan" ? "plan_json" : "apply_json", clock, secrets, {
        hold: options.hold,
        maxBytes: options.maxBytes,
      });
      this.renderer = new JsonLogRenderer(phase === "plan" && options.hold === true);
    }
  }

  write(text: string): void {
    if (this.json && this.renderer) {
      this.json.write(text);
      this.writePieces(this.renderer.push(text));
    } else {
      this.writeText(text);
    }
  }

  /** Rendered pieces: the plan's own rendering goes between the first and the second (JsonLogRenderer). */
  private writePieces(pieces: string[]): void {
    pieces.forEach((piece, index) => {
      if (index > 0) this.planAt = this.held.length;
      this.writeText(piece);
    });
  }

  private writeText(text: string): void {
    if (text.length === 0) return;
    if (this.sanitizer === null) {
      this.held.push(stripAnsi(text));
      return;
    }
    this.buffer += this.sanitizer.push(stripAnsi(text));
    if (this.buffer.length >= 16 * 1024) this.flush(false);
    else if (!this.timer) this.timer = setTimeout(() => this.flush(false), 200);
  }

  /**
   * A held log: sanitizes what was held with these values (and everything after), and starts
   * storing. `humanPlan` is tofu's own rendering of the saved plan, for a structured plan log.
   */
  release(secrets: readonly string[] | ValueMatcher, humanPlan?: string): void {
    this.json?.release(secrets);
    if (this.sanitizer !== null) return;
    this.sanitizer = new LogSanitizer(secrets);
    if (this.renderer?.planSection) {
      // The plan's rendering where its lines came: tofu's own, else their `@message` lines. From
      // here on, the plan's lines (none are left once tofu exited) render where they come.
      this.renderer.planSection = false;
      if (this.planAt !== null)
        this.held.splice(
          this.planAt,
          0,
          stripAnsi(humanPlan !== undefined ? withBlankLineBefore(humanPlan) : this.renderer.section),
        );
      else if (this.renderer.section.length > 0) this.held.push(this.renderer.section);
      this.renderer.section = "";
    }
    const held = this.held.join("");
    this.held = [];
    // In pieces, so the stored chunks (and live messages) stay the size they are while streaming.
    for (let at = 0; at < held.length;) {
      let end = Math.min(held.length, at + 16 * 1024);
      const last = held.charCodeAt(end - 1);
      if (end < held.length && last >= 0xd800 && last <= 0xdbff) end--; // never split a surrogate pair
      this.writeText(held.slice(at, end));
      at = end;
    }
  }

  private flush(final: boolean): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.sanitizer === null) this.release(this.secrets);
    const text = this.cap.take(this.buffer + (final ? this.sanitizer!.flush() : ""), final);
    this.buffer = "";
    if (text.length === 0 && !final) return;
    // Handled at once: a timer's flush failing (a full disk, a lost database) must not become an
    // unhandled rejection, which ends the process; close() reports it to the phase instead.
    this.writes = this.writes
      .then(() =>
        this.failure ? undefined : this.stores.logs.append(this.runId, this.phase, text, final, this.clock()),
      )
      .catch((error: unknown) => {
        this.failure ??= { error };
      });
  }

  /** Writes what is left and marks the phase's log complete (a held log not released yet: with the values it was created with). */
  async close(): Promise<void> {
    if (this.renderer) this.writePieces(this.renderer.flush());
    if (this.sanitizer === null) this.release(this.secrets);
    this.flush(true);
    await Promise.all([this.writes, this.json?.close()]);
    if (this.failure) throw this.failure.error;
  }
}

/** tofu's rendering of a plan as it follows the refresh lines in a human plan log: after a blank line, ending in a newline. */
function withBlankLineBefore(text: string): string {
  const body = text.replace(/^\n+/, "");
  return `\n${body}${body.endsWith("\n") ? "" : "\n"}`;
}
