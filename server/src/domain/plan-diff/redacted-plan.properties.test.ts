import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildRedactedPlan, SENSITIVE_VALUE } from "./redacted-plan.mjs";
import { REDACTED, sensitiveValuesOfPlan } from "../redaction/sensitive-values.mjs";
import { renderLocal, renderPlanUnavailable, renderRedacted } from "../../../test/support/render-plan.ts";
import { skipTest } from "../../../test/support/skips.ts";
import { plan as planJson, terraformData } from "../../../test/support/unit-plan-diff.ts";

// The redacted plan the CLI renders (json-output-redacted, issue 29): random `terraform_data`
// inputs (dynamic: any nesting) before and after, each node sensitive on either side at random,
// every primitive a distinct value. Properties: (1) no value the plan marks sensitive appears
// anywhere in the document, (2) the masks are kept, and (3) with the pinned OpenTofu's renderer,
// the document renders exactly as the unredacted plan does (what `tofu plan` prints locally) once
// the values of the sensitive set are redacted by value (`[sensitive value]`, as in the logs):
// the same lines, actions and `(sensitive value)`s.

const test = suite("redacted plan");

type Tree =
  { kind: "leaf"; change: boolean } | { kind: "arr"; items: Node[] } | { kind: "obj"; entries: Array<[string, Node]> };
type Node = { bs: boolean; as: boolean; tree: Tree };

const { node } = fc.letrec<{ node: Node; tree: Tree }>((tie) => ({
  node: fc.record({
    bs: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
    as: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
    tree: tie("tree"),
  }),
  tree: fc.oneof(
    { maxDepth: 3, depthSize: "small" },
    fc.record({ kind: fc.constant("leaf" as const), change: fc.boolean() }),
    fc.record({ kind: fc.constant("arr" as const), items: fc.array(tie("node"), { minLength: 1, maxLength: 3 }) }),
    fc.record({
      kind: fc.constant("obj" as const),
      entries: fc.uniqueArray(fc.tuple(fc.constantFrom("a", "b", "token", "name"), tie("node")), {
        minLength: 1,
        maxLength: 3,
        selector: ([k]) => k,
      }),
    }),
  ),
}));

let counter = 0;
/** A value nothing else holds: a string or a number of at least 6 characters. */
function fresh(): string | number {
  counter++;
  return counter % 2 === 0 ? `canary-${counter}-${Math.random().toString(36).slice(2, 8)}` : 7_000_000 + counter;
}

type Built = { before: unknown; after: unknown; bs: unknown; as: unknown; secrets: Array<string | number> };

/** The values and masks of one node, OpenTofu's encoding (a mask holds only what is sensitive). */
function build(n: Node, secret: boolean): Omit<Built, "secrets"> {
  const bsHere = n.bs;
  const asHere = n.as;
  const t = n.tree;
  if (t.kind === "leaf") {
    const before = fresh();
    const after = t.change ? fresh() : before;
    return { before, after, bs: bsHere ? true : undefined, as: asHere ? true : undefined };
  }
  if (t.kind === "arr") {
    const parts = t.items.map((i) => build(i, secret));
    const mask = (side: "bs" | "as") => (side === "bs" ? bsHere : asHere) || parts.map((p) => p[side] ?? false);
    return { before: parts.map((p) => p.before), after: parts.map((p) => p.after), bs: mask("bs"), as: mask("as") };
  }
  const parts = t.entries.map(([k, v]) => [k, build(v, secret)] as const);
  const mask = (side: "bs" | "as") => {
    if (side === "bs" ? bsHere : asHere) return true;
    const m: Record<string, unknown> = {};
    for (const [k, p] of parts) if (p[side] !== undefined) m[k] = p[side];
    return m;
  };
  return {
    before: Object.fromEntries(parts.map(([k, p]) => [k, p.before])),
    after: Object.fromEntries(parts.map(([k, p]) => [k, p.after])),
    bs: mask("bs"),
    as: mask("as"),
  };
}

const SCHEMAS = {
  format_version: "1.0",
  provider_schemas: {
    "terraform.io/builtin/terraform": {
      provider: { version: 0, block: { description_kind: "plain" } },
      resource_schemas: {
        terraform_data: {
          version: 0,
          block: {
            attributes: {
              id: { type: "string", description_kind: "plain", computed: true },
              input: { type: "dynamic", description_kind: "plain", optional: true },
              output: { type: "dynamic", description_kind: "plain", computed: true },
              triggers_replace: { type: "dynamic", description_kind: "plain", optional: true },
            },
            description_kind: "plain",
          },
        },
      },
    },
  },
};

function planOf(nodes: Node[]): { plan: Record<string, unknown>; secrets: Array<string | number> } {
  const secrets: Array<string | number> = [];
  const resource_changes = nodes.map((n, i) => {
    const b = build(n, false);
    const id = `id-${i}-${Math.random().toString(36).slice(2, 10)}`;
    const wrap = (mask: unknown) => (mask === undefined ? {} : { input: mask });
    return terraformData(`r${i}`, {
      actions: ["update"],
      before: { id, input: b.before, output: b.before, triggers_replace: null },
      after: { id, input: b.after, output: b.after, triggers_replace: null },
      after_unknown: {},
      before_sensitive: { ...wrap(b.bs), ...(b.bs === undefined ? {} : { output: b.bs }) },
      after_sensitive: { ...wrap(b.as), ...(b.as === undefined ? {} : { output: b.as }) },
    });
  });
  const plan = planJson(resource_changes);
  // Every value the plan marks sensitive on either side (the redaction module's own collector).
  secrets.push(...sensitiveValuesOfPlan(plan));
  return { plan, secrets };
}

const plans = fc.array(node, { minLength: 1, maxLength: 3 });

/** A plan of one change to terraform_data.x: only the address, provider and change the redaction reads. */
function planOfX(change: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const resource = { address: "terraform_data.x", provider_name: "terraform.io/builtin/terraform", change };
  return { format_version: "1.2", resource_changes: [resource], ...extra };
}

test("no value at a sensitive path appears in the redacted plan, and the masks are kept", () => {
  fc.assert(
    fc.property(plans, (nodes) => {
      const { plan, secrets } = planOf(nodes);
      const text = buildRedactedPlan(structuredClone(plan), SCHEMAS);
      for (const secret of secrets) assert.not.ok(text.includes(String(secret)), `${secret} leaked`);
      const document = JSON.parse(text) as { resource_changes: Array<{ change: Record<string, unknown> }> };
      const changes = plan.resource_changes as Array<{ change: Record<string, unknown> }>;
      document.resource_changes.forEach((r, i) => {
        assert.equal(r.change.before_sensitive, changes[i].change.before_sensitive);
        assert.equal(r.change.after_sensitive, changes[i].change.after_sensitive);
      });
    }),
    { numRuns: 300 },
  );
});

test("a changed sensitive value stays changed, an unchanged one unchanged, a null stays null", () => {
  const plan = planOfX({
    actions: ["update"],
    before: { input: { same: "secret-same-1", changed: "secret-old-22", gone: null } },
    after: { input: { same: "secret-same-1", changed: "secret-new-33", gone: null } },
    after_unknown: {},
    before_sensitive: { input: true },
    after_sensitive: { input: true },
  });
  const document = JSON.parse(buildRedactedPlan(plan, SCHEMAS)) as {
    resource_changes: Array<{ change: { before: { input: unknown }; after: { input: unknown } } }>;
  };
  const { before, after } = document.resource_changes[0].change;
  assert.equal(before.input, { same: SENSITIVE_VALUE, changed: "(sensitive value 2)", gone: null });
  assert.equal(after.input, { same: SENSITIVE_VALUE, changed: "(sensitive value 3)", gone: null });
});

test("list elements keep the equalities tofu's list diff aligns on, across indices", () => {
  // tofu aligns [a, b] -> [c, b] as `- a`, `+ c`, `b`: b must stay equal to b and to nothing else.
  const plan = planOfX({
    actions: ["update"],
    before: { input: ["secret-aaa-1", "secret-bbb-2"] },
    after: { input: ["secret-ccc-3", "secret-bbb-2"] },
    after_unknown: {},
    before_sensitive: { input: [true, true] },
    after_sensitive: { input: [true, true] },
  });
  const document = JSON.parse(buildRedactedPlan(plan, SCHEMAS)) as {
    resource_changes: Array<{ change: { before: { input: string[] }; after: { input: string[] } } }>;
  };
  const { before, after } = document.resource_changes[0].change;
  assert.equal(before.input, [SENSITIVE_VALUE, "(sensitive value 3)"]);
  assert.equal(after.input, ["(sensitive value 2)", "(sensitive value 3)"]);
});

test("a known secret outside every mask is redacted by value, in values and keys", () => {
  const plan = planOfX(
    {
      actions: ["create"],
      before: null,
      after: { input: { copied: "prefix-hunter22-snow", "hunter22-snow": 1 } },
      after_unknown: {},
      before_sensitive: false,
      after_sensitive: {},
    },
    { prior_state: { values: { outputs: { x: { value: "never-copied-999", sensitive: false } } } } },
  );
  const text = buildRedactedPlan(plan, SCHEMAS, { knownSecrets: ["hunter22-snow"] });
  assert.not.ok(text.includes("hunter22-snow"));
  assert.ok(text.includes("prefix-[sensitive value]"));
  assert.not.ok(text.includes("never-copied-999"), "nothing of the prior state is copied");
});

const unavailable = renderPlanUnavailable();
const RENDER_TITLE = "the pinned OpenTofu renders the redacted plan exactly as the unredacted one";
if (unavailable) skipTest(test, RENDER_TITLE, unavailable);
else
  test(RENDER_TITLE, () => {
    const dir = mkdtempSync(join(tmpdir(), "redacted-plan-"));
    try {
      fc.assert(
        fc.property(plans, (nodes) => {
          const { plan, secrets } = planOf(nodes);
          writeFileSync(join(dir, "plan.json"), JSON.stringify(plan));
          writeFileSync(join(dir, "schemas.json"), JSON.stringify(SCHEMAS));
          // A sensitive value tofu prints where the masks leave it public (a side whose
          // sensitivity changed, equal to the other) prints as `[sensitive value]` (the value rule).
          let local = renderLocal(join(dir, "plan.json"), join(dir, "schemas.json"));
          for (const secret of secrets)
            local = local.replace(new RegExp(`"${secret}"|(?<![\\w-])${secret}(?![\\w-])`, "g"), `"${REDACTED}"`);
          const redacted = renderRedacted(buildRedactedPlan(structuredClone(plan), SCHEMAS));
          assert.fixture(redacted, local);
        }),
        { numRuns: 60 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

test.run();
