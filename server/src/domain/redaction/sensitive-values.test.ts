import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  canonicalNumber,
  formsOfSecret,
  isSpecific,
  MIN_SENSITIVE_VALUE_LENGTH,
  REDACTED,
  sensitiveValueSet,
  sensitiveValuesOfPlan,
  sensitiveValuesOfState,
  spellingsOf,
  StreamRedactor,
  ValueMatcher,
} from "./index.ts";

const R = REDACTED;
const sorted = (values: string[]) => [...values].sort();

const rule = suite("redaction by value: the minimum length rule");

rule("a value is redacted by value from 6 code points on; 5 is not enough", () => {
  assert.is(MIN_SENSITIVE_VALUE_LENGTH, 6);
  assert.is(isSpecific("abcde"), false);
  assert.is(isSpecific("abcdef"), true);
  // Code points, not UTF-16 units: three emoji are six units but three characters.
  assert.is(isSpecific("😀😀😀"), false);
  assert.is(isSpecific("😀😀😀😀😀"), false);
  assert.is(isSpecific("😀😀😀😀😀😀"), true);
  assert.is(isSpecific("ééééé"), false);
  assert.is(isSpecific("éééééé"), true);
  assert.is(isSpecific(""), false);
  assert.is(isSpecific(123456), false, "only text");
});

rule("strings, numbers and booleans by their text; shorter ones stay redacted by path only", () => {
  const plan = {
    format_version: "1.2",
    resource_changes: [
      {
        address: "x.y",
        change: {
          actions: ["update"],
          before: {
            s5: "abcde",
            s6: "abcdef",
            n5: 12345,
            n6: 123456,
            neg: -12345,
            f: 1234.5,
            t: true,
            f2: false,
            nul: null,
          },
          before_sensitive: true,
          after: null,
          after_sensitive: false,
        },
      },
    ],
  };
  assert.equal(sorted(sensitiveValuesOfPlan(plan)), sorted(["abcdef", "123456", "-12345", "1234.5"]));
});

const plans = suite("redaction by value: what the plan marks sensitive");

// The second plan of issue 12's example as `tofu show -json` (OpenTofu 1.12.6) printed it, abridged.
const issuePlan = {
  format_version: "1.2",
  terraform_version: "1.12.6",
  variables: { gen: { value: "g2" }, pw: { value: "default-secret-xyz" }, plain: { value: "plain-value-1" } },
  planned_values: {
    outputs: {
      o: { sensitive: false, type: "string", value: "default-secret-xyz" },
      s: { sensitive: true, type: "string", value: "default-secret-xyz" },
    },
    root_module: {
      resources: [
        {
          address: "terraform_data.copy",
          values: { id: "03cd6be9", input: { gen: "g2", pass: "s3cret-value", user: "u" } },
          sensitive_values: { input: { pass: true }, output: {} },
        },
      ],
    },
  },
  resource_changes: [
    {
      address: "terraform_data.copy",
      change: {
        actions: ["update"],
        before: {
          id: "03cd6be9",
          input: { gen: "g1", pass: "s3cret-value", user: "u" },
          output: { gen: "g1", pass: "s3cret-value", user: "u" },
        },
        after: { id: "03cd6be9", input: { gen: "g2", pass: "s3cret-value", user: "u" } },
        after_unknown: { input: {}, output: true },
        before_sensitive: { input: { pass: true }, output: {} },
        after_sensitive: { input: { pass: true }, output: {} },
      },
    },
  ],
  output_changes: {
    tok: {
      actions: ["create"],
      before: null,
      after: "output-token-77",
      after_unknown: false,
      before_sensitive: false,
      after_sensitive: true,
    },
  },
  prior_state: {
    values: {
      outputs: { old: { sensitive: true, value: { nested: ["prior-output-secret"] } } },
      root_module: {
        child_modules: [
          {
            resources: [
              { values: { password: "module-password-1", name: "visible-name" }, sensitive_values: { password: true } },
            ],
          },
        ],
      },
    },
  },
  configuration: {
    root_module: {
      variables: { gen: {}, pw: { sensitive: true, default: "default-secret-xyz" }, plain: {} },
      module_calls: { db: { module: { variables: { admin: { sensitive: true, default: "module-default-secret" } } } } },
    },
  },
};

plans(
  "masks of resource changes, planned and prior values, sensitive outputs, declared-sensitive variables and their defaults",
  () => {
    assert.equal(
      sorted(sensitiveValuesOfPlan(issuePlan)),
      sorted([
        "s3cret-value",
        "default-secret-xyz",
        "output-token-77",
        "prior-output-secret",
        "module-password-1",
        "module-default-secret",
      ]),
    );
  },
);

plans("a mask that does not fit its value fails closed: everything below it", () => {
  const change = {
    actions: ["update"],
    before: { a: ["one-value", "two-value"], b: "kept-out-1" },
    before_sensitive: { a: { not: true } },
    after: { c: "after-value" },
    after_sensitive: { c: [true] },
  };
  assert.equal(
    sorted(sensitiveValuesOfPlan({ format_version: "1.2", resource_changes: [{ change }] })),
    sorted(["one-value", "two-value", "after-value"]),
  );
});

plans("anything that is not plan JSON gives nothing and never throws", () => {
  for (const input of [
    null,
    3,
    "plan",
    [],
    {},
    { resource_changes: "x" },
    { resource_changes: [null, { change: null }] },
    { prior_state: { values: { root_module: { resources: [null] } } } },
  ]) {
    assert.equal(sensitiveValuesOfPlan(input), []);
  }
});

const states = suite("redaction by value: sensitive paths of the prior state");

// terraform_data after `tofu apply` (OpenTofu 1.12.6): a dynamic attribute is stored as {value, type}.
const issueState = {
  version: 4,
  outputs: {
    o: { value: "default-secret-xyz", type: "string" },
    s: { value: "sensitive-output-1", type: "string", sensitive: true },
  },
  resources: [
    {
      mode: "managed",
      type: "terraform_data",
      name: "copy",
      instances: [
        {
          attributes: {
            id: "03cd6be9-9b3f-e768-7888-fbe1de6cc524",
            input: {
              value: { gen: "g1", pass: "s3cret-value", user: "u" },
              type: ["object", { gen: "string", pass: "string", user: "string" }],
            },
            output: {
              value: { gen: "g1", pass: "s3cret-value", user: "u" },
              type: ["object", { gen: "string", pass: "string", user: "string" }],
            },
          },
          sensitive_attributes: [
            [
              { type: "get_attr", value: "input" },
              { type: "get_attr", value: "pass" },
            ],
          ],
        },
      ],
    },
    {
      type: "x",
      instances: [
        {
          attributes: {
            tags: { "secret-tag": "tag-secret-1", other: "tag-visible-1" },
            list: ["first-item", "second-item"],
            pw: null,
          },
          sensitive_attributes: [
            [
              { type: "get_attr", value: "tags" },
              { type: "index", value: { value: "secret-tag", type: "string" } },
            ],
            [
              { type: "get_attr", value: "list" },
              { type: "index", value: { value: 1, type: "number" } },
            ],
            [{ type: "get_attr", value: "pw" }],
          ],
        },
        {
          attributes: { set: ["set-member-1"], plain: "visible-plain" },
          sensitive_attributes: [
            [
              { type: "get_attr", value: "set" },
              { type: "index", value: { value: "set-member-1", type: "string" } },
            ],
          ],
        },
      ],
    },
  ],
};

states("paths through dynamic attributes, map keys and list indexes; sensitive outputs", () => {
  assert.equal(
    sorted(sensitiveValuesOfState(issueState)),
    sorted(["s3cret-value", "sensitive-output-1", "tag-secret-1", "second-item", "set-member-1"]),
  );
});

states("a path that does not resolve fails closed: everything below its last resolved step", () => {
  const state = {
    resources: [
      {
        instances: [
          {
            attributes: { a: { b: "below-a-1", c: ["below-a-2"] }, d: "not-below-a" },
            sensitive_attributes: [[{ type: "get_attr", value: "a" }, { type: "weird" }]],
          },
        ],
      },
    ],
  };
  assert.equal(sorted(sensitiveValuesOfState(state)), sorted(["below-a-1", "below-a-2"]));
  const broken = {
    resources: [{ instances: [{ attributes: { a: "whole-attributes" }, sensitive_attributes: "not a list" }] }],
  };
  assert.equal(sensitiveValuesOfState(broken), ["whole-attributes"]);
  for (const input of [null, [], { resources: {} }, { resources: [{ instances: [null, { attributes: {} }] }] }])
    assert.equal(sensitiveValuesOfState(input), []);
});

states("the phase's set: snapshot secrets at any length, state and plan values by the rule", () => {
  assert.equal(
    sorted(sensitiveValueSet({ variables: ["ab", ""], priorState: issueState, plan: { format_version: "1.2" } })),
    sorted(["ab", "s3cret-value", "sensitive-output-1", "tag-secret-1", "second-item", "set-member-1"]),
  );
});

const text = suite("redaction by value: replacing in text");

text("every spelling: as is, JSON-escaped, Go-escaped, HCL template-escaped, each line of a multi-line value", () => {
  const spellings = spellingsOf('a"b<c>&d\\e');
  assert.equal(spellings.slice(0, 3), ['a"b<c>&d\\e', 'a\\"b<c>&d\\\\e', 'a\\"b\\u003cc\\u003e\\u0026d\\\\e']);
  // Quoted text inside a JSON log line (`tofu plan -json`: a diagnostic quoting the value) is escaped twice.
  const quotedInJsonLine = JSON.stringify(JSON.stringify('a"b<c>&d\\e')).slice(3, -3);
  const goQuotedInJsonLine = quotedInJsonLine.replace(
    /[<>&]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  assert.ok(spellings.includes(quotedInJsonLine) && spellings.includes(goQuotedInJsonLine), JSON.stringify(spellings));
  assert.equal(spellingsOf("plain-secret-value"), ["plain-secret-value"]);
  assert.ok(spellingsOf("pre-${x}-%{y}").includes("pre-$${x}-%%{y}"));
  assert.equal(
    spellingsOf("line-one-long\r\nshort\nline-three-long")
      .filter((s) => !s.includes("\\"))
      .sort(),
    ["line-one-long", "line-one-long\r\nshort\nline-three-long", "line-three-long"],
  );
  const m = new ValueMatcher(["-----BEGIN KEY-----\nMIIEsecretbody\n-----END KEY-----"]);
  // A heredoc as tofu prints it: each line indented.
  assert.is(m.redact("    <<-EOT\n        MIIEsecretbody\n    EOT"), `    <<-EOT\n        ${R}\n    EOT`);
});

text("overlapping and adjacent occurrences become one marker; the longer of two values is replaced whole", () => {
  const m = new ValueMatcher(["abcdef", "defghi"]);
  assert.is(m.redact("x abcdefghi y"), `x ${R} y`);
  assert.is(m.redact("abcdefabcdef"), R);
  assert.is(m.redact("abcde fghi"), "abcde fghi");
  assert.is(new ValueMatcher(["abc", "abcdef"]).redact("xabcdefx abc"), `x${R}x ${R}`);
  assert.ok(m.contains("..defghi..") && !m.contains("defgh"));
  assert.is(new ValueMatcher([]).redact("anything"), "anything");
});

text("a stream holds back only a tail that could start a value, and releases it when it cannot", () => {
  const s = new StreamRedactor(["s3cret-value"]);
  assert.is(s.push("hello wor"), "hello wor", "no tail can start the value: nothing held");
  assert.is(s.push("ld s3cr"), "ld ", "'s3cr' could be its start");
  assert.is(s.push("et-val"), "");
  assert.is(s.push("ue!"), `${R}!`);
  assert.is(s.push(" s3cx"), " s3cx");
  assert.is(s.push(" s3"), " ");
  assert.is(s.flush(), "s3");
});

text("a stream's output is the redaction of the whole text, at every split point", () => {
  const values = ["s3cret-value", "cret-v", "value-2", 'q"uote'];
  const whole = 'a s3cret-value-2 b "q\\"uote" s3cret-valu s3cret-value';
  const m = new ValueMatcher(values);
  const expected = m.redact(whole);
  assert.is(expected, `a ${R} b "${R}" s3${R}alu ${R}`);
  for (let i = 0; i <= whole.length; i++) {
    for (let j = i; j <= whole.length; j += 3) {
      const s = new StreamRedactor(m);
      assert.is(
        s.push(whole.slice(0, i)) + s.push(whole.slice(i, j)) + s.push(whole.slice(j)) + s.flush(),
        expected,
        `split at ${i}, ${j}`,
      );
    }
  }
});

/** The reference: every position covered by any occurrence of any spelling; each run of covered positions one marker. */
function naive(values: string[], text: string): string {
  const covered = new Array<boolean>(text.length).fill(false);
  for (const v of values) {
    for (const needle of spellingsOf(v)) {
      for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1))
        covered.fill(true, at, at + needle.length);
    }
  }
  let out = "";
  for (let i = 0; i < text.length; i++) {
    if (!covered[i]) out += text[i];
    else if (i === 0 || !covered[i - 1]) out += R;
  }
  return out;
}

text("property: over overlapping values from a tiny alphabet, any chunking gives the reference redaction", () => {
  fc.assert(
    fc.property(
      fc.array(fc.stringMatching(/^[ab"\\]{1,5}$/), { minLength: 1, maxLength: 4 }),
      fc.stringMatching(/^[abc"\\]{0,40}$/),
      fc.array(fc.nat(8), { maxLength: 8 }),
      (values, whole, cuts) => {
        const m = new ValueMatcher(values);
        const expected = naive(values, whole);
        assert.is(m.redact(whole), expected);
        const stream = new StreamRedactor(m);
        let out = "";
        let at = 0;
        for (const cut of cuts) {
          const end = Math.min(whole.length, at + cut);
          out += stream.push(whole.slice(at, end));
          at = end;
        }
        out += stream.push(whole.slice(at)) + stream.flush();
        assert.is(out, expected, JSON.stringify({ values, whole, cuts }));
        assert.is(m.contains(whole), expected !== whole);
      },
    ),
    { numRuns: 1000 },
  );
});

text("thousands of long values in a megabyte of text", () => {
  const values = Array.from({ length: 5000 }, (_, i) => `secret-${i}-${"x".repeat(200)}-${i}`);
  const m = new ValueMatcher(values);
  const big = `${"line of ordinary log text\n".repeat(40_000)}${values[4321]}\n`;
  const out = m.redact(big);
  assert.ok(out.endsWith(`${R}\n`));
  assert.is(out.length, big.length - values[4321].length + R.length);
});

const forms = suite("redaction by value: the forms a secret is printed in (issue 25)");

forms("an HCL-typed sensitive collection: every element from 6 code points is a value of its own", () => {
  const value = '["HCLELEMone1","HCLELEMtwo2"]';
  assert.equal(sorted(formsOfSecret(value)), sorted([value, "HCLELEMone1", "HCLELEMtwo2"]));
  // tofu prints each element on its own line: none of them survives.
  const log = `  + input = [\n      + "HCLELEMone1",\n      + "HCLELEMtwo2",\n    ]\n`;
  const redacted = new ValueMatcher(sensitiveValueSet({ variables: [value] })).redact(log);
  assert.not.ok(redacted.includes("HCLELEM"), redacted);
  // Objects, escapes, nested collections and numbers; elements under 6 code points are not values of their own.
  assert.equal(
    sorted(formsOfSecret('{ a = "quote\\"d\\u00e9", nested = ["deeper1", "short"], n = 000123456, x = 1 }')),
    sorted([
      '{ a = "quote\\"d\\u00e9", nested = ["deeper1", "short"], n = 000123456, x = 1 }',
      'quote"dé',
      "deeper1",
      "000123456",
      "123456",
    ]),
  );
  // 5 code points: too short to be redacted everywhere.
  assert.equal(formsOfSecret('["abcde"]'), ['["abcde"]']);
});

forms("a sensitive number: the canonical form tofu prints (leading zeros, trailing zeros, exponents)", () => {
  assert.equal(sorted(formsOfSecret("00123456789")), sorted(["00123456789", "123456789"]));
  const redacted = new ValueMatcher(sensitiveValueSet({ variables: ["00123456789"] })).redact("pin = 123456789\n");
  assert.is(redacted, `pin = ${R}\n`);
  for (const [text, canonical] of [
    ["1e3", "1000"],
    ["-0012", "-12"],
    ["1.50", "1.5"],
    [".5", "0.5"],
    ["1.50e-2", "0.015"],
    ["-0.000", "0"],
    ["+7", "7"],
  ] as const)
    assert.is(canonicalNumber(text), canonical, text);
  assert.is(canonicalNumber("abc"), undefined);
  assert.is(canonicalNumber("-"), undefined);
  // A short canonical form is not redacted everywhere: "0012" prints as "12".
  assert.equal(formsOfSecret("0012"), ["0012"]);
});

rule.run();
forms.run();
plans.run();
states.run();
text.run();
