import type { Stores } from "../store/index.ts";
import { LogSanitizer, stripAnsi } from "./log-sanitizer.ts";
import { type ValueMatcher } from "../domain/redaction/index.ts";

/**
 * Appends sanitized phase output to the run's log in batches. A held log (the plan's) keeps its
 * text in memory until `release` names the phase's whole set of sensitive values: the values the
 * plan itself marks are only known once the plan exists, and nothing is stored (or streamed)
 * before they are redacted too.
 */
export class PhaseLog {
  private buffer = "";
  private writes: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private sanitizer: LogSanitizer | null = null;
  private held: string[] = [];

  constructor(
    private readonly stores: Stores,
    private readonly runId: string,
    private readonly phase: "plan" | "policy" | "apply",
    private readonly clock: () => Date,
    private readonly secrets: readonly string[] | ValueMatcher,
    options: { hold?: boolean } = {},
  ) {
    if (!options.hold) this.sanitizer = new LogSanitizer(secrets);
  }

  write(text: string): void {
    if (this.sanitizer === null) {
      this.held.push(stripAnsi(text));
      return;
    }
    this.buffer += this.sanitizer.push(stripAnsi(text));
    if (this.buffer.length >= 16 * 1024) this.flush(false);
    else if (!this.timer) this.timer = setTimeout(() => this.flush(false), 200);
  }

  /** A held log: sanitizes what was held with these values (and everything after), and starts storing. */
  release(secrets: readonly string[] | ValueMatcher): void {
    if (this.sanitizer !== null) return;
    this.sanitizer = new LogSanitizer(secrets);
    const held = this.held.join("");
    this.held = [];
    // In pieces, so the stored chunks (and live messages) stay the size they are while streaming.
    for (let at = 0; at < held.length;) {
      let end = Math.min(held.length, at + 16 * 1024);
      const last = held.charCodeAt(end - 1);
      if (end < held.length && last >= 0xd800 && last <= 0xdbff) end--; // never split a surrogate pair
      this.write(held.slice(at, end));
      at = end;
    }
  }

  private flush(final: boolean): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.sanitizer === null) this.release(this.secrets);
    const text = this.buffer + (final ? this.sanitizer!.flush() : "");
    this.buffer = "";
    if (text.length === 0 && !final) return;
    this.writes = this.writes.then(() => this.stores.logs.append(this.runId, this.phase, text, final, this.clock()));
  }

  /** Writes what is left and marks the phase's log complete (a held log not released yet: with the values it was created with). */
  async close(): Promise<void> {
    if (this.sanitizer === null) this.release(this.secrets);
    this.flush(true);
    await this.writes;
  }
}
