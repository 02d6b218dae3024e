import { test } from "uvu";
import * as assert from "uvu/assert";
import { namedSkips } from "./skip-lines.mjs";

test("namedSkips reads every [skip] line, also after uvu's progress dots, and keeps an unreadable one", () => {
  const output = [
    "suite name • • ",
    '[skip] {"title":"a [postgres]","reason":"no URL"}',
    '\u001b[90m• \u001b[39m[skip] {"title":"b","reason":"no weed","allowedInCi":"never built in CI"}',
    "[skip] {not json}",
    "Total: 3",
  ].join("\n");
  assert.equal(namedSkips(output), [
    { title: "a [postgres]", reason: "no URL" },
    { title: "b", reason: "no weed", allowedInCi: "never built in CI" },
    { title: "{not json}", reason: "unreadable [skip] line" },
  ]);
  assert.equal(namedSkips("nothing skipped\nTotal: 1\n"), []);
});

test.run();
