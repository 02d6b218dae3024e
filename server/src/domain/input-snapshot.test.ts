import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { canonicalize, sha256Hex } from "./canonical-json.ts";
import { newId } from "./ids.ts";
import {
  buildInputSnapshot,
  INPUT_SNAPSHOT_FORMAT,
  type BuildInputSnapshotArgs,
  type SnapshotVariableInput,
} from "./input-snapshot.ts";

function recordingSeal(): { seal: (plaintext: string) => string; sealed: Map<string, string> } {
  const sealed = new Map<string, string>();
  return {
    sealed,
    seal: (plaintext) => {
      const handle = newId("snapshotSecret");
      sealed.set(handle, plaintext);
      return handle;
    },
  };
}

/** A seal whose handles depend only on the plaintext, so digests can be compared across calls. */
function deterministicSeal(plaintext: string): string {
  return `sec-${sha256Hex(plaintext)
    .slice(0, 16)
    .replace(/[^0-9a-z]/g, "0")}`;
}

const VARIABLES: SnapshotVariableInput[] = [
  { key: "region", category: "terraform", hcl: false, sensitive: false, value: "eu-west-1" },
  { key: "AWS_SECRET_ACCESS_KEY", category: "env", hcl: false, sensitive: true, value: "plaintext-secret-1" },
  { key: "tags", category: "terraform", hcl: true, sensitive: false, value: '{ team = "core" }' },
  { key: "db_password", category: "terraform", hcl: false, sensitive: true, value: "plaintext-secret-2" },
  { key: "TF_LOG", category: "env", hcl: false, sensitive: false, value: "info" },
];

function args(overrides: Partial<BuildInputSnapshotArgs> = {}): BuildInputSnapshotArgs {
  return {
    workspaceId: "ws-0123456789abcdef",
    speculative: false,
    opentofuVersion: "1.8.5",
    executionRegion: "eu-west-1",
    platform: "linux_amd64",
    credentialsProfile: "aws-prod",
    variables: VARIABLES,
    ...overrides,
  };
}

const snapshot = suite("buildInputSnapshot");

snapshot("builds the v1 document with variables sorted by category then key", () => {
  const { seal, sealed } = recordingSeal();
  const { document, inputDigest } = buildInputSnapshot(args(), seal);
  assert.is(document.format, INPUT_SNAPSHOT_FORMAT);
  assert.is(document.format, "stackship.input-snapshot/v1");
  assert.is(document.workspace_id, "ws-0123456789abcdef");
  assert.is(document.opentofu_version, "1.8.5");
  assert.is(document.execution_region, "eu-west-1");
  assert.is(document.platform, "linux_amd64");
  assert.is(document.credentials_profile, "aws-prod");
  assert.equal(
    document.variables.map((variable) => `${variable.category}/${variable.key}`),
    ["env/AWS_SECRET_ACCESS_KEY", "env/TF_LOG", "terraform/db_password", "terraform/region", "terraform/tags"],
  );
  assert.equal(document.variables[1], { key: "TF_LOG", category: "env", hcl: false, sensitive: false, value: "info" });
  const secret = document.variables[0];
  assert.ok(secret.sensitive);
  assert.not.ok("value" in secret);
  assert.is(sealed.get(secret.sensitive ? secret.value_handle : ""), "plaintext-secret-1");
  assert.is(sealed.size, 2);
  assert.is(inputDigest, sha256Hex(canonicalize(document)));
  assert.match(inputDigest, /^[0-9a-f]{64}$/);
});

snapshot("keeps a null credentials profile", () => {
  const { document } = buildInputSnapshot(args({ credentialsProfile: null }), deterministicSeal);
  assert.is(document.credentials_profile, null);
});

snapshot("never puts a sensitive value in the document", () => {
  const { document } = buildInputSnapshot(args(), recordingSeal().seal);
  const text = canonicalize(document);
  assert.not.ok(text.includes("plaintext-secret-1"));
  assert.not.ok(text.includes("plaintext-secret-2"));
});

snapshot("speculative snapshots omit sensitive variables and never call seal", () => {
  let calls = 0;
  const { document } = buildInputSnapshot(args({ speculative: true }), () => {
    calls += 1;
    return "sec-0000000000000000";
  });
  assert.is(calls, 0);
  assert.equal(
    document.variables.map((variable) => variable.key),
    ["TF_LOG", "region", "tags"],
  );
  assert.ok(document.variables.every((variable) => !variable.sensitive));
});

snapshot("refuses duplicate variables, whose order would be ambiguous", () => {
  const duplicate = [...VARIABLES, { ...VARIABLES[0], value: "us-east-1" }];
  assert.throws(() => buildInputSnapshot(args({ variables: duplicate }), deterministicSeal), TypeError);
});

snapshot("does not modify the caller’s variable array", () => {
  const variables = [...VARIABLES];
  buildInputSnapshot(args({ variables }), deterministicSeal);
  assert.equal(variables, VARIABLES);
});

const variableArbitrary = fc.uniqueArray(
  fc.record({
    key: fc.string({ minLength: 1, maxLength: 12 }),
    category: fc.constantFrom("terraform" as const, "env" as const),
    hcl: fc.boolean(),
    sensitive: fc.boolean(),
    value: fc.string({ maxLength: 20 }).map((text) => `SECRET-${text}-END`),
  }),
  { selector: (variable) => `${variable.category}\u0000${variable.key}`, maxLength: 12 },
);

snapshot("digest is stable under variable order (property)", () => {
  fc.assert(
    fc.property(variableArbitrary, fc.boolean(), (variables, speculative) => {
      const forward = buildInputSnapshot(args({ variables, speculative }), deterministicSeal);
      const backward = buildInputSnapshot(
        args({ variables: [...variables].reverse(), speculative }),
        deterministicSeal,
      );
      assert.is(backward.inputDigest, forward.inputDigest);
      // Key order of the document object does not matter either.
      const reordered = Object.fromEntries(Object.entries(forward.document).reverse());
      assert.is(sha256Hex(canonicalize(reordered)), forward.inputDigest);
    }),
    { numRuns: 200 },
  );
});

snapshot("no sensitive value ever appears in the canonical document (property)", () => {
  fc.assert(
    fc.property(variableArbitrary, fc.boolean(), (generated, speculative) => {
      // Sensitive values carry a marker no other value or key can contain.
      const variables = generated.map((variable, index) => ({
        ...variable,
        key: variable.key.replaceAll("§", ""),
        value: variable.sensitive
          ? `§${index}§${variable.value.replaceAll("§", "")}`
          : variable.value.replaceAll("§", ""),
      }));
      fc.pre(new Set(variables.map((variable) => `${variable.category}/${variable.key}`)).size === variables.length);
      const text = canonicalize(buildInputSnapshot(args({ variables, speculative }), recordingSeal().seal).document);
      assert.not.ok(text.includes("§"));
    }),
    { numRuns: 200 },
  );
});

snapshot.run();
