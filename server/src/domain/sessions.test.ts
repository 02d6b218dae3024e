import { suite } from "uvu";
import * as assert from "uvu/assert";
import { DECOY_PASSWORD_HASH, hashPassword, isStepUpFresh, stepUpFreshUntil, verifyPassword } from "./sessions.ts";

const freshness = suite("step-up freshness");
const stamped = "2026-12-02T10:00:00.000Z";
const after = (ms: number) => new Date(Date.parse(stamped) + ms);

freshness("is fresh at 14:59 and exactly 15:00, stale at 15:00.001 and 15:01", () => {
  assert.ok(isStepUpFresh(stamped, after((14 * 60 + 59) * 1000)));
  assert.ok(isStepUpFresh(stamped, after(15 * 60 * 1000)));
  assert.not.ok(isStepUpFresh(stamped, after(15 * 60 * 1000 + 1)));
  assert.not.ok(isStepUpFresh(stamped, after((15 * 60 + 1) * 1000)));
});

freshness("is never fresh without a step-up, or for a stamp from the future", () => {
  assert.not.ok(isStepUpFresh(null, after(0)));
  assert.not.ok(isStepUpFresh(stamped, after(-1)));
  assert.is(stepUpFreshUntil(null), null);
  assert.is(stepUpFreshUntil(stamped), "2026-12-02T10:15:00.000Z");
});

freshness.run();

const passwords = suite("passwords");

passwords("verify the right password and refuse a wrong one, a malformed hash and the decoy", async () => {
  const hash = await hashPassword("correct horse battery");
  assert.match(hash, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  assert.not.ok(hash.includes("correct"));
  assert.ok(await verifyPassword("correct horse battery", hash));
  assert.not.ok(await verifyPassword("correct horse batterY", hash));
  assert.not.ok(await verifyPassword("", hash));
  assert.not.ok(await verifyPassword("correct horse battery", hash.replace(/^scrypt/, "bcrypt")));
  assert.not.ok(await verifyPassword("correct horse battery", hash.slice(0, -2)));
  assert.not.ok(await verifyPassword("", DECOY_PASSWORD_HASH));
});

passwords(
  "the decoy hash an unknown email is checked against costs what a real one does (same scrypt N, r, p, salt and key lengths)",
  async () => {
    const real = (await hashPassword("any password at all")).split("$");
    const decoy = DECOY_PASSWORD_HASH.split("$");
    assert.equal(decoy.slice(0, 4), real.slice(0, 4));
    assert.is(Buffer.from(decoy[4], "base64url").length, Buffer.from(real[4], "base64url").length);
    assert.is(Buffer.from(decoy[5], "base64url").length, Buffer.from(real[5], "base64url").length);
  },
);

passwords("salts every hash", async () => {
  assert.is.not(await hashPassword("same password!"), await hashPassword("same password!"));
});

passwords.run();
