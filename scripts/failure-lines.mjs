// The tests uvu or @web/test-runner reported as failed, read from its output: each one's file,
// suite and test title, and the first lines of its message. Read by scripts/run-tests.mjs, which
// repeats them next to the closing line so that a log cut short at its beginning still names what
// failed.

// `FAIL  suite  "title"`, or `FAIL  "title"` for a test of uvu's unnamed default suite.
const FAIL = /^\s*FAIL\s{2}(?:(.*?)\s{2})?"(.*)"\s*$/;
// @web/test-runner (--static-logging): ` ❌ outer > inner > title` under a `file.test.ts:` line,
// its message indented below; a failure of the file itself (a load error) has the same mark.
const WTR_FAIL = /^ \u274c (.*?)\s*$/u;
const FILE = /^(?:\S+\/)?\S+\.test\.[cm]?[jt]s:?$/;
const STACK = /^\s+at /;

/** Every failure block in uvu's or @web/test-runner's `output`, in order, with at most `lines` lines of its message. */
export function failedTests(output, lines = 8) {
  const failures = [];
  let file = null;
  let current = null;
  // eslint-disable-next-line no-control-regex -- colour and cursor codes, in case NO_COLOR was not honoured
  for (const raw of output.replace(/\u001b\[[0-9;]*[A-Za-z]/g, "").split(/\r?\n/)) {
    if (FILE.test(raw)) {
      file = raw.replace(/:$/, "");
      current = null;
      continue;
    }
    const fail = FAIL.exec(raw);
    if (fail) {
      current = { file, suite: (fail[1] ?? "").trim(), title: fail[2], message: [] };
      failures.push(current);
      continue;
    }
    const wtr = WTR_FAIL.exec(raw);
    if (wtr) {
      const path = wtr[1].split(" > ");
      current = { file, suite: path.slice(0, -1).join(" > "), title: path.at(-1), message: [], indented: true };
      failures.push(current);
      continue;
    }
    if (!current) continue;
    // @web/test-runner indents a message; the next unindented line (its progress bar) ends it.
    if (current.indented && raw !== "" && !/^\s/.test(raw)) {
      current = null;
      continue;
    }
    if (STACK.test(raw)) {
      current = null;
      continue;
    }
    if (raw.trim() !== "" && current.message.length < lines) current.message.push(raw.trim());
  }
  return failures.map(({ indented: _, ...failure }) => failure);
}
