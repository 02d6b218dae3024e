// Properties of redaction by value over random plans and prior states in which sensitive values
// are mirrored into places no mask marks: other attributes, other resources, outputs, map keys,
// nested lists, the prior state, and log text split into random chunks. Whatever the mix, the
// value never shows in what StackShip stores: the plan-diff as the runner keeps it (built with the
// values the sandbox knows, then checked on the host against the phase's whole set), the plan-diff
// of the standalone command (what the plan itself marks), the log, and policy findings.
import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildPlanDiff, isPlanDiffArtifactOf } from "../plan-diff/index.ts";
import { MAX_FINDING_TEXT, parseViolations } from "../policy/index.ts";
import { REDACTED, sensitiveValueSet, StreamRedactor, ValueMatcher } from "./index.ts";

type Source = "mask" | "output" | "variable" | "prior_values" | "state" | "snapshot";
type Place = "attr" | "other" | "nested" | "key" | "output" | "state";

interface Secret {
  value: string | number;
  source: Source;
  places: Array<{ place: Place; embed: boolean; target: number }>;
}

// Every secret starts with "§", which nothing else in a plan, an artifact or a filler contains, so
// finding one in the output can only be a leak. The tails include quotes, backslashes, newlines,
// template sequences and any Unicode.
const secretText = fc
  .oneof(fc.string({ unit: "grapheme", minLength: 5, maxLength: 14 }), fc.stringMatching(/^[a-z"\\<>&\n ${}%-]{5,14}$/))
  .filter((tail) => !tail.includes("§"))
  .map((tail) => `§${tail}`);
// Numbers of eight digits: nothing else in the documents has that many.
const secretNumber = fc.integer({ min: 10_000_000, max: 99_999_999 });

const secret: fc.Arbitrary<Secret> = fc.record({
  value: fc.oneof(secretText, secretNumber),
  source: fc.constantFrom<Source>("mask", "output", "variable", "prior_values", "state", "snapshot"),
  places: fc.array(
    fc.record({
      place: fc.constantFrom<Place>("attr", "other", "nested", "key", "output", "state"),
      embed: fc.boolean(),
      target: fc.nat(5),
    }),
    {
      minLength: 1,
      maxLength: 4,
    },
  ),
});

interface Scenario {
  secrets: Secret[];
  resources: number;
  fillers: string[];
  cuts: number[];
  quoted: boolean[];
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  secrets: fc.array(secret, { minLength: 1, maxLength: 4 }),
  resources: fc.integer({ min: 1, max: 4 }),
  fillers: fc.array(fc.stringMatching(/^[a-z =\n]{0,12}$/), { minLength: 1, maxLength: 8 }),
  cuts: fc.array(fc.nat(60), { maxLength: 12 }),
  quoted: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
});

const NAMES = ["a", "b", "c", "d"];

/** A resource_changes entry as built here: its values and masks grow as the secrets are placed. */
interface ResourceChange {
  address: string;
  mode: string;
  type: string;
  name: string;
  provider_name: string;
  change: {
    actions: string[];
    before: Record<string, unknown>;
    after: Record<string, unknown>;
    before_sensitive: Record<string, unknown>;
    after_sensitive: Record<string, unknown>;
    after_unknown: Record<string, unknown>;
  };
}

/** The plan JSON, prior state and snapshot secrets of a scenario. */
function build(s: Scenario) {
  const resources = Array.from({ length: s.resources }, (_, i): ResourceChange => ({
    address: `res.${NAMES[i]}`,
    mode: "managed",
    type: "res",
    name: NAMES[i],
    provider_name: "registry.opentofu.org/x/res",
    change: {
      actions: ["update"],
      before: { id: "fixed" },
      after: { id: "fixed" },
      before_sensitive: {},
      after_sensitive: {},
      after_unknown: {},
    },
  }));
  const outputChanges: Record<string, unknown> = {};
  const variables: Record<string, unknown> = {};
  const declared: Record<string, unknown> = {};
  const priorValues = { values: {} as Record<string, unknown>, sensitive_values: {} as Record<string, unknown> };
  const stateInstance = { attributes: {} as Record<string, unknown>, sensitive_attributes: [] as unknown[] };
  const snapshot: string[] = [];
  s.secrets.forEach(({ value, source, places }, i) => {
    const first = resources[0].change;
    switch (source) {
      case "mask":
        // Nested under a mask that is either exact or `true` on an ancestor, on both sides.
        first.before[`m${i}`] = { deep: [value] };
        first.after[`m${i}`] = { deep: [value] };
        first.before_sensitive[`m${i}`] = i % 2 === 0 ? true : { deep: [true] };
        first.after_sensitive[`m${i}`] = i % 2 === 0 ? { deep: [true] } : true;
        break;
      case "output":
        outputChanges[`s${i}`] = {
          actions: ["create"],
          before: null,
          after: value,
          after_unknown: false,
          before_sensitive: false,
          after_sensitive: true,
        };
        break;
      case "variable":
        variables[`v${i}`] = { value };
        declared[`v${i}`] = { sensitive: true };
        break;
      case "prior_values":
        priorValues.values[`p${i}`] = value;
        priorValues.sensitive_values[`p${i}`] = true;
        break;
      case "state":
        stateInstance.attributes[`st${i}`] = { value: { inner: value }, type: ["object", { inner: "string" }] };
        stateInstance.sensitive_attributes.push([
          { type: "get_attr", value: `st${i}` },
          { type: "get_attr", value: "inner" },
        ]);
        break;
      case "snapshot":
        snapshot.push(String(value));
        break;
    }
    places.forEach(({ place, embed, target }, j) => {
      const mirrored = embed ? (typeof value === "number" ? `port-${value}-x` : `pre${value}post`) : value;
      const r = resources[target % resources.length].change;
      switch (place) {
        case "attr":
          first.before[`c${i}_${j}`] = mirrored;
          first.after[`c${i}_${j}`] = mirrored;
          break;
        case "other":
          r.after[`o${i}_${j}`] = mirrored;
          break;
        case "nested":
          r.before[`n${i}_${j}`] = [[1, [mirrored]], "x"];
          break;
        case "key":
          r.after[`k${i}_${j}`] = { [String(mirrored)]: "v" };
          break;
        case "output":
          outputChanges[`u${i}_${j}`] = {
            actions: ["create"],
            before: null,
            after: mirrored,
            after_unknown: false,
            before_sensitive: false,
            after_sensitive: false,
          };
          break;
        case "state":
          stateInstance.attributes[`sm${i}_${j}`] = mirrored;
          priorValues.values[`sm${i}_${j}`] = mirrored;
          break;
      }
    });
  });
  const plan = {
    format_version: "1.2",
    terraform_version: "1.12.6",
    variables,
    resource_changes: resources,
    output_changes: outputChanges,
    prior_state: {
      format_version: "1.0",
      values: { root_module: { resources: [{ address: "res.a", ...priorValues }] } },
    },
    configuration: { root_module: { variables: declared } },
  };
  const priorState = {
    version: 4,
    resources: [{ mode: "managed", type: "res", name: "a", instances: [stateInstance] }],
  };
  // Through JSON text, as the runner and the command really receive them.
  return {
    plan: JSON.parse(JSON.stringify(plan)) as typeof plan,
    priorState: JSON.parse(JSON.stringify(priorState)) as typeof priorState,
    snapshot,
  };
}

/** The spellings a leak could take in stored text: as is and JSON-escaped. */
function forms(value: string | number): string[] {
  const text = String(value);
  return [text, JSON.stringify(text).slice(1, -1)];
}

function leaked(text: string, secrets: readonly Secret[]): string | undefined {
  for (const { value } of secrets) for (const form of forms(value)) if (text.includes(form)) return form;
  return undefined;
}

const RUN = "run-0123456789abcdef";
const properties = suite("redaction by value: properties over random plans, states and logs");

properties("the plan-diff the runner stores never shows a sensitive value, however it is mirrored", () => {
  fc.assert(
    fc.property(scenario, (s) => {
      const { plan, priorState, snapshot } = build(s);
      const whole = sensitiveValueSet({ variables: snapshot, priorState, plan });
      // Built in the sandbox with what it knows (the snapshot's secrets and the plan), checked on the host with the whole set.
      const { json } = buildPlanDiff(plan, { runId: RUN, knownSecrets: snapshot });
      const accepted = isPlanDiffArtifactOf(Buffer.from(json), RUN, whole);
      const stored = accepted ? json : "";
      assert.is(leaked(stored, s.secrets), undefined, stored);
      // Values only the stored prior state marks are the host's to catch; everything else the builder redacts itself.
      if (s.secrets.every((x) => x.source !== "state")) assert.ok(accepted, `refused: ${json}`);
    }),
    { numRuns: 300 },
  );
});

properties("the standalone command (what the plan itself marks) never shows a value the plan marks sensitive", () => {
  fc.assert(
    fc.property(scenario, (s) => {
      const { plan } = build(s);
      const { json } = buildPlanDiff(plan, { knownSecrets: [] });
      const marked = s.secrets.filter(
        (x) => x.source === "mask" || x.source === "output" || x.source === "variable" || x.source === "prior_values",
      );
      assert.is(leaked(json, marked), undefined, json);
    }),
    { numRuns: 300 },
  );
});

properties("a log holding every spelling of every value, in any chunking, never shows one", () => {
  fc.assert(
    fc.property(scenario, (s) => {
      const { plan, priorState, snapshot } = build(s);
      const whole = sensitiveValueSet({ variables: snapshot, priorState, plan });
      // tofu's human output quotes strings (JSON-escaped); error messages print them raw; then whole JSON documents.
      let text = s.fillers[0];
      s.secrets.forEach(({ value }, i) => {
        const quoted = s.quoted[i % s.quoted.length];
        text += `${quoted ? JSON.stringify(String(value)) : String(value)}${s.fillers[(i + 1) % s.fillers.length]}`;
      });
      text += `\n${JSON.stringify(plan, null, 2)}\n${JSON.stringify(priorState)}\n`;
      const stream = new StreamRedactor(new ValueMatcher(whole));
      let out = "";
      let at = 0;
      for (const cut of s.cuts) {
        const end = Math.min(text.length, at + cut);
        out += stream.push(text.slice(at, end));
        at = end;
      }
      out += stream.push(text.slice(at)) + stream.flush();
      assert.is(leaked(out, s.secrets), undefined, out);
      assert.ok(out.includes(REDACTED));
      // Any chunking gives exactly the redaction of the whole text.
      assert.is(out, new ValueMatcher(whole).redact(text));
    }),
    { numRuns: 300 },
  );
});

properties("policy findings: a value is redacted before the text is clipped, so a clip never leaves part of it", () => {
  fc.assert(
    fc.property(scenario, fc.integer({ min: MAX_FINDING_TEXT - 20, max: MAX_FINDING_TEXT + 5 }), (s, offset) => {
      const { plan, priorState, snapshot } = build(s);
      const matcher = new ValueMatcher(sensitiveValueSet({ variables: snapshot, priorState, plan }));
      const values = s.secrets.map((x) => String(x.value));
      const message = `${"m".repeat(offset)}${values.join(" and ")}`;
      const [finding] = parseViolations(
        [{ title: `title ${values[0]}`, message, address: `res.a["${values[0]}"]` }],
        (text) => matcher.redact(text),
      );
      const text = JSON.stringify(finding);
      assert.is(leaked(text, s.secrets), undefined, text);
      for (const v of values)
        assert.not.ok(finding.message.includes(v.slice(0, 5)), `a clipped part of ${JSON.stringify(v)} is left`);
    }),
    { numRuns: 200 },
  );
});

properties.run();
