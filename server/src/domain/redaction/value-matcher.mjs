// Finding and replacing values in text: every spelling a value can take (spellingsOf), an
// Aho-Corasick automaton over all of them (ValueMatcher) and redaction of a stream chunk by chunk
// (StreamRedactor). Plain JavaScript with no imports at all: sensitive-values.mjs imports it and
// re-exports it, and the plan sandbox runs the plan-diff builder with the modules it imports
// mounted beside it and nothing else (types in value-matcher.d.mts).

/** What a sensitive value becomes in text (logs, findings, error messages). */
export const REDACTED = "[sensitive value]";
/** The shortest value (in code points) that is redacted by value when it was found by path. */
export const MIN_SENSITIVE_VALUE_LENGTH = 6;

/** Whether a text is long enough to be redacted by value (at least MIN_SENSITIVE_VALUE_LENGTH code points). */
export function isSpecific(text) {
  if (typeof text !== "string" || text.length < MIN_SENSITIVE_VALUE_LENGTH) return false;
  // A code point is one or two code units: twice the minimum is always enough.
  if (text.length >= 2 * MIN_SENSITIVE_VALUE_LENGTH) return true;
  let n = 0;
  for (const _ of text) if (++n >= MIN_SENSITIVE_VALUE_LENGTH) return true;
  return false;
}

/**
 * The spellings a value can take in text: as is, JSON-escaped (inside quotes), with Go's JSON
 * escapes of `<`, `>`, `&` (OpenTofu's JSON output), with HCL's template escapes (`$${`), and
 * each specific line of a multi-line value; and each of those escaped once more (JSON and Go):
 * a JSON log line (`tofu plan -json`) carries in its `@message` or a diagnostic text that
 * already quoted the value, so a value with a quote or a backslash is escaped twice there.
 */
export function spellingsOf(value) {
  if (typeof value !== "string" || value.length === 0) return [];
  const base = new Set([value]);
  const json = jsonEscape(value);
  base.add(json);
  base.add(goEscape(json));
  if (value.includes("${") || value.includes("%{"))
    base.add(value.replace(/\$\{/g, () => "$${").replace(/%\{/g, () => "%%{"));
  if (value.includes("\n")) {
    for (const line of value.split("\n")) {
      const l = line.endsWith("\r") ? line.slice(0, -1) : line;
      if (isSpecific(l)) base.add(l);
    }
  }
  const out = new Set(base);
  for (const spelling of base) {
    const twice = jsonEscape(spelling);
    out.add(twice);
    out.add(goEscape(twice));
  }
  return [...out];
}

/** A string's JSON escape, without the quotes. */
function jsonEscape(text) {
  return JSON.stringify(text).slice(1, -1);
}

/** Go's extra JSON escapes of `<`, `>`, `&` and the line separators, applied to JSON-escaped text. */
function goEscape(json) {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * Finds every occurrence of any of a set of values (all their spellings) in text: an Aho-Corasick
 * automaton over UTF-16 code units, so the cost is linear in the text whatever the number of
 * values. Nodes live in typed arrays (a plan can mark thousands of long values sensitive).
 */
export class ValueMatcher {
  constructor(values) {
    const needles = new Set();
    for (const v of values) for (const s of spellingsOf(v)) needles.add(s);
    let total = 1;
    for (const n of needles) total += n.length;
    this.size = needles.size;
    this.ch = new Uint16Array(total);
    this.firstChild = new Int32Array(total);
    this.sibling = new Int32Array(total);
    this.fail = new Int32Array(total);
    this.out = new Int32Array(total); // the longest needle ending at this node (0: none)
    this.depth = new Int32Array(total);
    this.rootNext = needles.size > 0 ? new Int32Array(65536) : null;
    this.rootChildren = [];
    let count = 1;
    for (const needle of needles) {
      let node = 0;
      for (let i = 0; i < needle.length; i++) {
        const c = needle.charCodeAt(i);
        let next = this.child(node, c);
        if (next === 0) {
          next = count++;
          this.ch[next] = c;
          this.depth[next] = this.depth[node] + 1;
          if (node === 0) {
            this.rootNext[c] = next;
            this.rootChildren.push(next);
          } else {
            this.sibling[next] = this.firstChild[node];
            this.firstChild[node] = next;
          }
        }
        node = next;
      }
      this.out[node] = this.depth[node];
    }
    // Failure links, breadth first; `out` becomes the longest needle that is a suffix of the node.
    const queue = [...this.rootChildren];
    for (let q = 0; q < queue.length; q++) {
      const u = queue[q];
      for (let v = this.firstChild[u]; v !== 0; v = this.sibling[v]) {
        const c = this.ch[v];
        let f = this.fail[u];
        let g = this.child(f, c);
        while (g === 0 && f !== 0) {
          f = this.fail[f];
          g = this.child(f, c);
        }
        this.fail[v] = g;
        if (this.out[v] === 0) this.out[v] = this.out[g];
        queue.push(v);
      }
    }
  }

  /** Whether there is nothing to find. */
  get empty() {
    return this.size === 0;
  }

  child(node, c) {
    if (node === 0) return this.rootNext === null ? 0 : this.rootNext[c];
    for (let v = this.firstChild[node]; v !== 0; v = this.sibling[v]) if (this.ch[v] === c) return v;
    return 0;
  }

  /** The automaton's state after `state` reads code unit `c`. */
  step(state, c) {
    for (;;) {
      const g = this.child(state, c);
      if (g !== 0 || state === 0) return g;
      state = this.fail[state];
    }
  }

  /** Whether `text` contains any of the values (in any spelling). */
  contains(text) {
    if (this.size === 0) return false;
    const rootNext = this.rootNext;
    const out = this.out;
    let state = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      // At the root (most of any text) the next state is one table read.
      state = state === 0 ? rootNext[c] : this.step(state, c);
      if (state !== 0 && out[state] !== 0) return true;
    }
    return false;
  }

  /** `text` with every occurrence replaced; overlapping or adjacent occurrences become one marker. */
  redact(text) {
    if (this.size === 0) return text;
    const stream = new StreamRedactor(this);
    return stream.push(text) + stream.flush();
  }
}

/**
 * Redacts a stream of text chunk by chunk: the output of any chunking is exactly the redaction of
 * the whole. A value can be split across chunks anywhere, so the tail that could still be the
 * start of a value (the longest suffix that is a prefix of one, which the automaton's state
 * knows) is held back until the next chunk or the end.
 */
export class StreamRedactor {
  constructor(matcherOrValues) {
    this.matcher = matcherOrValues instanceof ValueMatcher ? matcherOrValues : new ValueMatcher(matcherOrValues);
    this.state = 0;
    this.position = 0; // code units read
    this.emitted = 0; // code units written out (as text or as part of a marker)
    this.held = ""; // the raw text from `emitted` to `position`
    this.covered = []; // merged [start, end) ranges of occurrences not yet written out, in order
    this.inMarker = false; // the last unit written out was covered
  }

  /** Redacted text that is safe to release now. */
  push(chunk) {
    const m = this.matcher;
    if (m.size === 0) return chunk;
    let state = this.state;
    const base = this.position;
    const rootNext = m.rootNext;
    const out = m.out;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      state = state === 0 ? rootNext[c] : m.step(state, c);
      if (state === 0) continue;
      const length = out[state];
      if (length !== 0) this.cover(base + i + 1 - length, base + i + 1);
    }
    this.state = state;
    this.position += chunk.length;
    this.held += chunk;
    return this.emit(this.position - m.depth[state]);
  }

  /** Whatever is held back, redacted; the stream then starts afresh. */
  flush() {
    const text = this.emit(this.position);
    this.state = 0;
    this.inMarker = false;
    return text;
  }

  cover(start, end) {
    const ranges = this.covered;
    while (ranges.length > 0 && start <= ranges[ranges.length - 1][1]) {
      const last = ranges.pop();
      if (last[0] < start) start = last[0];
      if (last[1] > end) end = last[1];
    }
    ranges.push([start, end]);
  }

  emit(cut) {
    if (cut <= this.emitted) return "";
    const base = this.emitted;
    let out = "";
    let at = base;
    const ranges = this.covered;
    while (ranges.length > 0 && ranges[0][0] < cut) {
      const [start, end] = ranges[0];
      if (start > at) {
        out += this.held.slice(at - base, start - base);
        at = start;
        this.inMarker = false;
      }
      const stop = end < cut ? end : cut;
      if (stop > at) {
        if (!this.inMarker) out += REDACTED;
        this.inMarker = true;
        at = stop;
      }
      if (end <= cut) ranges.shift();
      else break;
    }
    if (at < cut) {
      out += this.held.slice(at - base, cut - base);
      this.inMarker = false;
    }
    this.held = this.held.slice(cut - base);
    this.emitted = cut;
    return out;
  }
}
