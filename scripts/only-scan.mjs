// Finds committed `.only(` calls in test files (uvu's `suite.only`, `test.only`, mocha's
// `describe.only` / `it.only`): one left in makes a runner skip every other test in its file, so
// scripts/run-tests.mjs counts each as a failure and names the file and line.
import { readFileSync } from "node:fs";
import { join } from "node:path";

// `<name>.only(` or `<name>.only  (`, where <name> is any identifier (uvu suites are variables).
const ONLY_CALL = /(?<![\w$.])([A-Za-z_$][\w$]*)\s*\.\s*only\s*\(/g;

/** Each `.only(` call in `text` outside comments, with its 1-based line and the line's text. */
export function findOnlyCalls(text) {
  const found = [];
  let inBlockComment = false;
  text.split("\n").forEach((raw, index) => {
    let line = raw;
    if (inBlockComment) {
      const end = line.indexOf("*/");
      if (end === -1) return;
      line = " ".repeat(end + 2) + line.slice(end + 2);
      inBlockComment = false;
    }
    line = line.replace(/\/\*.*?\*\//g, (m) => " ".repeat(m.length));
    const open = line.indexOf("/*");
    if (open !== -1) {
      inBlockComment = true;
      line = line.slice(0, open);
    }
    const comment = line.indexOf("//");
    if (comment !== -1 && !/["'`]/.test(line.slice(0, comment))) line = line.slice(0, comment);
    for (const match of line.matchAll(ONLY_CALL))
      found.push({ line: index + 1, column: match.index + 1, call: `${match[1]}.only(`, text: raw.trim() });
  });
  return found;
}

/** `file:line: <call>` for every `.only(` in the given files (paths relative to `root`). */
export function scanForOnly(root, files) {
  const problems = [];
  for (const file of files) {
    for (const hit of findOnlyCalls(readFileSync(join(root, file), "utf8"))) problems.push({ file, ...hit });
  }
  return problems;
}
