// The redacted plan (`json-output-redacted`, issue 29): the plan JSON in the shape the OpenTofu and
// Terraform CLIs render themselves (`jsonformat.Plan`: plan_format_version, resource_changes,
// resource_drift, output_changes, relevant_attributes, provider_format_version, provider_schemas),
// built from `tofu show -json` and `tofu providers schema -json` with every sensitive value
// replaced. Plain JavaScript importing only the redaction modules (sensitive-values.mjs,
// plain-json.mjs), like the plan-diff builder: the plan sandbox's launcher loads it from beside
// plan-diff.mjs.
//
// Redaction, so that the CLI renders exactly what `tofu plan` renders locally:
// - By mask: a value at a path the masks mark sensitive keeps its shape (null stays null, so a
//   create stays a create), but every string, number and boolean in it becomes a placeholder: one
//   per distinct value of the change (`(sensitive value)`, `(sensitive value 2)`, …), so equal
//   values stay equal and different ones different, wherever they stand. The renderer then
//   computes the same actions and aligns lists as tofu does (its list diff compares every element
//   of before with every element of after), and prints `(sensitive value)` from the masks, which
//   are kept as they are. A side the masks leave public stays as tofu prints it.
// - By value: then every string (object keys included) anywhere in the changes that contains a
//   value of the sensitive set (the snapshot's secrets the caller passes, and every value the plan
//   itself marks sensitive) has it replaced by `[sensitive value]`, as in the logs; a number or
//   boolean that is one becomes that string.
// Nothing else of the plan JSON is copied: no prior_state, variables, planned_values or configuration.
import { hasOwn, isPlainObject, own, put } from "../redaction/plain-json.mjs";
import { REDACTED, sensitiveValuesOfPlan, ValueMatcher } from "../redaction/sensitive-values.mjs";

/** What the first distinct sensitive primitive of a change becomes; the n-th `(sensitive value n)`. */
export const SENSITIVE_VALUE = "(sensitive value)";

/** Thrown for an input that is not a plan JSON or a provider schema document. */
export class RedactedPlanInputError extends Error {}

function deepEqual(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => hasOwn.call(b, k) && deepEqual(a[k], b[k]));
}

/** The placeholders of one change: one per distinct primitive (a string and a number apart). */
class Placeholders {
  #byValue = new Map();

  of(v) {
    const key = `${typeof v}:${String(v)}`;
    let placeholder = this.#byValue.get(key);
    if (placeholder === undefined) {
      const n = this.#byValue.size + 1;
      placeholder = n === 1 ? SENSITIVE_VALUE : `(sensitive value ${n})`;
      this.#byValue.set(key, placeholder);
    }
    return placeholder;
  }
}

/** One side's value with every primitive replaced by its placeholder (null and absent stay so). */
function mask(v, placeholders) {
  if (v === null || v === undefined) return v;
  if (Array.isArray(v)) return v.map((x) => mask(x, placeholders));
  if (typeof v === "object") {
    const out = {};
    for (const k of Object.keys(v)) put(out, k, mask(v[k], placeholders));
    return out;
  }
  return placeholders.of(v);
}

function childMask(m, key) {
  if (m === true) return true;
  if (typeof key === "number") return Array.isArray(m) ? m[key] : undefined;
  return own(m, key);
}

/** One side's value with every subtree its mask marks sensitive replaced by placeholders. */
function walkOne(v, m, placeholders) {
  if (m === true) return mask(v, placeholders);
  if (Array.isArray(v)) return v.map((x, i) => walkOne(x, childMask(m, i), placeholders));
  if (isPlainObject(v)) {
    const out = {};
    for (const k of Object.keys(v)) put(out, k, walkOne(v[k], childMask(m, k), placeholders));
    return out;
  }
  return v;
}

/**
 * Walks both sides with both masks. A position sensitive on both sides is replaced on both. One
 * sensitive on one side only is replaced on that side; the other side is public by the plan's own
 * masks and stays (tofu prints it locally too), except where it is equal to the sensitive side:
 * then both stay, and the value redaction replaces both.
 */
function walk(before, after, bs, as, placeholders) {
  if (bs === true && as === true) return [mask(before, placeholders), mask(after, placeholders)];
  if (bs === true || as === true) {
    if (deepEqual(before, after)) return [before, after];
    return bs === true
      ? [mask(before, placeholders), walkOne(after, as, placeholders)]
      : [walkOne(before, bs, placeholders), mask(after, placeholders)];
  }
  if (Array.isArray(before) || Array.isArray(after)) {
    const b = Array.isArray(before) ? [...before] : before;
    const a = Array.isArray(after) ? [...after] : after;
    for (let i = 0; i < Math.max(Array.isArray(b) ? b.length : 0, Array.isArray(a) ? a.length : 0); i++) {
      const [x, y] = walk(
        Array.isArray(b) ? b[i] : undefined,
        Array.isArray(a) ? a[i] : undefined,
        childMask(bs, i),
        childMask(as, i),
        placeholders,
      );
      if (Array.isArray(b) && i < b.length) b[i] = x === undefined ? null : x;
      if (Array.isArray(a) && i < a.length) a[i] = y === undefined ? null : y;
    }
    return [b, a];
  }
  if (isPlainObject(before) || isPlainObject(after)) {
    const b = isPlainObject(before) ? { ...before } : before;
    const a = isPlainObject(after) ? { ...after } : after;
    const keys = new Set([...(isPlainObject(b) ? Object.keys(b) : []), ...(isPlainObject(a) ? Object.keys(a) : [])]);
    for (const k of keys) {
      const [x, y] = walk(own(b, k), own(a, k), childMask(bs, k), childMask(as, k), placeholders);
      if (isPlainObject(b) && hasOwn.call(b, k)) put(b, k, x);
      if (isPlainObject(a) && hasOwn.call(a, k)) put(a, k, y);
    }
    return [b, a];
  }
  return [before, after];
}

/** Every string, key, number and boolean holding a value of the set, redacted (a copy). */
export function redactByValue(v, matcher) {
  return byValue(v, matcher);
}

function byValue(v, matcher) {
  if (matcher.empty) return v;
  if (typeof v === "string") return matcher.contains(v) ? matcher.redact(v) : v;
  if (typeof v === "number" || typeof v === "boolean") return matcher.contains(String(v)) ? REDACTED : v;
  if (Array.isArray(v)) return v.map((x) => byValue(x, matcher));
  if (isPlainObject(v)) {
    const out = {};
    for (const k of Object.keys(v)) put(out, matcher.contains(k) ? matcher.redact(k) : k, byValue(v[k], matcher));
    return out;
  }
  return v;
}

/** One change (resource change or output change) with its before and after redacted by its masks. */
function redactChange(change) {
  if (!isPlainObject(change)) return change;
  const [before, after] = walk(
    own(change, "before"),
    own(change, "after"),
    own(change, "before_sensitive"),
    own(change, "after_sensitive"),
    new Placeholders(),
  );
  const out = { ...change };
  if (hasOwn.call(change, "before")) out.before = before === undefined ? null : before;
  if (hasOwn.call(change, "after")) out.after = after === undefined ? null : after;
  return out;
}

function redactResourceChanges(list) {
  if (list === undefined || list === null) return undefined;
  if (!Array.isArray(list)) throw new RedactedPlanInputError("resource changes are not a list");
  return list.map((entry) => (isPlainObject(entry) ? { ...entry, change: redactChange(entry.change) } : entry));
}

/** The provider addresses the changes name (the CLI needs each one's schema, and no other). */
function providersOf(...lists) {
  const names = new Set();
  for (const list of lists)
    for (const entry of list ?? []) if (typeof own(entry, "provider_name") === "string") names.add(entry.provider_name);
  return names;
}

/**
 * The redacted plan of `plan` (parsed `tofu show -json`) with `schemas` (parsed `tofu providers
 * schema -json`) as a JSON string. `knownSecrets`: values secret whatever the masks say (the
 * snapshot's). Throws RedactedPlanInputError when the inputs are not those documents.
 */
export function buildRedactedPlan(plan, schemas, { knownSecrets = [] } = {}) {
  if (!isPlainObject(plan) || typeof own(plan, "format_version") !== "string")
    throw new RedactedPlanInputError("the plan JSON has no format_version");
  if (!isPlainObject(schemas) || typeof own(schemas, "format_version") !== "string")
    throw new RedactedPlanInputError("the provider schemas have no format_version");
  const matcher = new ValueMatcher([...knownSecrets, ...sensitiveValuesOfPlan(plan)]);
  const resourceChanges = redactResourceChanges(own(plan, "resource_changes"));
  const resourceDrift = redactResourceChanges(own(plan, "resource_drift"));
  let outputChanges;
  const outputs = own(plan, "output_changes");
  if (isPlainObject(outputs)) {
    outputChanges = {};
    for (const name of Object.keys(outputs)) put(outputChanges, name, redactChange(outputs[name]));
  }
  const changes = byValue(
    {
      plan_format_version: plan.format_version,
      ...(outputChanges ? { output_changes: outputChanges } : {}),
      ...(resourceChanges ? { resource_changes: resourceChanges } : {}),
      ...(resourceDrift ? { resource_drift: resourceDrift } : {}),
      ...(Array.isArray(own(plan, "relevant_attributes")) ? { relevant_attributes: plan.relevant_attributes } : {}),
    },
    matcher,
  );
  const wanted = providersOf(resourceChanges, resourceDrift);
  const providerSchemas = {};
  const all = own(schemas, "provider_schemas");
  if (isPlainObject(all))
    for (const name of Object.keys(all)) if (wanted.has(name)) put(providerSchemas, name, all[name]);
  return JSON.stringify({
    ...changes,
    provider_format_version: schemas.format_version,
    provider_schemas: providerSchemas,
  });
}
