/** What a sensitive value becomes in stored logs. */
export const REDACTED = "[sensitive value]";

/** The spellings a value can take in tofu's output: as is, and JSON-escaped (inside quotes). */
function spellings(secret: string): string[] {
  const escaped = JSON.stringify(secret).slice(1, -1);
  return [...new Set([secret, escaped])].filter((s) => s.length > 0);
}

/**
 * Replaces every sensitive value in a stream of log text before it is stored. Chunks can split a
 * value anywhere, so the last (longest value − 1) characters are held back until the next chunk
 * or the end.
 */
export class LogSanitizer {
  private readonly needles: string[];
  private readonly holdBack: number;
  private pending = "";

  constructor(secrets: readonly string[]) {
    // Longest first, so a value containing another is replaced whole.
    this.needles = [...new Set(secrets.flatMap(spellings))].sort((a, b) => b.length - a.length);
    this.holdBack = this.needles.reduce((max, n) => Math.max(max, n.length - 1), 0);
  }

  private redact(text: string): string {
    let out = text;
    for (const needle of this.needles) out = out.split(needle).join(REDACTED);
    return out;
  }

  /** Sanitized text that is safe to store now. */
  push(chunk: string): string {
    const text = this.redact(this.pending + chunk);
    if (this.holdBack === 0) {
      this.pending = "";
      return text;
    }
    // Hold back a tail that could be the start of a value; never split a redaction marker.
    let cut = Math.max(0, text.length - this.holdBack);
    const marker = text.lastIndexOf(REDACTED, cut);
    if (marker !== -1 && marker + REDACTED.length > cut) cut = marker + REDACTED.length;
    this.pending = text.slice(cut);
    return text.slice(0, cut);
  }

  /** Whatever is held back, sanitized; call once at the end. */
  flush(): string {
    const text = this.redact(this.pending);
    this.pending = "";
    return text;
  }
}

/** Removes ANSI escape sequences (tofu runs with -no-color, but providers may still emit them). */
export function stripAnsi(text: string): string {
  return text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, "");
}
