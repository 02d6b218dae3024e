// An e2e scenario file's suite on one harness with one organization, started before its tests and
// stopped after them.
import { suite, type Test } from "uvu";
import { hook, startHarness, type Harness, type HarnessOrganization } from "./harness.ts";

/** A uvu suite whose context holds a started harness `h` and its organization `acme` (an organization named `organization`). */
export function harnessSuite(name: string, organization = "acme"): Test<{ h: Harness; acme: HarnessOrganization }> {
  const test = suite<{ h: Harness; acme: HarnessOrganization }>(name);
  test.before(
    hook(async (ctx) => {
      ctx.h = await startHarness();
      ctx.acme = await ctx.h.organization(organization);
    }),
  );
  test.after(
    hook(async (ctx) => {
      await ctx.h?.stop();
    }),
  );
  return test;
}
