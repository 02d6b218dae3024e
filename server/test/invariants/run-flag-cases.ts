// The two run-flag invariants of run-flags.test.ts as parameters: each flag's spellings at every
// door, its error code and its CHECK constraint.
import type { ErrorCode } from "../../src/domain/errors.ts";

export type Attributes = Record<string, unknown>;

export interface FlagInvariant {
  title: string;
  code: ErrorCode;
  /** The flag's name on v1 and in the `runs` table, on tfe, and in the repository input. */
  column: "auto_apply" | "is_destroy";
  tfeName: "auto-apply" | "is-destroy";
  inputName: "autoApply" | "isDestroy";
  constraint: string;
  /** v1 attributes besides `<column>: true` that must not make a difference. */
  v1Companions: Attributes[];
  v1Message: string;
  dashboardAttributes: Attributes[];
  /** v1 attributes that are not the boolean flag, and the pointer the 422 DOCUMENT_INVALID names. */
  misspelled: Array<[Attributes, string]>;
  /** Whether a flag smuggled into data.meta is checked (it is refused as DOCUMENT_INVALID). */
  checksMeta: boolean;
  /** tfe attributes with the flag true: 422 invalid_document whose detail matches `tfeDetail`. */
  tfeTrue: Attributes[];
  tfeDetail: RegExp;
  /** Whether the tfe error's code is the invariant's own code. */
  tfeCodeIsOwn: boolean;
  /** tfe attributes with a non-boolean flag: 422 invalid_document. */
  tfeNonBoolean: Attributes[];
  /** Attributes the tfe surface does not know, which must leave the flag false. */
  tfeIgnored: Attributes;
  /** Repository inputs (besides the valid template) that must be refused before any write. */
  repositoryAttempts: Array<[string, Attributes]>;
}

export const invariants: FlagInvariant[] = [
  {
    title: "invariant 1: no apply without a bound approval (auto_apply is always refused)",
    code: "RUN_AUTO_APPLY_FORBIDDEN",
    column: "auto_apply",
    tfeName: "auto-apply",
    inputName: "autoApply",
    constraint: "runs_auto_apply_false",
    v1Companions: [{}, { is_destroy: false }, { kind: "speculative" }],
    v1Message: "please",
    dashboardAttributes: [{ auto_apply: true }, { auto_apply: true, kind: "speculative" }],
    misspelled: [
      [{ auto_apply: "true" }, "/data/attributes/auto_apply"],
      [{ auto_apply: 1 }, "/data/attributes/auto_apply"],
      [{ auto_apply: null }, "/data/attributes/auto_apply"],
      [{ auto_apply: [true] }, "/data/attributes/auto_apply"],
      [{ "auto-apply": true }, "/data/attributes/auto-apply"],
      [{ autoApply: true }, "/data/attributes/autoApply"],
    ],
    checksMeta: true,
    tfeTrue: [
      { "auto-apply": true },
      { "auto-apply": true, "plan-only": true },
      { "auto-apply": true, "is-destroy": false },
    ],
    tfeDetail: /-auto-approve/,
    tfeCodeIsOwn: false,
    tfeNonBoolean: [{ "auto-apply": "true" }, { "auto-apply": 1 }],
    tfeIgnored: { auto_apply: true, autoApply: true },
    repositoryAttempts: [
      ["autoApply: true", { autoApply: true }],
      ["autoApply: 'true'", { autoApply: "true" }],
      ["autoApply: 1", { autoApply: 1 }],
      ["autoApply: 'false' (a string)", { autoApply: "false" }],
      ["autoApply: 0", { autoApply: 0 }],
      ["autoApply: null", { autoApply: null }],
      ["autoApply: {}", { autoApply: {} }],
      ["auto_apply: true", { auto_apply: true }],
      ["auto_apply: 'true'", { auto_apply: "true" }],
      ["auto_apply: 1", { auto_apply: 1 }],
      ["autoApply: false with auto_apply: true", { autoApply: false, auto_apply: true }],
      ["autoApply: true with auto_apply: false", { autoApply: true, auto_apply: false }],
      ["autoApply: true with isDestroy: false", { autoApply: true, isDestroy: false }],
    ],
  },
  {
    title: "invariant 2: no destroy runs",
    code: "RUN_DESTROY_FORBIDDEN",
    column: "is_destroy",
    tfeName: "is-destroy",
    inputName: "isDestroy",
    constraint: "runs_is_destroy_false",
    v1Companions: [{}, { auto_apply: false }, { kind: "speculative" }],
    v1Message: "tear down",
    dashboardAttributes: [{ is_destroy: true }],
    misspelled: [
      [{ is_destroy: "true" }, "/data/attributes/is_destroy"],
      [{ is_destroy: 1 }, "/data/attributes/is_destroy"],
      [{ is_destroy: null }, "/data/attributes/is_destroy"],
      [{ "is-destroy": true }, "/data/attributes/is-destroy"],
      [{ isDestroy: true }, "/data/attributes/isDestroy"],
      [{ destroy: true }, "/data/attributes/destroy"],
      [{ kind: "destroy" }, "/data/attributes/kind"],
    ],
    checksMeta: false,
    tfeTrue: [
      { "is-destroy": true },
      { "is-destroy": true, "auto-apply": true },
      { "is-destroy": true, "auto-apply": false },
      { "is-destroy": true, "plan-only": true },
    ],
    tfeDetail: /destroy/i,
    tfeCodeIsOwn: true,
    tfeNonBoolean: [{ "is-destroy": "true" }, { "is-destroy": 1 }],
    tfeIgnored: { is_destroy: true, isDestroy: true },
    repositoryAttempts: [
      ["isDestroy: true", { isDestroy: true }],
      ["isDestroy: 'true'", { isDestroy: "true" }],
      ["isDestroy: 1", { isDestroy: 1 }],
      ["isDestroy: 0", { isDestroy: 0 }],
      ["isDestroy: null", { isDestroy: null }],
      ["isDestroy: []", { isDestroy: [] }],
      ["is_destroy: true", { is_destroy: true }],
      ["is_destroy: 'true'", { is_destroy: "true" }],
      ["is_destroy: 1", { is_destroy: 1 }],
      ["isDestroy: false with is_destroy: true", { isDestroy: false, is_destroy: true }],
      ["isDestroy: true with is_destroy: false", { isDestroy: true, is_destroy: false }],
      ["isDestroy: true with autoApply: false", { isDestroy: true, autoApply: false }],
    ],
  },
];
