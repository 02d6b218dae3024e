// The tests uvu reported as failed, read from its output: each one's file, suite and test title,
// and the first lines of its message. Read by scripts/run-tests.mjs, which repeats them next to
// the closing line so that a log cut short at its beginning still names what failed.

// `FAIL  suite  "title"`, or `FAIL  "title"` for a test of uvu's unnamed default suite.
const FAIL = /^\s*FAIL\s{2}(?:(.*?)\s{2})?"(.*)"\s*$/;
const FILE = /^(?:\S+\/)?\S+\.test\.[cm]?[jt]s$/;
const STACK = /^\s+at /;

/** Every `FAIL` block in uvu's `output`, in order, with at most `lines` lines of its message. */
export function failedTests(output, lines = 8) {
  const failures = [];
  let file = null;
  let current = null;
  // eslint-disable-next-line no-control-regex -- colour codes, in case NO_COLOR was not honoured
  for (const raw of output.replace(/\u001b\[[0-9;]*m/g, "").split(/\r?\n/)) {
    if (FILE.test(raw)) {
      file = raw;
      current = null;
      continue;
    }
    const fail = FAIL.exec(raw);
    if (fail) {
      current = { file, suite: (fail[1] ?? "").trim(), title: fail[2], message: [] };
      failures.push(current);
      continue;
    }
    if (!current) continue;
    if (STACK.test(raw)) {
      current = null;
      continue;
    }
    if (raw.trim() !== "" && current.message.length < lines) current.message.push(raw.trim());
  }
  return failures;
}
