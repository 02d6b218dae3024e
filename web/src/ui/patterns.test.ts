import { equal } from "../../test/support/assert.ts";
import { ORGANIZATION_NAME_PATTERN, WORKSPACE_NAME_PATTERN } from "./patterns.ts";

/** Whether Chromium's constraint validation accepts `value` under `pattern` (what a form submit checks). */
function accepts(pattern: string, value: string): boolean {
  const input = document.createElement("input");
  input.pattern = pattern;
  input.value = value;
  return !input.validity.patternMismatch;
}

describe("name input patterns", () => {
  it("should compile in Chromium's v-mode and validate organization names as the API does (1 to 40 characters)", () => {
    equal(accepts(ORGANIZATION_NAME_PATTERN, "acme"), true);
    equal(accepts(ORGANIZATION_NAME_PATTERN, "a-b_c9"), true);
    equal(accepts(ORGANIZATION_NAME_PATTERN, "a".repeat(40)), true);
    equal(accepts(ORGANIZATION_NAME_PATTERN, "a".repeat(41)), false);
    equal(accepts(ORGANIZATION_NAME_PATTERN, "-acme"), false);
    equal(accepts(ORGANIZATION_NAME_PATTERN, "acme corp"), false);
    equal(accepts(ORGANIZATION_NAME_PATTERN, "acme!"), false);
  });

  it("should validate workspace names", () => {
    equal(accepts(WORKSPACE_NAME_PATTERN, "net-prod_1"), true);
    equal(accepts(WORKSPACE_NAME_PATTERN, "_net"), false);
    equal(accepts(WORKSPACE_NAME_PATTERN, "net/prod"), false);
  });
});
