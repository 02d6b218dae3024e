// The `[skip] {…}` lines a test suite printed (server/test/support/skips.ts writes them): each
// skipped test's title, reason and, when CI may skip it too, why. Read by scripts/run-tests.mjs.

/** Every `[skip]` line in `output`, in order; an unreadable one is kept with a reason saying so. */
export function namedSkips(output) {
  const skips = [];
  // A line may follow uvu's progress dots on the same terminal line: match anywhere, up to the line end.
  for (const match of output.matchAll(/\[skip\] (\{[^\n]*?\})(?=\r?\n|$)/g)) {
    try {
      skips.push(JSON.parse(match[1]));
    } catch {
      skips.push({ title: match[1], reason: "unreadable [skip] line" });
    }
  }
  return skips;
}
