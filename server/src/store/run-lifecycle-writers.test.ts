import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { REPO_ROOT } from "../config.ts";

/**
 * A run's lifecycle columns (status, status_reason, plan_status, apply_status, policy_outcome,
 * approval_expires_at, cancel_requested_at, finished_at) change only through
 * commands/run-transitions.ts, which calls RunRepository.update, the one method that updates the
 * runs table. This scans every hand-written source file under server/src (tests and migrations
 * aside) for any other writer and names it.
 */
const writers = suite("run lifecycle writers");

const SRC = join(REPO_ROOT, "server", "src");
/** The one command that may call the repository's writer. */
const COMMAND = "commands/run-transitions.ts";
/** The repository whose `update` is that writer. */
const REPOSITORY = "store/run-repository.ts";
const LIFECYCLE_COLUMNS = [
  "status",
  "status_reason",
  "plan_status",
  "apply_status",
  "policy_outcome",
  "approval_expires_at",
  "cancel_requested_at",
  "finished_at",
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "migrations" ? [] : sources(path);
    return /\.(ts|mjs|js)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [path] : [];
  });
}

/** The statement around `index`: from the previous `;` (or `{`/`}`) to the next `;`. */
function statementAt(text: string, index: number): string {
  const start =
    Math.max(text.lastIndexOf(";", index), text.lastIndexOf("{\n", index), text.lastIndexOf("}\n", index)) + 1;
  const end = text.indexOf(";", index);
  return text.slice(start, end === -1 ? text.length : end);
}

/** The ways `text` (the file at `path`, relative to server/src) writes lifecycle columns, as messages. */
export function lifecycleWrites(path: string, text: string): string[] {
  const found: string[] = [];
  // Knex on the runs table: a write in the statement that names the table.
  for (const match of text.matchAll(/\(\s*['"`]runs['"`]\s*\)/g)) {
    const statement = statementAt(text, match.index);
    if (
      /\.(update|insert|upsert|merge|del|delete|increment|decrement)\s*\(/.test(statement) &&
      !(path === REPOSITORY && /\.(insert|update)\s*\(\s*row\s*\)/.test(statement))
    ) {
      found.push(`writes the runs table with knex: ${statement.trim().slice(0, 120)}`);
    }
  }
  // Raw SQL on the runs table, or setting a lifecycle column of any table by name.
  if (/\bupdate\s+["`]?runs["`]?\s+set\b/i.test(text) || /\binsert\s+into\s+["`]?runs\b/i.test(text))
    found.push("writes the runs table in raw SQL");
  const raw = new RegExp(
    `\\bset\\s[^;\`]*\\b(${LIFECYCLE_COLUMNS.filter((c) => c !== "status" && c !== "finished_at").join("|")})\\s*=`,
    "i",
  );
  if (raw.test(text)) found.push("sets a run lifecycle column in raw SQL");
  // The repository's writer, called from anywhere but the one command.
  if (path !== COMMAND && path !== REPOSITORY && /\bruns\s*\??\.\s*update\s*\(/.test(text))
    found.push("calls RunRepository.update (only commands/run-transitions.ts may)");
  return found;
}

writers(
  "no file under server/src but the run-transitions command (through RunRepository.update) writes a run lifecycle column",
  () => {
    const offenders: string[] = [];
    for (const file of sources(SRC)) {
      const path = relative(SRC, file).split("\\").join("/");
      for (const message of lifecycleWrites(path, readFileSync(file, "utf8"))) offenders.push(`${path}: ${message}`);
    }
    assert.equal(offenders, [], `other writers of run lifecycle columns:\n${offenders.join("\n")}`);
  },
);

writers("the repository updates the runs table in exactly one method, and the command is its only caller", () => {
  const repository = readFileSync(join(SRC, REPOSITORY), "utf8");
  assert.is([...repository.matchAll(/\.update\s*\(/g)].length, 1);
  assert.match(readFileSync(join(SRC, COMMAND), "utf8"), /stores\.runs\.update\(/);
});

writers("the scan catches each kind of bypass", () => {
  const bypasses: Array<[string, string]> = [
    [
      "runner/x.ts",
      'await services.stores.runs.update(run.id, "applying", { applyStatus: "running", updatedAt: now });',
    ],
    ["store/x.ts", "await this.db<RunRow>('runs')\n  .where({ id })\n  .update({ status: 'errored' });"],
    ["store/x.ts", "await db('runs').insert({ id, status: 'pending' });"],
    ["store/run-repository.ts", "await this.db('runs').where({ id }).update({ apply_status: 'running' });"],
    ["commands/x.ts", "await db.raw(`UPDATE runs SET finished_at = ? WHERE id = ?`, [now, id]);"],
    ["commands/x.ts", 'await db.raw("update run_copies set approval_expires_at = null");'],
  ];
  for (const [path, text] of bypasses) assert.ok(lifecycleWrites(path, text).length > 0, text);
  assert.equal(
    lifecycleWrites("store/x.ts", "const row = await this.db<RunRow>('runs').where({ id }).first();"),
    [],
    "a read is not a write",
  );
});

writers.run();
