/**
 * `npm run bench sign-in`: a failed sign-in takes as long for an unknown email as for an existing
 * account (the password is checked against a decoy scrypt hash), so timing does not reveal which
 * accounts exist. Interleaves wrong-password sign-ins for an existing account with sign-ins for
 * unknown emails (and successful ones for contrast), on SQLite, with a clock that moves two hours
 * between attempts so the throttle never answers instead. Prints medians and the ratio; asserts
 * nothing (benchmarks never do).
 */
import { withTestServer } from "../../server/test/support/test-server.ts";
import { createUser } from "../../server/test/support/sessions.ts";
import { median } from "./stats.ts";

const REPEATS = Number(process.env.BENCH_SIGN_IN_REPEATS ?? 40);

let now = Date.parse("2026-01-01T00:00:00.000Z");
const clock = () => {
  now += 2 * 60 * 60 * 1000;
  return new Date(now);
};

await withTestServer(
  "sqlite",
  async (server) => {
    const { email, password } = await createUser(server);
    const signIn = async (who: string, pw: string) => {
      const start = process.hrtime.bigint();
      const response = await fetch(`${server.baseUrl}/v1/auth/sessions`, {
        method: "POST",
        headers: { "Content-Type": "application/vnd.api+json" },
        body: JSON.stringify({ data: { type: "sessions", attributes: { email: who, password: pw } } }),
      });
      await response.arrayBuffer();
      return { ms: Number(process.hrtime.bigint() - start) / 1e6, status: response.status };
    };
    const samples: Record<string, number[]> = {
      "existing account, wrong password": [],
      "unknown email": [],
      "existing account, right password": [],
    };
    for (let i = 0; i < 3; i++) await signIn(email, "warm-up");
    for (let i = 0; i < REPEATS; i++) {
      samples["existing account, wrong password"].push((await signIn(email, `wrong ${i}`)).ms);
      samples["unknown email"].push((await signIn(`nobody-${i}@example.com`, `wrong ${i}`)).ms);
      samples["existing account, right password"].push((await signIn(email, password)).ms);
    }
    const baseline = median(samples["existing account, wrong password"]);
    console.log(`[bench sign-in] ${REPEATS} attempts each, medians:`);
    for (const [label, values] of Object.entries(samples)) {
      console.log(
        `  ${label.padEnd(34)} ${median(values).toFixed(1).padStart(7)} ms  (×${(median(values) / baseline).toFixed(2)})`,
      );
    }
  },
  { clock },
);
