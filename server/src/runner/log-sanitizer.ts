import { REDACTED, StreamRedactor, ValueMatcher } from "../domain/redaction/index.ts";

/** What a sensitive value becomes in stored logs. */
export { REDACTED };

/**
 * Replaces every sensitive value (as is, JSON-escaped and the other spellings of
 * domain/redaction) in a stream of log text before it is stored. Chunks can split a value
 * anywhere, so a tail that could be the start of a value is held back until the next chunk or
 * the end; the output of any chunking is the redaction of the whole text.
 */
export class LogSanitizer {
  private readonly stream: StreamRedactor;

  constructor(secrets: readonly string[] | ValueMatcher) {
    this.stream = new StreamRedactor(secrets instanceof ValueMatcher ? secrets : new ValueMatcher(secrets));
  }

  /** Sanitized text that is safe to store now. */
  push(chunk: string): string {
    return this.stream.push(chunk);
  }

  /** Whatever is held back, sanitized; call once at the end. */
  flush(): string {
    return this.stream.flush();
  }
}

/** Removes ANSI escape sequences (tofu runs with -no-color, but providers may still emit them). */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex -- ANSI escapes start with ESC on purpose
  return text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, "");
}
