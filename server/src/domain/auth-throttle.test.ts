import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ACCOUNT_THROTTLE, ADDRESS_THROTTLE, delayAfterFailures, retryAfterSeconds } from "./auth-throttle.ts";

const throttle = suite("auth throttle policy");

throttle("an account: 4 failures are free, the 5th blocks 1 s, then the delay doubles up to 15 minutes", () => {
  assert.equal(
    [0, 1, 2, 3, 4].map((f) => delayAfterFailures(ACCOUNT_THROTTLE, f)),
    [0, 0, 0, 0, 0],
  );
  assert.equal(
    [5, 6, 7, 8].map((f) => delayAfterFailures(ACCOUNT_THROTTLE, f)),
    [1000, 2000, 4000, 8000],
  );
  // 2^9 s = 512 s is below the cap, 2^10 s = 1024 s is above it.
  assert.is(delayAfterFailures(ACCOUNT_THROTTLE, 14), 512_000);
  assert.is(delayAfterFailures(ACCOUNT_THROTTLE, 15), 900_000);
  assert.is(delayAfterFailures(ACCOUNT_THROTTLE, 10_000), 900_000);
});

throttle("an address: 19 failures are free, the 20th blocks 1 s", () => {
  assert.is(delayAfterFailures(ADDRESS_THROTTLE, 19), 0);
  assert.is(delayAfterFailures(ADDRESS_THROTTLE, 20), 1000);
  assert.is(delayAfterFailures(ADDRESS_THROTTLE, 21), 2000);
});

throttle("Retry-After rounds up to whole seconds and is never 0", () => {
  assert.is(retryAfterSeconds(10_000, 9_999), 1);
  assert.is(retryAfterSeconds(10_000, 9_000), 1);
  assert.is(retryAfterSeconds(10_000, 8_999), 2);
  assert.is(retryAfterSeconds(10_000, 10_000), 1);
});

throttle.run();
