import { execFileSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { shellQuote } from "./shell.ts";

// The sandbox scripts quote paths and queries with it: whatever the value, sh reads back exactly it.
test("sh reads each quoted value back as one word, unchanged", () => {
  const values = [
    "",
    "plain",
    "it's",
    "''",
    "a b\tc\nd",
    "$(touch /tmp/x) `id` $HOME ${X}",
    "\\'\\\\",
    "data.p.violations",
  ];
  for (const value of values) {
    const echoed = execFileSync("sh", ["-c", `printf '%s|' ${shellQuote(value)}`], { encoding: "utf8" });
    assert.is(echoed, `${value}|`, JSON.stringify(value));
  }
});

test.run();
