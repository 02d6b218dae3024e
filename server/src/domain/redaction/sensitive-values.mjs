// Redaction by value: which values of a phase are sensitive, and every occurrence of one of them
// replaced in text. Plain JavaScript with no imports at all, because the plan-diff builder
// (../plan-diff/plan-diff.mjs) imports it and the plan sandbox runs that builder without the
// repository or node_modules (types in sensitive-values.d.mts).
//
// OpenTofu's sensitivity masks follow a value along the expressions that produced it, and lose it
// wherever a provider copies a value into another attribute (terraform_data's `output`, a
// computed id, a connection string) or a configuration copies it with nonsensitive(). So the
// masks are not enough: every value OpenTofu marks sensitive anywhere is also redacted wherever
// else it shows up.
//
// The rule for values found by path (a sensitive mask in the plan, a sensitive path of the prior
// state, a sensitive output, a variable declared sensitive): a string, or the decimal form of a
// number, is redacted by value when it is at least MIN_SENSITIVE_VALUE_LENGTH (6) characters
// (Unicode code points) long. Shorter values (and booleans, whose forms are "true" and "false")
// are not specific enough: replacing every "u" or "true" would shred the text and tell nothing,
// so they stay redacted only where the masks put them. Object keys inside a sensitive value are
// not collected (they are mostly attribute names). A multi-line value also contributes each of
// its lines of that length (OpenTofu prints such strings as heredocs, one line at a time).
// Values a person declared secret (sensitive workspace variables) are passed in by the caller and
// are redacted at any length.

/** What a sensitive value becomes in text (logs, findings, error messages). */
export const REDACTED = "[sensitive value]";
/** The shortest value (in code points) that is redacted by value when it was found by path. */
export const MIN_SENSITIVE_VALUE_LENGTH = 6;

// eslint-disable-next-line @typescript-eslint/unbound-method -- always called as hasOwn.call(object, key)
const hasOwn = Object.prototype.hasOwnProperty;

function isPlainObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function own(o, key) {
  return isPlainObject(o) && hasOwn.call(o, key) ? o[key] : undefined;
}

/** Whether a text is long enough to be redacted by value (at least MIN_SENSITIVE_VALUE_LENGTH code points). */
export function isSpecific(text) {
  if (typeof text !== "string" || text.length < MIN_SENSITIVE_VALUE_LENGTH) return false;
  // A code point is one or two code units: twice the minimum is always enough.
  if (text.length >= 2 * MIN_SENSITIVE_VALUE_LENGTH) return true;
  let n = 0;
  for (const _ of text) if (++n >= MIN_SENSITIVE_VALUE_LENGTH) return true;
  return false;
}

/** The text of a leaf value: strings as they are, numbers and booleans in their JSON form. */
function leafText(v) {
  if (typeof v === "string") return v;
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : undefined;
  if (typeof v === "boolean") return String(v);
  return undefined;
}

/** Collects the specific leaf values under sensitive paths. */
class Collector {
  constructor() {
    this.values = new Set();
  }

  leaf(v) {
    const text = leafText(v);
    if (text !== undefined && isSpecific(text)) this.values.add(text);
  }

  /** Every leaf value below `v` (not object keys). */
  all(v) {
    const stack = [v];
    while (stack.length > 0) {
      const x = stack.pop();
      if (x === null || x === undefined) continue;
      if (typeof x !== "object") this.leaf(x);
      else if (Array.isArray(x)) for (let i = 0; i < x.length; i++) stack.push(x[i]);
      else for (const k in x) if (hasOwn.call(x, k)) stack.push(x[k]);
    }
  }

  /**
   * The leaves of `v` that its sensitivity mask `m` marks (true: the whole value). A mask that
   * does not fit its value fails closed: everything below that point is collected.
   */
  masked(v, m, depth = 0) {
    if (m === undefined || m === null || m === false || v === undefined || v === null) return;
    if (m === true || depth > 256) return this.all(v);
    if (Array.isArray(m)) {
      if (!Array.isArray(v) || m.length !== v.length) return this.all(v);
      for (let i = 0; i < m.length; i++) this.masked(v[i], m[i], depth + 1);
      return;
    }
    if (isPlainObject(m)) {
      if (!isPlainObject(v)) return this.all(v);
      for (const k in m) if (hasOwn.call(m, k)) this.masked(own(v, k), m[k], depth + 1);
      return;
    }
    this.all(v);
  }

  /** A change object's two sides (resource changes, drift, output changes). */
  change(change) {
    if (!isPlainObject(change)) return;
    this.masked(own(change, "before"), own(change, "before_sensitive"));
    this.masked(own(change, "after"), own(change, "after_sensitive"));
  }

  /** A `values` representation (prior_state.values, planned_values): sensitive outputs, resources by their masks, child modules. */
  stateValues(values) {
    if (!isPlainObject(values)) return;
    const outputs = own(values, "outputs");
    if (isPlainObject(outputs)) for (const name in outputs) if (hasOwn.call(outputs, name) && own(outputs[name], "sensitive") === true) this.all(own(outputs[name], "value"));
    const modules = [own(values, "root_module")];
    while (modules.length > 0) {
      const module = modules.pop();
      if (!isPlainObject(module)) continue;
      const resources = own(module, "resources");
      if (Array.isArray(resources)) for (const r of resources) if (isPlainObject(r)) this.masked(own(r, "values"), own(r, "sensitive_values"));
      const children = own(module, "child_modules");
      if (Array.isArray(children)) modules.push(...children);
    }
  }

  /** Defaults of variables declared sensitive, in a configuration module and the modules it calls. */
  configurationDefaults(module, depth = 0) {
    if (!isPlainObject(module) || depth > 64) return;
    const variables = own(module, "variables");
    if (isPlainObject(variables))
      for (const name in variables) if (hasOwn.call(variables, name) && own(variables[name], "sensitive") === true) this.all(own(variables[name], "default"));
    const calls = own(module, "module_calls");
    if (isPlainObject(calls)) for (const name in calls) if (hasOwn.call(calls, name)) this.configurationDefaults(own(calls[name], "module"), depth + 1);
  }
}

/**
 * Every specific value the plan JSON (`tofu show -json`) marks sensitive anywhere: the before and
 * after masks of every resource change, drift entry and deferred change, sensitive output changes,
 * the prior state's and planned values' masks and sensitive outputs, and the values (and
 * defaults) of variables the configuration declares sensitive. Anything that is not plan JSON
 * gives what can be found, never an error.
 */
export function sensitiveValuesOfPlan(plan) {
  const c = new Collector();
  if (!isPlainObject(plan)) return [];
  for (const list of [own(plan, "resource_changes"), own(plan, "resource_drift")]) {
    if (Array.isArray(list)) for (const entry of list) c.change(own(entry, "change"));
  }
  const deferred = own(plan, "deferred_changes");
  if (Array.isArray(deferred)) for (const d of deferred) c.change(own(own(d, "resource_change"), "change"));
  const outputChanges = own(plan, "output_changes");
  if (isPlainObject(outputChanges)) for (const name in outputChanges) if (hasOwn.call(outputChanges, name)) c.change(outputChanges[name]);
  c.stateValues(own(own(plan, "prior_state"), "values"));
  c.stateValues(own(plan, "planned_values"));
  const root = own(own(plan, "configuration"), "root_module");
  const declared = own(root, "variables");
  const variables = own(plan, "variables");
  if (isPlainObject(declared) && isPlainObject(variables)) {
    for (const name in declared) if (hasOwn.call(declared, name) && own(declared[name], "sensitive") === true) c.all(own(own(variables, name), "value"));
  }
  c.configurationDefaults(root);
  return [...c.values];
}

/** An attribute of dynamic type is stored as `{"value": …, "type": …}`; a path goes through to the value. */
function isDynamicWrapper(node) {
  if (!isPlainObject(node) || !hasOwn.call(node, "value") || !hasOwn.call(node, "type")) return false;
  let n = 0;
  for (const _ in node) n++;
  return n === 2;
}

/** One step of a state `sensitive_attributes` path from `node`; undefined when it does not resolve. */
function stepInto(node, step) {
  if (!isPlainObject(step)) return undefined;
  let key;
  if (step.type === "get_attr" && typeof step.value === "string") key = step.value;
  else if (step.type === "index" && isPlainObject(step.value) && (typeof step.value.value === "string" || typeof step.value.value === "number")) key = step.value.value;
  else return undefined;
  for (let unwrapped = 0; unwrapped < 2; unwrapped++) {
    if (typeof key === "number" && Array.isArray(node)) return Number.isInteger(key) && key >= 0 && key < node.length ? { node: node[key] } : { node: null };
    if (typeof key === "string" && isPlainObject(node) && hasOwn.call(node, key)) return { node: node[key] };
    if (!isDynamicWrapper(node)) break;
    node = node.value;
  }
  // A missing attribute or element holds nothing; any other mismatch does not resolve.
  if (isPlainObject(node) && typeof key === "string" && !isDynamicWrapper(node)) return { node: null };
  return undefined;
}

/**
 * Every specific value at a sensitive path of a state file (format version 4): the paths of each
 * instance's `sensitive_attributes`, and sensitive outputs. A path that does not resolve against
 * its attributes fails closed: everything below the last step that did is collected.
 */
export function sensitiveValuesOfState(state) {
  const c = new Collector();
  if (!isPlainObject(state)) return [];
  const outputs = own(state, "outputs");
  if (isPlainObject(outputs)) for (const name in outputs) if (hasOwn.call(outputs, name) && own(outputs[name], "sensitive") === true) c.all(own(outputs[name], "value"));
  const resources = own(state, "resources");
  if (!Array.isArray(resources)) return [...c.values];
  for (const resource of resources) {
    const instances = own(resource, "instances");
    if (!Array.isArray(instances)) continue;
    for (const instance of instances) {
      const attributes = own(instance, "attributes");
      const paths = own(instance, "sensitive_attributes");
      if (paths === undefined || paths === null) continue;
      if (!Array.isArray(paths)) {
        c.all(attributes);
        continue;
      }
      for (const path of paths) {
        let node = attributes;
        if (Array.isArray(path)) {
          for (const step of path) {
            const next = stepInto(node, step);
            if (next === undefined) break;
            node = next.node;
          }
        }
        c.all(node);
      }
    }
  }
  return [...c.values];
}

/**
 * The canonical decimal form OpenTofu prints for a number literal (`00123456789` → `123456789`,
 * `1.50` → `1.5`, `1e3` → `1000`, `-0012` → `-12`), or undefined when `text` is not one.
 */
export function canonicalNumber(text) {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,4}))?$/.exec(text);
  if (m === null || (m[2] === "" && (m[3] === undefined || m[3] === ""))) return undefined;
  let digits = m[2] + (m[3] ?? "");
  let point = m[2].length + (m[4] === undefined ? 0 : Number(m[4]));
  // Digits with the decimal point `point` places from their start; then leading and trailing zeros go.
  if (point < 0) {
    digits = "0".repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits += "0".repeat(point - digits.length);
  let integer = digits.slice(0, point).replace(/^0+/, "");
  const fraction = digits.slice(point).replace(/0+$/, "");
  if (integer === "") integer = "0";
  const sign = m[1] === "-" && (integer !== "0" || fraction !== "") ? "-" : "";
  return `${sign}${integer}${fraction === "" ? "" : `.${fraction}`}`;
}

/** The string literals (decoded) and number literals of an HCL or JSON collection's text. */
function literalsOf(text) {
  const out = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let value = "";
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\" && j + 1 < text.length) {
          const e = text[++j];
          if (e === "n") value += "\n";
          else if (e === "r") value += "\r";
          else if (e === "t") value += "\t";
          else if ((e === "u" || e === "U") && /^[0-9a-fA-F]+$/.test(text.slice(j + 1, j + (e === "u" ? 5 : 9)))) {
            const width = e === "u" ? 4 : 8;
            const code = parseInt(text.slice(j + 1, j + 1 + width), 16);
            value += code <= 0x10ffff ? String.fromCodePoint(code) : "";
            j += width;
          } else value += e;
        } else value += text[j];
      }
      out.push(value.replace(/\$\$\{/g, "${").replace(/%%\{/g, "%{"));
      i = j;
    } else if (/[-+.0-9]/.test(c) && (i === 0 || !/[\w.]/.test(text[i - 1]))) {
      const m = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(text.slice(i));
      if (m !== null) {
        out.push(m[0]);
        i += m[0].length - 1;
      }
    }
  }
  return out;
}

/**
 * The forms a secret value (a sensitive variable's, a run token) takes in OpenTofu's output
 * besides itself: an HCL or JSON collection (`["one1one","two2two"]`, `{a = "…"}`) prints element by
 * element, so each string and number element is a form of its own; a number prints in canonical
 * form (`00123456789` as `123456789`), so that is one too. Derived forms follow the
 * minimum-length rule (at least MIN_SENSITIVE_VALUE_LENGTH code points); the value itself is
 * redacted at any length.
 */
export function formsOfSecret(value) {
  if (typeof value !== "string" || value.length === 0) return [];
  const out = new Set([value]);
  const derived = [];
  const trimmed = value.trim();
  derived.push(trimmed);
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) derived.push(...literalsOf(trimmed));
  for (const form of derived) {
    if (isSpecific(form)) out.add(form);
    const number = canonicalNumber(form);
    if (number !== undefined && isSpecific(number)) out.add(number);
  }
  return [...out];
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
  if (value.includes("${") || value.includes("%{")) base.add(value.replace(/\$\{/g, () => "$${").replace(/%\{/g, () => "%%{"));
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
