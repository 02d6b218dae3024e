import { suite } from "uvu";
import * as assert from "uvu/assert";
import { dependencyBundleDigest, summarizePlan } from "./plan-analysis.ts";

const summary = suite("summarizePlan");

const change = (actions: string[]) => ({ address: "x", change: { actions } });

summary("counts creates, updates and deletes; a replace counts as create and destroy", () => {
  const plan = {
    resource_changes: [
      change(["create"]),
      change(["update"]),
      change(["delete"]),
      change(["delete", "create"]),
      change(["create", "delete"]),
      change(["no-op"]),
      change(["read"]),
    ],
  };
  assert.equal(summarizePlan(plan), {
    counts: { create: 3, change: 1, destroy: 3 },
    hasChanges: true,
    errored: false,
    imports: 0,
    generatedConfiguration: false,
  });
});

summary("a plan with only no-op and read changes has no changes", () => {
  assert.equal(summarizePlan({ resource_changes: [change(["no-op"]), change(["read"])] }), {
    counts: { create: 0, change: 0, destroy: 0 },
    hasChanges: false,
    errored: false,
    imports: 0,
    generatedConfiguration: false,
  });
  assert.equal(summarizePlan({}).hasChanges, false);
});

summary("forget is a change but not a destroy; forget-create counts the create", () => {
  assert.equal(summarizePlan({ resource_changes: [change(["forget"])] }), {
    counts: { create: 0, change: 0, destroy: 0 },
    hasChanges: true,
    errored: false,
    imports: 0,
    generatedConfiguration: false,
  });
  assert.equal(summarizePlan({ resource_changes: [change(["forget", "create"])] }).counts, {
    create: 1,
    change: 0,
    destroy: 0,
  });
});

summary(
  "a no-op that imports or moves a resource is a change (OpenTofu's Changes.Empty); one that does neither is not",
  () => {
    const importing = { address: "x", change: { actions: ["no-op"], importing: { id: "i-1" } } };
    assert.equal(summarizePlan({ resource_changes: [importing] }), {
      counts: { create: 0, change: 0, destroy: 0 },
      hasChanges: true,
      errored: false,
      imports: 1,
      generatedConfiguration: false,
    });
    const moved = { address: "b", previous_address: "a", change: { actions: ["no-op"] } };
    assert.ok(summarizePlan({ resource_changes: [moved] }).hasChanges);
    assert.not.ok(
      summarizePlan({ resource_changes: [{ address: "b", previous_address: "b", change: { actions: ["no-op"] } }] })
        .hasChanges,
    );
    assert.not.ok(
      summarizePlan({ resource_changes: [{ address: "b", change: { actions: ["no-op"], importing: null } }] })
        .hasChanges,
    );
  },
);

summary("an unknown action list is counted as a change (fail closed)", () => {
  assert.equal(summarizePlan({ resource_changes: [change(["teleport"])] }).counts.change, 1);
});

summary("output-only changes are changes; no-op outputs are not", () => {
  assert.ok(summarizePlan({ output_changes: { a: { actions: ["update"] } } }).hasChanges);
  assert.not.ok(summarizePlan({ output_changes: { a: { actions: ["no-op"] } } }).hasChanges);
});

summary("reports an errored plan", () => {
  assert.ok(summarizePlan({ errored: true }).errored);
});

const bundle = suite("dependencyBundleDigest");

bundle("is stable under manifest key order and changes with the lock file", () => {
  const a = dependencyBundleDigest(Buffer.from("lock-1"), Buffer.from('{"Modules":[{"Key":"","Dir":"."}]}'));
  const b = dependencyBundleDigest(Buffer.from("lock-1"), Buffer.from('{ "Modules": [ { "Dir": ".", "Key": "" } ] }'));
  const c = dependencyBundleDigest(Buffer.from("lock-2"), Buffer.from('{"Modules":[{"Key":"","Dir":"."}]}'));
  assert.is(a, b);
  assert.is.not(a, c);
  assert.match(dependencyBundleDigest(null, null), /^[0-9a-f]{64}$/);
});

summary.run();
bundle.run();
