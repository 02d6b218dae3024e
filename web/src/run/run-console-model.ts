// The pure part of the phase console (run-console.ts): its limits and captions, the newest-text
// cut, and the line, error-line and search helpers over its text.

/** The newest decoded log text a console keeps (UTF-16 code units, as the log route counts). */
export const CONSOLE_MAX_CHARS = 512 * 1024;
/** One HTTP log window. */
export const LOG_WINDOW = 1024 * 1024;
export const CAPTIONS = { plan: "Plan log", policy: "Policy log", apply: "Apply log" } as const;

/** `text` cut to its newest `max` code units, never starting inside a surrogate pair. */
export function keepNewest(text: string, max = CONSOLE_MAX_CHARS): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  let start = text.length - max;
  const first = text.charCodeAt(start);
  if (first >= 0xdc00 && first <= 0xdfff) start++;
  return { text: text.slice(start), cut: true };
}

/** The first line tofu (or the runner) reports an error on: "Error: …", also inside tofu's "│ " box. */
export const ERROR_LINE = /^(│ |\| )?Error: /m;
/** Matches highlighted per search at most. */
export const MAX_MATCHES = 5000;

/** Where `needle` (lower case) occurs in `text`, case-insensitively and without overlaps: at most MAX_MATCHES offsets. */
export function findMatches(text: string, needle: string): number[] {
  const hay = text.toLowerCase();
  const found: number[] = [];
  for (
    let at = hay.indexOf(needle);
    at !== -1 && found.length < MAX_MATCHES;
    at = hay.indexOf(needle, at + needle.length)
  )
    found.push(at);
  return found;
}

export function newlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count++;
  return count;
}

/** Line numbers `from`..`to`, one a line ("\n"-joined; with `leading`, starting with a newline). */
export function numbers(from: number, to: number, leading = false): string {
  const out: string[] = [];
  for (let n = from; n <= to; n++) out.push(String(n));
  return (leading && out.length ? "\n" : "") + out.join("\n");
}

export function isLow(text: string) {
  const first = text.charCodeAt(0);
  return first >= 0xdc00 && first <= 0xdfff;
}
