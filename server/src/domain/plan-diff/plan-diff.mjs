// The `stackship.plan-diff/v1` builder: OpenTofu plan JSON in, a redacted, bounded per-resource
// change list out. Plain JavaScript with no imports at all, because the same file runs inside the
// plan sandbox (which sees no repository and no node_modules) and in the server (types in
// plan-diff.d.mts). Facts about the input: /work/shared/reference/plan-json.md; the contract:
// spec/schemas/stackship.plan-diff.v1.json.
//
// Fail closed everywhere: a value is shown only when the plan's own masks prove it is not
// sensitive. A mask that cannot be resolved against its value withholds the whole resource.
// The masks are not enough on their own (a provider copies a value into an attribute its masks
// do not mark): every value the plan marks sensitive anywhere, and every value the caller knows
// is secret, is also redacted by value wherever else it shows up (../redaction/sensitive-values.mjs,
// the only module this file imports; the plan sandbox mounts both).

import { sensitiveValuesOfPlan, ValueMatcher } from "../redaction/sensitive-values.mjs";

export const PLAN_DIFF_FORMAT = "stackship.plan-diff/v1";
/** More changed resources than this: the excess is cut from the input before redaction. */
export const MAX_RESOURCES = 5000;
/** The serialized artifact (UTF-8 bytes) never exceeds this. */
export const MAX_BYTES = 4 * 1024 * 1024;
/** The key every marker object carries; real object keys starting with `$` are escaped with one more `$`. */
export const MARKER_KEY = "$stackship";

const SENSITIVE = Object.freeze({ [MARKER_KEY]: "sensitive" });
const UNKNOWN = Object.freeze({ [MARKER_KEY]: "unknown" });
const UNKNOWN_SENSITIVE = Object.freeze({ [MARKER_KEY]: "unknown", sensitive: true });
const IMPRECISE = Object.freeze({ [MARKER_KEY]: "imprecise_number" });

/** Input that is not an OpenTofu/Terraform plan JSON document. Its message never quotes the input. */
export class PlanDiffInputError extends Error {
  constructor(message) {
    super(message);
    this.name = "PlanDiffInputError";
  }
}

/** Thrown inside one resource's walk and caught per resource; not an Error, so no stack trace is captured. */
class Unresolvable {
  constructor(reason) {
    this.reason = reason;
  }
}

const ACTIONS = new Map([
  ["create", "create"],
  ["update", "update"],
  ["delete", "delete"],
  ["forget", "forget"],
  ["delete,create", "replace"],
  ["create,delete", "replace"],
  ["forget,create", "forget_replace"],
]);
const OMITTED = new Set(["no-op", "read"]);

/** The classified action of an `actions` array; "unknown" for anything OpenTofu never emits. */
export function classifyActions(actions) {
  return ACTIONS.get(actions.join(",")) ?? "unknown";
}

/** `classifyActions` of an array of strings, without joining them: a key of ACTIONS has at most one comma. */
function classifyStrings(actions) {
  if (actions.length === 1) return ACTIONS.get(actions[0]) ?? "unknown";
  if (actions.length !== 2) return "unknown";
  const a = actions[0];
  const b = actions[1];
  if (b === "create") {
    if (a === "delete") return "replace";
    if (a === "forget") return "forget_replace";
  } else if (b === "delete" && a === "create") return "replace";
  return "unknown";
}

/** Whether an entry's actions (strings) are only no-op/read (omitted from the artifact). */
function isOmitted(actions) {
  if (actions.length === 0) return false;
  for (let i = 0; i < actions.length; i++) if (!OMITTED.has(actions[i])) return false;
  return true;
}

// eslint-disable-next-line @typescript-eslint/unbound-method -- always called as hasOwn.call(object, key)
const hasOwn = Object.prototype.hasOwnProperty;

/** A member of a parsed JSON object, never one inherited from Object.prototype (`constructor`, `toString`…). */
function own(o, key) {
  if (o === undefined) return undefined;
  const m = o[key];
  // Only objects and functions are ever inherited from Object.prototype.
  return m === undefined || m === true || m === false || hasOwn.call(o, key) ? m : undefined;
}

/** Sets a member, also when it is named `__proto__`. */
function put(o, key, value) {
  if (key === "__proto__") Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}

function isPlainObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function isEmpty(o) {
  for (const _ in o) return false;
  return true;
}

function escapeKey(key) {
  return key.charCodeAt(0) === 36 /* $ */ ? `$${key}` : key;
}

/** A mask node: true/false/undefined, an object or an array of mask nodes; anything else is malformed (B4). */
function checkMaskNode(m) {
  if (m === undefined || m === true || m === false) return;
  if (Array.isArray(m)) {
    for (let i = 0; i < m.length; i++) checkMaskNode(m[i]);
    return;
  }
  if (isPlainObject(m)) {
    for (const k in m) checkMaskNode(m[k]);
    return;
  }
  throw new Unresolvable("non-boolean mask leaf");
}

/** The other side's mask at a child position, used only to redact more (never less). */
function otherChild(o, key) {
  if (o === undefined || o === false || o === true) return undefined;
  if (typeof key === "number") return Array.isArray(o) ? o[key] : undefined;
  return isPlainObject(o) ? own(o, key) : undefined;
}

/**
 * One side's value walked with its sensitivity mask `s`, the other side's mask `o` (a path
 * sensitive on either side is redacted on both) and, for `after`, the unknown mask `u`.
 * Redacts IN PLACE (the value is a private copy or a freshly parsed plan) and returns the value
 * to put at this position; throws Unresolvable for a shape OpenTofu never produces.
 */
function walk(v, s, o, u, hasUnknown, known) {
  if (hasUnknown && u === true) {
    if (v !== undefined && v !== null) throw new Unresolvable("unknown mask on a known value");
    return s === true || o === true ? UNKNOWN_SENSITIVE : UNKNOWN;
  }
  if (s === true || o === true) return SENSITIVE;
  if (v === null || v === undefined) return null;
  const type = typeof v;
  // No mask anywhere below (the common case): the same walk without the mask bookkeeping.
  if (type === "object" && (s === undefined || s === false) && (o === undefined || o === false) && (!hasUnknown || u === undefined || u === false)) return plain(v, known);
  if (type !== "object") {
    if (s !== undefined && s !== false) throw new Unresolvable("container mask on a primitive");
    if (hasUnknown && u !== undefined && u !== false) throw new Unresolvable("container unknown mask on a primitive");
    // A value the masks missed but that is sensitive elsewhere or known secret (e.g.
    // terraform_data's `output` in `before`, which OpenTofu does not mark even when its input is).
    if (type === "string") return !known.empty && known.contains(v) ? SENSITIVE : v;
    if (type === "number") {
      if (!known.empty && known.contains(String(v))) return SENSITIVE;
      if (Number.isInteger(v) && !Number.isSafeInteger(v)) return IMPRECISE;
      return v;
    }
    if (type === "boolean" && !known.empty && known.contains(String(v))) return SENSITIVE;
    return v;
  }
  if (Array.isArray(v)) {
    if (s !== undefined && s !== false && !(Array.isArray(s) && s.length === v.length)) throw new Unresolvable("array mask shape");
    if (hasUnknown && u !== undefined && u !== false && !(Array.isArray(u) && u.length === v.length)) throw new Unresolvable("array unknown shape");
    const sa = Array.isArray(s) ? s : undefined;
    const ua = Array.isArray(u) ? u : undefined;
    const oa = Array.isArray(o) ? o : undefined;
    for (let i = 0; i < v.length; i++) {
      const child = v[i];
      const r = walk(child, sa && sa[i], oa && oa[i], ua && ua[i], hasUnknown, known);
      if (r !== child) v[i] = r;
    }
    return v;
  }
  if (s !== undefined && s !== false && !isPlainObject(s)) throw new Unresolvable("object mask shape");
  if (hasUnknown && u !== undefined && u !== false && !isPlainObject(u)) throw new Unresolvable("object unknown shape");
  // An empty mask object says nothing about any member: as if there were none.
  const so = isPlainObject(s) && !isEmpty(s) ? s : undefined;
  const uo = hasUnknown && isPlainObject(u) && !isEmpty(u) ? u : undefined;
  const oo = isPlainObject(o) && !isEmpty(o) ? o : undefined;
  if (so === undefined && oo === undefined && uo === undefined) return plain(v, known);
  let dollar = false;
  for (const k in v) {
    if (k.charCodeAt(0) === 36) dollar = true;
    if (!known.empty && known.contains(k)) throw new Unresolvable("a known secret in an object key");
    const child = v[k];
    const r = walk(child, own(so, k), own(oo, k), own(uo, k), hasUnknown, known);
    if (r !== child) v[k] = r; // an own data property, also when named __proto__
  }
  if (uo) {
    // An unknown attribute or map entry is left out of `after`; it comes back as a marker.
    for (const k in uo) {
      if (uo[k] === true && !hasOwn.call(v, k)) {
        if (k.charCodeAt(0) === 36) dollar = true;
        if (!known.empty && known.contains(k)) throw new Unresolvable("a known secret in an object key");
        put(v, k, own(so, k) === true || own(oo, k) === true ? UNKNOWN_SENSITIVE : UNKNOWN);
      }
    }
  }
  if (!dollar) return v;
  // Real keys starting with `$` get one more, so a marker is never ambiguous.
  const escaped = {};
  for (const k in v) put(escaped, escapeKey(k), v[k]);
  return escaped;
}

/**
 * `walk` of a container with no mask on it or anywhere below it (every mask argument undefined
 * or false): the same result, with the primitive children handled inline.
 */
function plain(v, known) {
  const check = !known.empty;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const child = v[i];
      if (typeof child === "string") {
        if (check && known.contains(child)) v[i] = SENSITIVE;
      } else if (typeof child === "number") {
        if (check && known.contains(String(child))) v[i] = SENSITIVE;
        else if (Number.isInteger(child) && !Number.isSafeInteger(child)) v[i] = IMPRECISE;
      } else if (typeof child === "boolean") {
        if (check && known.contains(String(child))) v[i] = SENSITIVE;
      } else if (child === undefined) v[i] = null;
      else if (child !== null && typeof child === "object") {
        const r = plain(child, known);
        if (r !== child) v[i] = r;
      }
    }
    return v;
  }
  let dollar = false;
  for (const k in v) {
    if (k.charCodeAt(0) === 36) dollar = true;
    if (check && known.contains(k)) throw new Unresolvable("a known secret in an object key");
    const child = v[k];
    if (typeof child === "string") {
      if (check && known.contains(child)) v[k] = SENSITIVE;
    } else if (typeof child === "number") {
      if (check && known.contains(String(child))) v[k] = SENSITIVE;
      else if (Number.isInteger(child) && !Number.isSafeInteger(child)) v[k] = IMPRECISE;
    } else if (typeof child === "boolean") {
      if (check && known.contains(String(child))) v[k] = SENSITIVE;
    } else if (child === undefined) v[k] = null;
    else if (child !== null && typeof child === "object") {
      const r = plain(child, known);
      if (r !== child) v[k] = r; // an own data property, also when named __proto__
    }
  }
  if (!dollar) return v;
  // Real keys starting with `$` get one more, so a marker is never ambiguous.
  const escaped = {};
  for (const k in v) put(escaped, escapeKey(k), v[k]);
  return escaped;
}

/** The replace paths, each cut at the first step that lies inside a sensitive value. Null when any step is not a name or an index. */
function safeReplacePaths(paths, bs, as) {
  if (paths === undefined) return undefined;
  if (!Array.isArray(paths)) return null;
  const out = [];
  for (const path of paths) {
    if (!Array.isArray(path)) return null;
    const kept = [];
    let b = bs;
    let a = as;
    for (const step of path) {
      if (typeof step !== "string" && typeof step !== "number") return null;
      if (b === true || a === true) break;
      kept.push(step);
      b = otherChild(b, step);
      a = otherChild(a, step);
    }
    out.push(kept);
  }
  return out;
}

/**
 * Redacts one change: `before` and `after` are the values to redact in place (private copies
 * unless the caller handed the plan over); sets `r.before`, `r.after` and `r.replace_paths` (when
 * present) on the resource `r`, or throws Unresolvable before setting anything.
 */
function redactChange(change, before, after, known, r) {
  const bs = own(change, "before_sensitive");
  const as = own(change, "after_sensitive");
  const au = own(change, "after_unknown");
  checkMaskNode(bs);
  checkMaskNode(as);
  checkMaskNode(au);
  // B5: a value without its mask (Terraform <= 0.14 plans have none).
  if (before !== null && bs === undefined) throw new Unresolvable("before_sensitive missing");
  if (after !== null && after !== undefined && as === undefined) throw new Unresolvable("after_sensitive missing");
  if (after !== null && after !== undefined && au === undefined) throw new Unresolvable("after_unknown missing");
  if (after === undefined && au !== true) throw new Unresolvable("after missing but not unknown");
  const paths = safeReplacePaths(change.replace_paths, bs, as);
  if (paths === null) throw new Unresolvable("replace_paths");
  if (paths !== undefined) {
    for (const path of paths) for (const step of path) if (typeof step === "string" && known.contains(step)) throw new Unresolvable("a known secret in a path");
  }
  const beforeOut = walk(before, bs, as, undefined, false, known);
  const afterOut = walk(after, as, bs, au, true, known);
  r.before = beforeOut;
  r.after = afterOut;
  if (paths !== undefined) r.replace_paths = paths;
}

function copy(x) {
  return x === null || typeof x !== "object" ? x : structuredClone(x);
}

function stringOrNull(v) {
  return typeof v === "string" ? v : null;
}

/**
 * The fields of an entry that are never values (identity and actions), in a resource object of
 * one fixed shape. A member left undefined is absent from the serialization (JSON.stringify
 * skips it), so the key order is the artifact's whatever is filled in later: before, after and
 * replace_paths (`redactChange`) or detail_withheld and withheld_reason (`withheld`).
 */
function identity(entry, actions, action) {
  const importing = entry.change.importing;
  return {
    address: entry.address,
    provider: stringOrNull(entry.provider_name),
    mode: stringOrNull(entry.mode),
    type: stringOrNull(entry.type),
    name: stringOrNull(entry.name),
    module_address: stringOrUndefined(entry.module_address),
    deposed: stringOrUndefined(entry.deposed),
    previous_address: stringOrUndefined(entry.previous_address),
    actions,
    action,
    action_reason: stringOrUndefined(entry.action_reason),
    importing: importing !== undefined && importing !== null ? true : undefined,
    before: undefined,
    after: undefined,
    replace_paths: undefined,
    detail_withheld: undefined,
    withheld_reason: undefined,
  };
}

function stringOrUndefined(v) {
  return typeof v === "string" ? v : undefined;
}

/** Marks a fresh resource object (from `identity`) as withheld and returns it. */
function withheld(base, reason) {
  base.detail_withheld = true;
  base.withheld_reason = reason;
  return base;
}

function allStrings(list) {
  for (let i = 0; i < list.length; i++) if (typeof list[i] !== "string") return false;
  return true;
}

/** Checks that `plan` is a plan document and returns its changed entries in plan order. */
function changedEntries(plan) {
  if (!isPlainObject(plan)) throw new PlanDiffInputError("the input is not a JSON object");
  if (typeof plan.format_version !== "string" || !/^\d+\.\d+/.test(plan.format_version)) {
    throw new PlanDiffInputError("the input has no format_version: it is not plan JSON from `tofu show -json`");
  }
  const list = plan.resource_changes ?? [];
  if (!Array.isArray(list)) throw new PlanDiffInputError("resource_changes is not an array");
  const changed = [];
  for (let i = 0; i < list.length; i++) {
    const entry = list[i];
    if (!isPlainObject(entry) || typeof entry.address !== "string" || !isPlainObject(entry.change)) {
      throw new PlanDiffInputError(`resource_changes[${i}] is not a resource change`);
    }
    const actions = entry.change.actions;
    if (!Array.isArray(actions) || actions.length === 0 || !allStrings(actions)) {
      throw new PlanDiffInputError(`resource_changes[${i}].change.actions is not a list of actions`);
    }
    if (!isOmitted(actions)) changed.push(entry);
  }
  return changed;
}

function utf8Length(s) {
  const B = globalThis.Buffer;
  if (B) return B.byteLength(s, "utf8");
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * Builds the artifact from a parsed plan. Options: `runId` (string or null), `knownSecrets`
 * (values that are secret whatever the masks say, at any length), `planSensitiveValues` (false:
 * do not add the values the plan marks sensitive; tests only). Any string, number or boolean whose
 * text contains one of those values or one the plan marks sensitive is redacted; an object key or
 * replace path containing one withholds the resource. Then `maxResources`,
 * `maxBytes` (tests only). Returns `{ artifact, json, bytes }` where `json` is the exact
 * serialization (no trailing newline) and `bytes` its UTF-8 length (≤ maxBytes).
 */
export function buildPlanDiff(plan, options = {}) {
  const maxResources = options.maxResources ?? MAX_RESOURCES;
  const maxBytes = options.maxBytes ?? MAX_BYTES;
  const changed = changedEntries(plan);
  // Redacted by value: what the caller knows is secret (any length) and what the plan marks sensitive anywhere.
  const given = Array.isArray(options.knownSecrets) ? options.knownSecrets.filter((k) => typeof k === "string" && k.length > 0) : [];
  const known = new ValueMatcher(options.planSensitiveValues === false ? given : given.concat(sensitiveValuesOfPlan(plan)));
  const major = Number(plan.format_version.split(".")[0]);
  // Format 0.x is Terraform 0.12-1.0 (masks from 0.15 on, checked per entry); 1.x is every OpenTofu.
  const supported = major === 0 || major === 1;
  // Bound 1: cut before redaction runs.
  const kept = changed.length > maxResources ? changed.slice(0, maxResources) : changed;
  const cut = changed.length - kept.length;

  // Values are redacted in place: a private copy unless the caller hands the plan over.
  const consume = options.consume === true;
  // The resources are only ever serialized, so they may share the input's arrays and strings.
  const resources = new Array(kept.length);
  for (let i = 0; i < kept.length; i++) {
    const entry = kept[i];
    const change = entry.change;
    const actions = change.actions;
    const action = classifyStrings(actions);
    if (!supported) resources[i] = withheld(identity(entry, actions, action), "unsupported_format_version");
    else if (action === "unknown") resources[i] = withheld(identity(entry, actions, action), "unrecognized_actions");
    else {
      const r = identity(entry, actions, action);
      try {
        const before = hasOwn.call(change, "before") ? (consume ? change.before : copy(change.before)) : null;
        const after = hasOwn.call(change, "after") ? (consume ? change.after : copy(change.after)) : undefined;
        redactChange(change, before, after, known, r);
        resources[i] = r;
      } catch (error) {
        if (!(error instanceof Unresolvable)) throw error;
        resources[i] = withheld(identity(entry, actions, action), "unresolvable_masks");
      }
    }
  }

  const header = {
    format: PLAN_DIFF_FORMAT,
    run_id: typeof options.runId === "string" ? options.runId : null,
    opentofu_version: stringOrNull(plan.terraform_version),
    plan_format_version: plan.format_version,
    plan_timestamp: stringOrNull(plan.timestamp),
    plan_errored: plan.errored === true,
    truncated: cut > 0,
    truncation: { max_resources: maxResources, max_bytes: maxBytes, changed_resources: changed.length, cut, withheld: 0, dropped: 0 },
  };
  // The usual case: everything fits; one native serialization of the whole.
  const whole = JSON.stringify({ ...header, resources });
  const wholeBytes = utf8Length(whole);
  if (wholeBytes <= maxBytes) return result(whole, wholeBytes);

  // Serialized resource by resource, so the byte bound can act per resource.
  const texts = resources.map((r) => JSON.stringify(r));
  const sizes = texts.map(utf8Length);
  let sum = 0;
  for (const n of sizes) sum += n;
  let count = texts.length;
  const headerJson = () => JSON.stringify({ ...header, resources: [] });
  const join = () => `${headerJson().slice(0, -2)}${texts.slice(0, count).join(",")}]}`;

  // Bound 2: withhold the largest remaining detail until it fits; then drop trailing resources.
  header.truncated = true;
  // The header's size changes only with the decimal digits of its two counters (both 0 here).
  const headerBase = utf8Length(headerJson()) - 2;
  const total = () => headerBase + decimalDigits(header.truncation.withheld) + decimalDigits(header.truncation.dropped) + sum + Math.max(0, count - 1);
  const sizeLimited = new Array(texts.length).fill(false);
  const order = [];
  for (let i = 0; i < texts.length; i++) if (resources[i].detail_withheld !== true) order.push(i);
  order.sort((a, b) => sizes[b] - sizes[a] || a - b);
  // The artifact as built was over the bound, so at least one detail goes (even if the
  // `truncated: true` flag alone would shave the byte that was too many).
  let fits = false;
  for (const i of order) {
    const entry = kept[i];
    const text = JSON.stringify(withheld(identity(entry, entry.change.actions, resources[i].action), "size_limit"));
    const size = utf8Length(text);
    sum += size - sizes[i];
    texts[i] = text;
    sizes[i] = size;
    sizeLimited[i] = true;
    header.truncation.withheld++;
    if (total() <= maxBytes) {
      fits = true;
      break;
    }
  }
  while (!fits && count > 0 && total() > maxBytes) {
    count--;
    sum -= sizes[count];
    header.truncation.dropped++;
    // A resource withheld for size and then dropped counts only as dropped.
    if (sizeLimited[count]) header.truncation.withheld--;
  }
  const json = join();
  const bytes = utf8Length(json);
  if (bytes > maxBytes) throw new Error(`plan-diff: the artifact is ${bytes} bytes even with every resource dropped`);
  return result(json, bytes);
}

/** The length of a non-negative integer's decimal serialization. */
function decimalDigits(n) {
  let digits = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    digits++;
  }
  return digits;
}

function result(json, bytes) {
  let artifact;
  return {
    /** The artifact as a value, parsed from `json` on first use (the command needs only the text). */
    get artifact() {
      artifact ??= JSON.parse(json);
      return artifact;
    },
    json,
    bytes,
  };
}
