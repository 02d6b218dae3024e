import { readFileSync } from "node:fs";
import { suite } from "uvu";
import { parse } from "yaml";
import * as assert from "uvu/assert";
import { DomainError, ERROR_CODES, isDomainError, type ErrorKind } from "./errors.ts";

const KINDS: ErrorKind[] = [
  "invalid",
  "not_found",
  "conflict",
  "forbidden",
  "unauthenticated",
  "precondition_failed",
  "unavailable",
  "too_large",
  "throttled",
];

const errorCodes = suite("ERROR_CODES");

errorCodes("includes every code the issues spell out", () => {
  // The full catalogue is checked against spec/v1/error-codes.yaml below; these are contracts.
  for (const code of [
    "RUN_AUTO_APPLY_FORBIDDEN",
    "RUN_DESTROY_FORBIDDEN",
    "RUN_LIST_CURSOR_INVALID",
    "DOCUMENT_INVALID",
    "NOT_FOUND",
    "UNAUTHENTICATED",
  ]) {
    assert.ok(code in ERROR_CODES, code);
  }
});

errorCodes("gives every code a known kind and a non-empty title", () => {
  for (const [code, { kind, title }] of Object.entries(ERROR_CODES)) {
    assert.ok(KINDS.includes(kind), `${code} has kind ${kind}`);
    assert.ok(title.length > 0 && title.length <= 60, `${code} has a short title`);
  }
});

errorCodes("maps the codes whose kind the brief fixes", () => {
  assert.is(ERROR_CODES.RUN_AUTO_APPLY_FORBIDDEN.kind, "invalid");
  assert.is(ERROR_CODES.CONFIGURATION_UPLOAD_TOO_LARGE.kind, "too_large");
  assert.is(ERROR_CODES.CONFIGURATION_VERSION_ALREADY_UPLOADED.kind, "conflict");
  assert.is(ERROR_CODES.UNAUTHENTICATED.kind, "unauthenticated");
  assert.is(ERROR_CODES.INTERNAL.kind, "unavailable");
});

// The status each kind may map to in http/; a code whose spec status disagrees has the wrong kind.
const STATUSES_BY_KIND: Record<ErrorKind, number[]> = {
  invalid: [400, 405, 422],
  not_found: [404],
  conflict: [409],
  forbidden: [403],
  unauthenticated: [401],
  precondition_failed: [412, 428],
  unavailable: [500, 503],
  too_large: [413],
  throttled: [429],
};

errorCodes("matches spec/v1/error-codes.yaml in both directions, with the same titles", () => {
  const spec = parse(readFileSync(new URL("../../../spec/v1/error-codes.yaml", import.meta.url), "utf8")) as Record<
    string,
    { status: number; title: string }
  >;
  assert.equal(Object.keys(ERROR_CODES).sort(), Object.keys(spec).sort());
  for (const [code, { kind, title }] of Object.entries(ERROR_CODES)) {
    assert.is(title, spec[code].title, `${code} title`);
    assert.ok(
      STATUSES_BY_KIND[kind].includes(spec[code].status),
      `${code}: kind ${kind} vs status ${spec[code].status}`,
    );
  }
});

const domainError = suite("DomainError");

domainError("takes its kind from the catalogue and keeps detail, source and meta", () => {
  const error = new DomainError("RUN_LIST_CURSOR_INVALID", "bad cursor", {
    source: { parameter: "cursor" },
    meta: { x: 1 },
  });
  assert.instance(error, Error);
  assert.is(error.name, "DomainError");
  assert.is(error.code, "RUN_LIST_CURSOR_INVALID");
  assert.is(error.kind, "invalid");
  assert.is(error.detail, "bad cursor");
  assert.is(error.message, "bad cursor");
  assert.is(error.title, ERROR_CODES.RUN_LIST_CURSOR_INVALID.title);
  assert.equal(error.source, { parameter: "cursor" });
  assert.equal(error.meta, { x: 1 });
});

domainError("leaves source and meta undefined when not given, and keeps a cause", () => {
  const cause = new Error("driver");
  const error = new DomainError("CONSTRAINT_VIOLATION", "conflict", { cause });
  assert.is(error.source, undefined);
  assert.is(error.meta, undefined);
  assert.is(error.cause, cause);
});

domainError("isDomainError checks the class and optionally the code", () => {
  const error = new DomainError("NOT_FOUND", "missing");
  assert.ok(isDomainError(error));
  assert.ok(isDomainError(error, "NOT_FOUND"));
  assert.not.ok(isDomainError(error, "FORBIDDEN"));
  assert.not.ok(isDomainError(new Error("x")));
  assert.not.ok(isDomainError({ code: "NOT_FOUND" }));
});

errorCodes.run();
domainError.run();
