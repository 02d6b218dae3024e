import { readFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { parse } from "yaml";
import { errorCodes as generatedErrorCodes } from "../../../generated/v1/error-codes.gen.ts";
import { REPO_ROOT } from "../../src/config.ts";
import { ERROR_CODES, type ErrorKind } from "../../src/domain/errors.ts";
import { statusOf } from "../../src/http/jsonapi.ts";

type Catalogue = Record<string, { status: number; title: string }>;

function specCatalogue(): Catalogue {
  return parse(readFileSync(join(REPO_ROOT, "spec/v1/error-codes.yaml"), "utf8")) as Catalogue;
}

/** The HTTP statuses each domain kind may map to. */
const STATUSES_OF_KIND: Record<ErrorKind, (status: number) => boolean> = {
  invalid: (status) => [400, 405, 422].includes(status),
  not_found: (status) => status === 404,
  conflict: (status) => status === 409,
  forbidden: (status) => status === 403,
  unauthenticated: (status) => status === 401,
  precondition_failed: (status) => status === 412 || status === 428,
  too_large: (status) => status === 413,
  throttled: (status) => status === 429,
  unavailable: (status) => status >= 500 && status <= 599,
};

const catalogue = suite("error codes");

catalogue(
  "spec/v1/error-codes.yaml is a non-empty map of SCREAMING_SNAKE codes to an integer status and a title",
  () => {
    const spec = specCatalogue();
    const codes = Object.keys(spec);
    assert.ok(codes.length >= 20, `only ${codes.length} codes`);
    for (const code of codes) {
      assert.match(code, /^[A-Z][A-Z0-9_]*$/);
      assert.ok(
        Number.isInteger(spec[code].status) && spec[code].status >= 400 && spec[code].status <= 599,
        `${code}: status ${spec[code].status}`,
      );
      assert.type(spec[code].title, "string");
      assert.ok(spec[code].title.length > 0, code);
    }
  },
);

catalogue("every domain code is in spec/v1/error-codes.yaml", () => {
  const spec = specCatalogue();
  const missing = Object.keys(ERROR_CODES).filter((code) => !(code in spec));
  assert.equal(missing, []);
});

catalogue("every code in spec/v1/error-codes.yaml is a domain code", () => {
  const extra = Object.keys(specCatalogue()).filter((code) => !(code in ERROR_CODES));
  assert.equal(extra, []);
});

catalogue("each code's domain kind agrees with its status class in the yaml", () => {
  const spec = specCatalogue();
  const disagreements = Object.entries(ERROR_CODES)
    .filter(([code]) => code in spec)
    .filter(([code, { kind }]) => !STATUSES_OF_KIND[kind as ErrorKind](spec[code].status))
    .map(([code, { kind }]) => `${code}: kind ${kind} but status ${spec[code].status}`);
  assert.equal(disagreements, []);
});

catalogue("each code has the same title in the domain and in the yaml", () => {
  const spec = specCatalogue();
  const differing = Object.entries(ERROR_CODES)
    .filter(([code, { title }]) => code in spec && spec[code].title !== title)
    .map(([code, { title }]) => `${code}: '${title}' vs '${spec[code].title}'`);
  assert.equal(differing, []);
});

catalogue("the generated catalogue equals the yaml, and the HTTP layer answers each code with the yaml status", () => {
  const spec = specCatalogue();
  assert.equal(JSON.parse(JSON.stringify(generatedErrorCodes)), spec);
  for (const code of Object.keys(ERROR_CODES) as Array<keyof typeof ERROR_CODES>) {
    assert.is(statusOf(code), spec[code]?.status, code);
  }
});

catalogue.run();
