/**
 * Reading stackship.plan-diff/v1 values: markers (sensitive, unknown, imprecise numbers), escaped
 * `$` keys, and the flat attribute list the Changes tab shows for one resource.
 */

/** What one leaf of a redacted value shows. */
export type Leaf =
  { kind: "absent" } | { kind: "value"; text: string } | { kind: "sensitive" } | { kind: "unknown"; sensitive: boolean } | { kind: "imprecise" } | { kind: "marker"; name: string };

/** One attribute row: its path and the two sides. */
export interface AttributeRow {
  path: string;
  steps: Array<string | number>;
  before: Leaf;
  after: Leaf;
  changed: boolean;
  forcesReplacement: boolean;
}

function isMarker(value: unknown): value is { $stackship: string; sensitive?: boolean } {
  return value !== null && typeof value === "object" && !Array.isArray(value) && typeof (value as Record<string, unknown>).$stackship === "string";
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

function flatten(value: unknown, steps: Array<string | number>, out: Map<string, { steps: Array<string | number>; leaf: Leaf }>): void {
  if (isMarker(value)) {
    out.set(pathText(steps), { steps, leaf: markerLeaf(value) });
    return;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) out.set(pathText(steps), { steps, leaf: { kind: "value", text: "[]" } });
    value.forEach((item, index) => flatten(item, [...steps, index], out));
    return;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) out.set(pathText(steps), { steps, leaf: { kind: "value", text: "{}" } });
    for (const [key, child] of entries) flatten(child, [...steps, unescapeKey(key)], out);
    return;
  }
  out.set(pathText(steps), { steps, leaf: { kind: "value", text: value === undefined ? "null" : JSON.stringify(value) } });
}

/** `tags.Name`, `ingress[0].cidr` */
export function pathText(steps: ReadonlyArray<string | number>): string {
  let text = "";
  for (const step of steps) text += typeof step === "number" ? `[${step}]` : text === "" ? step : `.${step}`;
  return text === "" ? "(whole value)" : text;
}

function sameLeaf(a: Leaf, b: Leaf): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "value" && b.kind === "value") return a.text === b.text;
  // Two redacted or unknown sides cannot be compared: call them changed only if the markers differ.
  return JSON.stringify(a) === JSON.stringify(b);
}

function startsWith(steps: ReadonlyArray<string | number>, prefix: ReadonlyArray<string | number>): boolean {
  return prefix.length <= steps.length && prefix.every((step, index) => step === steps[index]);
}

/** The attribute rows of one resource's before/after, in path order, each marked changed or not. */
export function attributeRows(before: unknown, after: unknown, replacePaths: ReadonlyArray<ReadonlyArray<string | number>> = []): AttributeRow[] {
  const b = new Map<string, { steps: Array<string | number>; leaf: Leaf }>();
  const a = new Map<string, { steps: Array<string | number>; leaf: Leaf }>();
  if (before !== null && before !== undefined) flatten(before, [], b);
  if (after !== null && after !== undefined) flatten(after, [], a);
  const paths = [...new Set([...b.keys(), ...a.keys()])].sort();
  return paths.map((path) => {
    const left = b.get(path);
    const right = a.get(path);
    const steps = (left ?? right)!.steps;
    const beforeLeaf = left?.leaf ?? { kind: "absent" as const };
    const afterLeaf = right?.leaf ?? { kind: "absent" as const };
    return {
      path,
      steps,
      before: beforeLeaf,
      after: afterLeaf,
      changed: !sameLeaf(beforeLeaf, afterLeaf),
      forcesReplacement: replacePaths.some((prefix) =>
        startsWith(
          steps,
          prefix.map((s) => (typeof s === "string" ? unescapeKey(s) : s)),
        ),
      ),
    };
  });
}

/** A leaf as text (for screen readers and plain comparisons). */
export function leafText(leaf: Leaf): string {
  switch (leaf.kind) {
    case "absent":
      return "—";
    case "value":
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
