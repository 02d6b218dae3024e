// Preloaded into every uvu run by scripts/run-tests.mjs (`uvu -r tsx -r <absolute path of this file>`):
// a per-test timeout, since uvu has none and one hung test would hold the whole run until CI's
// limit. Every test and hook registered through `suite()` (or uvu's default `test`) races a timer;
// past it the test fails naming its suite and title, the suite goes on with the next test, and the
// process exits once uvu has printed its summary (the hung work would otherwise keep it alive).
// The limit is STACKSHIP_TEST_TIMEOUT_SECONDS (default 600); a suite that needs longer says so in
// its state: `suite("…", { timeoutSeconds: 900 })`. It also times each test file (timeFiles below).
"use strict";
const uvu = require("uvu");

const DEFAULT_SECONDS = Number(process.env.STACKSHIP_TEST_TIMEOUT_SECONDS || 600);
let timedOut = 0;

function limitOf(state) {
  const own = state && typeof state.timeoutSeconds === "number" ? state.timeoutSeconds : undefined;
  return own ?? DEFAULT_SECONDS;
}

/** `handler` raced against the suite's limit; a timeout rejects with the suite's and test's names. */
function timed(suiteName, what, state, handler) {
  if (typeof handler !== "function") return handler;
  return function (...args) {
    const seconds = limitOf(state);
    let timer;
    const limit = new Promise((_, reject) => {
      timer = setTimeout(() => {
        timedOut += 1;
        const message = `timed out after ${seconds} s: ${suiteName ? `"${suiteName}" › ` : ""}${what} (STACKSHIP_TEST_TIMEOUT_SECONDS, or the suite's { timeoutSeconds }); it may still be running`;
        // Said at once as well: uvu swallows a failing hook's error, and a reader of a stuck run wants it now.
        process.stdout.write(`\n[test] ${message}\n`);
        reject(new Error(message));
      }, seconds * 1000);
      timer.unref?.();
    });
    return Promise.race([Promise.resolve().then(() => handler.apply(this, args)), limit]).finally(() =>
      clearTimeout(timer),
    );
  };
}

function wrapSuite(test, suiteName, state) {
  const wrapped = (name, handler) => test(name, timed(suiteName, `"${name}"`, state, handler));
  wrapped.only = (name, handler) => test.only(name, timed(suiteName, `"${name}"`, state, handler));
  wrapped.skip = (...args) => test.skip(...args);
  wrapped.run = () => test.run();
  wrapped.before = (handler) => test.before(timed(suiteName, "its before hook", state, handler));
  wrapped.before.each = (handler) => test.before.each(timed(suiteName, "its before.each hook", state, handler));
  wrapped.after = (handler) => test.after(timed(suiteName, "its after hook", state, handler));
  wrapped.after.each = (handler) => test.after.each(timed(suiteName, "its after.each hook", state, handler));
  return wrapped;
}

const originalSuite = uvu.suite;
uvu.suite = (name = "", state = {}) => wrapSuite(originalSuite(name, state), name, state);
uvu.test = wrapSuite(uvu.test, "", {});

/**
 * Each test file's run time (the sum of its suites' runs, hooks included), printed after uvu's
 * summary as one `[test-duration] <seconds> <file>` line per file: scripts/run-tests.mjs reads
 * them to name the slowest files and to balance its shards.
 */
function timeFiles() {
  const seconds = new Map();
  for (const group of globalThis.UVU_QUEUE ?? []) {
    const file = group[0];
    if (typeof file !== "string") continue;
    seconds.set(file, 0);
    for (let i = 1; i < group.length; i++) {
      const run = group[i];
      group[i] = async () => {
        const started = process.hrtime.bigint();
        try {
          return await run();
        } finally {
          seconds.set(file, seconds.get(file) + Number(process.hrtime.bigint() - started) / 1e9);
        }
      };
    }
  }
  return () => {
    for (const [file, spent] of seconds) process.stdout.write(`[test-duration] ${spent.toFixed(1)} ${file}\n`);
  };
}

const originalExec = uvu.exec;
uvu.exec = async (...args) => {
  const reportDurations = timeFiles();
  const result = await originalExec(...args);
  reportDurations();
  if (timedOut > 0) {
    process.stdout.write(`\n[test] ${timedOut} test(s) or hook(s) timed out (named above); ending the process\n`);
    // uvu sets the exit code from its failures; the timed-out work may hold handles open.
    setTimeout(() => process.exit(process.exitCode || 1), 100);
  }
  return result;
};
