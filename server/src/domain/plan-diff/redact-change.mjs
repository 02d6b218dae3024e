// Redaction by mask, for the plan-diff builder (plan-diff.mjs): one change's `before` and `after`
// walked with their sensitivity and unknown masks, markers in place of what they hide. Plain
// JavaScript that imports only redaction/plain-json.mjs, like the builder (the plan sandbox mounts
// both beside it).
// Fail closed: a mask that cannot be resolved against its value throws Unresolvable, and the
// builder withholds the whole resource.

import { hasOwn, isPlainObject, put } from "../redaction/plain-json.mjs";

/** The key every marker object carries; real object keys starting with `$` are escaped with one more `$`. */
export const MARKER_KEY = "$stackship";

const SENSITIVE = Object.freeze({ [MARKER_KEY]: "sensitive" });
const UNKNOWN = Object.freeze({ [MARKER_KEY]: "unknown" });
const UNKNOWN_SENSITIVE = Object.freeze({ [MARKER_KEY]: "unknown", sensitive: true });
const IMPRECISE = Object.freeze({ [MARKER_KEY]: "imprecise_number" });

/** Thrown inside one resource's walk and caught per resource; not an Error, so no stack trace is captured. */
export class Unresolvable {
  constructor(reason) {
    this.reason = reason;
  }
}

/**
 * A member of a parsed JSON object or array, never one inherited from Object.prototype
 * (`constructor`, `toString`…); plain-json.mjs's `own` without its object check, on the walk's hot path.
 */
function member(o, key) {
  if (o === undefined) return undefined;
  const m = o[key];
  // Only objects and functions are ever inherited from Object.prototype.
  return m === undefined || m === true || m === false || hasOwn.call(o, key) ? m : undefined;
}

function isEmpty(o) {
  for (const _ in o) return false;
  return true;
}

/** The object with every key that starts with `$` given one more, so a marker is never ambiguous. */
function escapeKeys(v) {
  const escaped = {};
  for (const k in v) put(escaped, k.charCodeAt(0) === 36 /* $ */ ? `$${k}` : k, v[k]);
  return escaped;
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
  return isPlainObject(o) ? member(o, key) : undefined;
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
  if (
    type === "object" &&
    (s === undefined || s === false) &&
    (o === undefined || o === false) &&
    (!hasUnknown || u === undefined || u === false)
  )
    return plain(v, known);
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
    if (s !== undefined && s !== false && !(Array.isArray(s) && s.length === v.length))
      throw new Unresolvable("array mask shape");
    if (hasUnknown && u !== undefined && u !== false && !(Array.isArray(u) && u.length === v.length))
      throw new Unresolvable("array unknown shape");
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
    const r = walk(child, member(so, k), member(oo, k), member(uo, k), hasUnknown, known);
    if (r !== child) v[k] = r; // an own data property, also when named __proto__
  }
  if (uo) {
    // An unknown attribute or map entry is left out of `after`; it comes back as a marker.
    for (const k in uo) {
      if (uo[k] === true && !hasOwn.call(v, k)) {
        if (k.charCodeAt(0) === 36) dollar = true;
        if (!known.empty && known.contains(k)) throw new Unresolvable("a known secret in an object key");
        put(v, k, member(so, k) === true || member(oo, k) === true ? UNKNOWN_SENSITIVE : UNKNOWN);
      }
    }
  }
  return dollar ? escapeKeys(v) : v;
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
  return dollar ? escapeKeys(v) : v;
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
export function redactChange(change, before, after, known, r) {
  const bs = member(change, "before_sensitive");
  const as = member(change, "after_sensitive");
  const au = member(change, "after_unknown");
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
    for (const path of paths)
      for (const step of path)
        if (typeof step === "string" && known.contains(step)) throw new Unresolvable("a known secret in a path");
  }
  const beforeOut = walk(before, bs, as, undefined, false, known);
  const afterOut = walk(after, as, bs, au, true, known);
  r.before = beforeOut;
  r.after = afterOut;
  if (paths !== undefined) r.replace_paths = paths;
}
