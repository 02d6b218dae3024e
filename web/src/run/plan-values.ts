/**
 * Reading stackship.plan-diff/v1 values: markers (sensitive, unknown, imprecise numbers), escaped
 * `$` keys, and the flat attribute list the Changes tab shows for one resource.
 */

/** What one leaf of a redacted value shows; `collection` is a whole object (`{…}`) or list (`[…]`) shown once. */
export type Leaf =
  | { kind: "absent" }
  | { kind: "value"; text: string }
  | { kind: "collection"; text: "{…}" | "[…]" }
  | { kind: "sensitive" }
  | { kind: "unknown"; sensitive: boolean }
  | { kind: "imprecise" }
  | { kind: "marker"; name: string };

/**
 * How one attribute differs, as the CLI says it: `added` (+), `removed` (−), `changed` (~),
 * `unchanged` (folded away by default), or `undetermined` (both sides redacted alike: the artifact
 * cannot say whether the value changed, so it is shown, never folded).
 */
export type AttributeChange = "added" | "removed" | "changed" | "unchanged" | "undetermined";

/** One attribute row: its path and the two sides. */
export interface AttributeRow {
  path: string;
  steps: Array<string | number>;
  before: Leaf;
  after: Leaf;
  change: AttributeChange;
  /** Anything but unchanged and undetermined. */
  changed: boolean;
  forcesReplacement: boolean;
}

export const ATTRIBUTE_SYMBOLS: Record<AttributeChange, string> = {
  added: "+",
  removed: "−",
  changed: "~",
  unchanged: "",
  undetermined: "",
};

function isMarker(value: unknown): value is { $stackship: string; sensitive?: boolean } {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    typeof (value as Record<string, unknown>).$stackship === "string"
  );
}

function markerLeaf(marker: { $stackship: string; sensitive?: boolean }): Leaf {
  switch (marker.$stackship) {
    case "sensitive":
      return { kind: "sensitive" };
    case "unknown":
      return { kind: "unknown", sensitive: marker.sensitive === true };
    case "imprecise_number":
      return { kind: "imprecise" };
    default:
      return { kind: "marker", name: marker.$stackship };
  }
}

/** A real key that starts with `$` arrives with one more leading `$`. */
export function unescapeKey(key: string): string {
  return key.startsWith("$$") ? key.slice(1) : key;
}

/** `tags.Name`, `ingress[0].cidr` */
export function pathText(steps: ReadonlyArray<string | number>): string {
  let text = "";
  for (const step of steps) text += typeof step === "number" ? `[${step}]` : text === "" ? step : `.${step}`;
  return text === "" ? "(whole value)" : text;
}

/** Absent from one side (a create's before, a removed key). */
const ABSENT: unique symbol = Symbol("absent");
type Side = unknown;

function containerOf(value: Side): "object" | "list" | null {
  if (value === ABSENT || value === null || typeof value !== "object" || isMarker(value)) return null;
  return Array.isArray(value) ? "list" : "object";
}

function leafOf(value: Side): Leaf {
  if (value === ABSENT) return { kind: "absent" };
  if (isMarker(value)) return markerLeaf(value);
  const container = containerOf(value);
  if (container) return { kind: "collection", text: container === "list" ? "[…]" : "{…}" };
  return { kind: "value", text: value === undefined ? "null" : JSON.stringify(value) };
}

/** The child keys of one or two containers of the same kind, in the order rows are listed. */
function childKeys(kind: "object" | "list", ...values: Side[]): Array<string | number> {
  if (kind === "list") {
    const length = Math.max(...values.map((v) => (Array.isArray(v) ? v.length : 0)));
    return Array.from({ length }, (_, i) => i);
  }
  const keys = new Set<string>();
  for (const v of values) if (containerOf(v) === "object") for (const key of Object.keys(v as object)) keys.add(key);
  return [...keys].sort();
}

function child(value: Side, key: string | number): Side {
  if (value === ABSENT || value === null || typeof value !== "object") return ABSENT;
  const record = value as Record<string | number, unknown>;
  return Object.prototype.hasOwnProperty.call(record, key) ? record[key] : ABSENT;
}

/**
 * Walks both sides together, the way the CLI renders a plan: matching containers descend; a
 * container on one side only (the other absent) lists its children as added or removed; a
 * container facing anything else (unknown, sensitive, a scalar) is one row, `{…} → (known after
 * apply)`, never its children "removed".
 */
function walk(
  before: Side,
  after: Side,
  steps: Array<string | number>,
  out: Array<{ steps: Array<string | number>; before: Leaf; after: Leaf }>,
): void {
  const b = containerOf(before);
  const a = containerOf(after);
  const kind = b && a ? (b === a ? b : null) : b && after === ABSENT ? b : a && before === ABSENT ? a : null;
  if (kind && !(b && a && b !== a)) {
    const keys = childKeys(kind, before, after);
    if (keys.length === 0) {
      const empty = (v: Side): Leaf =>
        v === ABSENT ? { kind: "absent" } : { kind: "value", text: kind === "list" ? "[]" : "{}" };
      out.push({ steps, before: empty(before), after: empty(after) });
      return;
    }
    for (const key of keys)
      walk(
        child(before, key),
        child(after, key),
        [...steps, kind === "object" ? unescapeKey(key as string) : key],
        out,
      );
    return;
  }
  out.push({ steps, before: leafOf(before), after: leafOf(after) });
}

function classify(before: Leaf, after: Leaf): AttributeChange {
  if (before.kind === "absent" && after.kind !== "absent") return "added";
  if (after.kind === "absent" && before.kind !== "absent") return "removed";
  if (before.kind !== after.kind) return "changed";
  if (before.kind === "value" && after.kind === "value") return before.text === after.text ? "unchanged" : "changed";
  if (before.kind === "absent") return "unchanged";
  // Two redacted or unknown sides cannot be compared: changed only if the markers differ.
  return JSON.stringify(before) === JSON.stringify(after) ? "undetermined" : "changed";
}

function startsWith(steps: ReadonlyArray<string | number>, prefix: ReadonlyArray<string | number>): boolean {
  return prefix.length <= steps.length && prefix.every((step, index) => step === steps[index]);
}

/** The attribute rows of one resource's before/after, in path order, each classified. */
export function attributeRows(
  before: unknown,
  after: unknown,
  replacePaths: ReadonlyArray<ReadonlyArray<string | number>> = [],
): AttributeRow[] {
  const out: Array<{ steps: Array<string | number>; before: Leaf; after: Leaf }> = [];
  walk(
    before === null || before === undefined ? ABSENT : before,
    after === null || after === undefined ? ABSENT : after,
    [],
    out,
  );
  const prefixes = replacePaths.map((prefix) => prefix.map((s) => (typeof s === "string" ? unescapeKey(s) : s)));
  return out
    .filter((row) => !(row.before.kind === "absent" && row.after.kind === "absent"))
    .map((row) => {
      const change = classify(row.before, row.after);
      return {
        path: pathText(row.steps),
        steps: row.steps,
        before: row.before,
        after: row.after,
        change,
        changed: change !== "unchanged" && change !== "undetermined",
        forcesReplacement: prefixes.some((prefix) => startsWith(row.steps, prefix)),
      };
    });
}

/** The text a filter searches in one resource: its attribute paths and the values shown (redacted ones only as their markers say). */
export function searchableText(before: unknown, after: unknown): string {
  const parts: string[] = [];
  for (const row of attributeRows(before, after)) {
    parts.push(row.path);
    if (row.before.kind === "value") parts.push(row.before.text);
    if (row.after.kind === "value") parts.push(row.after.text);
  }
  return parts.join("\n").toLowerCase();
}

/** A leaf as text (for screen readers and plain comparisons). */
export function leafText(leaf: Leaf): string {
  switch (leaf.kind) {
    case "absent":
      return "—";
    case "value":
    case "collection":
      return leaf.text;
    case "sensitive":
      return "(sensitive value)";
    case "unknown":
      return leaf.sensitive ? "(known after apply, sensitive)" : "(known after apply)";
    case "imprecise":
      return "(number too large to show exactly)";
    case "marker":
      return `(unrecognized marker “${leaf.name}”)`;
  }
}
