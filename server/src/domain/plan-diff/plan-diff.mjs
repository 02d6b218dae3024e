// The `stackship.plan-diff/v1` builder: OpenTofu plan JSON in, a redacted, bounded per-resource
// change list out. Plain JavaScript importing only the plain modules named below, because the same
// files run inside the plan sandbox (which sees no repository and no node_modules) and in the
// server (types in plan-diff.d.mts). Facts about the input: OpenTofu's internal/command/jsonplan; the contract:
// spec/schemas/stackship.plan-diff.v1.json.
//
// Fail closed everywhere: a value is shown only when the plan's own masks prove it is not
// sensitive. A mask that cannot be resolved against its value withholds the whole resource.
// The masks are not enough on their own (a provider copies a value into an attribute its masks
// do not mark): every value the plan marks sensitive anywhere, and every value the caller knows
// is secret, is also redacted by value wherever else it shows up (../redaction/sensitive-values.mjs).
// The masks are walked by ./redact-change.mjs; JSON members are read through
// ../redaction/plain-json.mjs. Those modules (and value-matcher.mjs, which sensitive-values.mjs
// imports) are all this file imports, and the plan sandbox mounts each of them
// (server/src/runner/tofu-files.ts).

import { sensitiveValuesOfPlan, ValueMatcher } from "../redaction/sensitive-values.mjs";
import { hasOwn, isPlainObject } from "../redaction/plain-json.mjs";
import { redactChange, Unresolvable } from "./redact-change.mjs";

export { MARKER_KEY } from "./redact-change.mjs";

export const PLAN_DIFF_FORMAT = "stackship.plan-diff/v1";
/** More changed resources than this: the excess is cut from the input before redaction. */
export const MAX_RESOURCES = 5000;
/** The serialized artifact (UTF-8 bytes) never exceeds this. */
export const MAX_BYTES = 4 * 1024 * 1024;

/** Input that is not an OpenTofu/Terraform plan JSON document. Its message never quotes the input. */
export class PlanDiffInputError extends Error {
  constructor(message) {
    super(message);
    this.name = "PlanDiffInputError";
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

/** The members of a plan the build reads once its changed entries and sensitive values are known. */
const READ_LATER = new Set(["format_version", "terraform_version", "timestamp", "errored"]);

/**
 * Drops every other member of a plan the caller handed over (planned_values, prior_state,
 * configuration, resource_changes with its no-op entries…): the collector then never keeps or
 * copies them while the artifact is built, which is most of a full plan.
 */
function release(plan) {
  for (const key of Object.keys(plan)) if (!READ_LATER.has(key)) delete plan[key];
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
  const given = Array.isArray(options.knownSecrets)
    ? options.knownSecrets.filter((k) => typeof k === "string" && k.length > 0)
    : [];
  const known = new ValueMatcher(
    options.planSensitiveValues === false ? given : given.concat(sensitiveValuesOfPlan(plan)),
  );
  // Values are redacted in place: a private copy unless the caller hands the plan over.
  const consume = options.consume === true;
  if (consume) release(plan);
  const major = Number(plan.format_version.split(".")[0]);
  // Format 0.x is Terraform 0.12-1.0 (masks from 0.15 on, checked per entry); 1.x is every OpenTofu.
  const supported = major === 0 || major === 1;
  // Bound 1: cut before redaction runs.
  const kept = changed.length > maxResources ? changed.slice(0, maxResources) : changed;
  const cut = changed.length - kept.length;

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
    truncation: {
      max_resources: maxResources,
      max_bytes: maxBytes,
      changed_resources: changed.length,
      cut,
      withheld: 0,
      dropped: 0,
    },
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
  const total = () =>
    headerBase +
    decimalDigits(header.truncation.withheld) +
    decimalDigits(header.truncation.dropped) +
    sum +
    Math.max(0, count - 1);
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
