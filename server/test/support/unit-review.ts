// Shared by the unit tests of the run review document (server/src/api/v1/review-presenter*.test.ts).
import * as assert from "uvu/assert";
import * as validators from "../../../generated/v1/validators.gen.js";

/** Asserts that a derived run review is a valid RunReviewDocument's data. */
export function valid(document: unknown): void {
  assert.ok(validators.RunReviewDocument({ data: document }), JSON.stringify(validators.RunReviewDocument.errors));
}
