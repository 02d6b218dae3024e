import { suite } from "uvu";
import * as assert from "uvu/assert";
import { canonicalize, sha256Hex } from "../canonical-json.ts";
import { isDomainError } from "../errors.ts";
import {
  outcomeOf,
  overrideCovers,
  parseViolations,
  policyResultDigest,
  policySetVersionDigest,
  preparePolicies,
  regoPackage,
  type PolicyFinding,
} from "./index.ts";

const policy = suite("policy domain");

function finding(level: PolicyFinding["enforcementLevel"], title = "t", address: string | null = null): PolicyFinding {
  return {
    policySetId: "pset-a",
    policySetVersion: 1,
    policy: "p",
    enforcementLevel: level,
    title,
    message: "m",
    address,
  };
}

policy("the package is the first statement, dotted identifiers only", () => {
  assert.is(regoPackage("# comment\n\npackage stackship.tags\n\nimport rego.v1\n"), "stackship.tags");
  assert.is(regoPackage("package x # trailing\n"), "x");
  for (const bad of ["violations := set()\n", 'package a["b-c"]\n', "package data.x\n", "package data\n", ""]) {
    try {
      regoPackage(bad);
      assert.unreachable(bad);
    } catch (error) {
      assert.ok(isDomainError(error, "POLICY_SOURCE_INVALID"), bad);
    }
  }
});

policy("policy names are unique within a version", () => {
  try {
    preparePolicies([
      { name: "a", enforcement_level: "advisory", source: "package a\n" },
      { name: "a", enforcement_level: "advisory", source: "package b\n" },
    ]);
    assert.unreachable();
  } catch (error) {
    assert.ok(isDomainError(error, "POLICY_SOURCE_INVALID"));
  }
});

policy("a version digest covers names, levels and sources", () => {
  const base = preparePolicies([{ name: "a", enforcement_level: "advisory", source: "package a\n" }]);
  const digest = policySetVersionDigest(base);
  assert.is(
    policySetVersionDigest(preparePolicies([{ name: "a", enforcement_level: "advisory", source: "package a\n" }])),
    digest,
  );
  assert.is.not(
    policySetVersionDigest(
      preparePolicies([{ name: "a", enforcement_level: "soft_mandatory", source: "package a\n" }]),
    ),
    digest,
  );
  assert.is.not(
    policySetVersionDigest(preparePolicies([{ name: "b", enforcement_level: "advisory", source: "package a\n" }])),
    digest,
  );
  assert.is.not(
    policySetVersionDigest(preparePolicies([{ name: "a", enforcement_level: "advisory", source: "package a\n\n" }])),
    digest,
  );
});

policy("outcome: hard beats soft beats advisory; errored is never a pass", () => {
  assert.is(outcomeOf([], false), "passed");
  assert.is(outcomeOf([finding("advisory")], false), "passed");
  assert.is(outcomeOf([finding("advisory"), finding("soft_mandatory")], false), "soft_failed");
  assert.is(outcomeOf([finding("soft_mandatory"), finding("hard_mandatory")], false), "hard_failed");
  assert.is(outcomeOf([], true), "errored");
});

policy("violations: a set of objects with string title and message, optional address", () => {
  assert.equal(
    parseViolations([
      { title: "t", message: "m" },
      { title: "t2", message: "m2", address: "a.b", extra: 1 },
    ]),
    [
      { title: "t", message: "m", address: null },
      { title: "t2", message: "m2", address: "a.b" },
    ],
  );
  assert.throws(() => parseViolations({ title: "t" }));
  assert.throws(() => parseViolations(["x"]));
  assert.throws(() => parseViolations([{ title: 1, message: "m" }]));
  assert.throws(() => parseViolations([{ title: "t", message: "m", address: 3 }]));
  assert.throws(() => parseViolations(Array.from({ length: 501 }, (_, i) => ({ title: `${i}`, message: "m" }))));
  assert.is(parseViolations([{ title: "x".repeat(5000), message: "m" }])[0].title.length, 4000);
});

policy("the result digest is order-independent and covers versions, findings, outcome and OPA version", () => {
  const versions = [{ policySetId: "pset-a", version: 1, digest: "a".repeat(64) }];
  const a = finding("advisory", "one", "x.a");
  const b = finding("soft_mandatory", "two", "x.b");
  const digest = policyResultDigest({
    outcome: "soft_failed",
    policySetVersions: versions,
    findings: [a, b],
    opaVersion: "1.22.4",
  });
  assert.is(
    policyResultDigest({ outcome: "soft_failed", policySetVersions: versions, findings: [b, a], opaVersion: "1.22.4" }),
    digest,
  );
  assert.is.not(
    policyResultDigest({ outcome: "soft_failed", policySetVersions: versions, findings: [b, a], opaVersion: "1.22.5" }),
    digest,
  );
  assert.is.not(
    policyResultDigest({
      outcome: "soft_failed",
      policySetVersions: [{ ...versions[0], version: 2 }],
      findings: [a, b],
      opaVersion: "1.22.4",
    }),
    digest,
  );
  assert.is.not(
    policyResultDigest({
      outcome: "soft_failed",
      policySetVersions: versions,
      findings: [a, { ...b, message: "other" }],
      opaVersion: "1.22.4",
    }),
    digest,
  );
  // The skipped stage's digest is the one it always was.
  assert.is(
    policyResultDigest({ outcome: "skipped", policySetVersions: [], findings: [], opaVersion: null }),
    sha256Hex(
      canonicalize({ format: "stackship.policy-result/v1", outcome: "skipped", policy_set_versions: [], findings: [] }),
    ),
  );
});

policy("an override covers exactly its digest until it expires", () => {
  const o = { resultDigest: "d", expiresAt: "2026-12-02T10:00:00.000Z" };
  assert.ok(overrideCovers(o, "d", new Date("2026-12-02T09:59:59.999Z")));
  assert.not.ok(overrideCovers(o, "d", new Date("2026-12-02T10:00:00.000Z")));
  assert.not.ok(overrideCovers(o, "e", new Date("2026-12-02T09:00:00.000Z")));
  assert.not.ok(overrideCovers(o, null, new Date("2026-12-02T09:00:00.000Z")));
});

policy.run();
