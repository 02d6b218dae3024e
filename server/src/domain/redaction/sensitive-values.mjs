// Redaction by value: which values of a phase are sensitive, and (value-matcher.mjs, re-exported
// here) every occurrence of one of them replaced in text. Plain JavaScript whose only imports are
// value-matcher.mjs and plain-json.mjs (which import nothing), because the plan-diff builder
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
import {
  isSpecific,
  MIN_SENSITIVE_VALUE_LENGTH,
  REDACTED,
  spellingsOf,
  StreamRedactor,
  ValueMatcher,
} from "./value-matcher.mjs";
import { hasOwn, isPlainObject, own } from "./plain-json.mjs";

export { isSpecific, MIN_SENSITIVE_VALUE_LENGTH, REDACTED, spellingsOf, StreamRedactor, ValueMatcher };

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
    if (isPlainObject(outputs))
      for (const name in outputs)
        if (hasOwn.call(outputs, name) && own(outputs[name], "sensitive") === true)
          this.all(own(outputs[name], "value"));
    const modules = [own(values, "root_module")];
    while (modules.length > 0) {
      const module = modules.pop();
      if (!isPlainObject(module)) continue;
      const resources = own(module, "resources");
      if (Array.isArray(resources))
        for (const r of resources) if (isPlainObject(r)) this.masked(own(r, "values"), own(r, "sensitive_values"));
      const children = own(module, "child_modules");
      if (Array.isArray(children)) modules.push(...children);
    }
  }

  /** Defaults of variables declared sensitive, in a configuration module and the modules it calls. */
  configurationDefaults(module, depth = 0) {
    if (!isPlainObject(module) || depth > 64) return;
    const variables = own(module, "variables");
    if (isPlainObject(variables))
      for (const name in variables)
        if (hasOwn.call(variables, name) && own(variables[name], "sensitive") === true)
          this.all(own(variables[name], "default"));
    const calls = own(module, "module_calls");
    if (isPlainObject(calls))
      for (const name in calls)
        if (hasOwn.call(calls, name)) this.configurationDefaults(own(calls[name], "module"), depth + 1);
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
  if (isPlainObject(outputChanges))
    for (const name in outputChanges) if (hasOwn.call(outputChanges, name)) c.change(outputChanges[name]);
  c.stateValues(own(own(plan, "prior_state"), "values"));
  c.stateValues(own(plan, "planned_values"));
  const root = own(own(plan, "configuration"), "root_module");
  const declared = own(root, "variables");
  const variables = own(plan, "variables");
  if (isPlainObject(declared) && isPlainObject(variables)) {
    for (const name in declared)
      if (hasOwn.call(declared, name) && own(declared[name], "sensitive") === true)
        c.all(own(own(variables, name), "value"));
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
  else if (
    step.type === "index" &&
    isPlainObject(step.value) &&
    (typeof step.value.value === "string" || typeof step.value.value === "number")
  )
    key = step.value.value;
  else return undefined;
  for (let unwrapped = 0; unwrapped < 2; unwrapped++) {
    if (typeof key === "number" && Array.isArray(node))
      return Number.isInteger(key) && key >= 0 && key < node.length ? { node: node[key] } : { node: null };
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
  if (isPlainObject(outputs))
    for (const name in outputs)
      if (hasOwn.call(outputs, name) && own(outputs[name], "sensitive") === true) c.all(own(outputs[name], "value"));
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
