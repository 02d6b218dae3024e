import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { testEachDatabase } from "../../test/support/databases.ts";
import { migrateDown, migrateLatest } from "./db.ts";
import { createStores } from "./index.ts";
import { at, runInput, seedRunPrerequisites, storesWithRun } from "../../test/support/store-fixtures.ts";

const logs = suite("run logs: windowed reads");

// Multi-unit characters on purpose: '€' is 3 UTF-8 bytes, '😀' is 2 JavaScript string units and 4 bytes.
const pieces = fc
  .array(fc.constantFrom("a", "b", "\n", "€", "😀", "plan: 1 to add\n", ""), { maxLength: 6 })
  .map((parts) => parts.join(""));

testEachDatabase(
  logs,
  "read, readBytes, positions and tail agree with slicing the whole log, for any chunking and any window",
  async (db) => {
    const stores = createStores(db.knex, db.dialect);
    const prerequisites = await seedRunPrerequisites(stores);
    await fc.assert(
      fc.asyncProperty(
        fc.array(pieces, { maxLength: 8 }),
        fc.boolean(),
        fc.nat(80),
        fc.nat(80),
        fc.integer({ min: 1, max: 6 }),
        async (chunks, final, offset, limit, lines) => {
          const run = await stores.runs.create(runInput(prerequisites));
          for (const [i, text] of chunks.entries())
            await stores.logs.append(run.id, "apply", text, final && i === chunks.length - 1, at(i));
          const whole = chunks.join("");
          const complete = final && chunks.length > 0;
          const bytes = Buffer.from(whole, "utf8");

          const window = await stores.logs.read(run.id, "apply", offset, limit);
          const expected = whole.slice(offset, offset + limit);
          assert.is(window.text, expected);
          assert.is(window.nextOffset, Math.min(whole.length, offset) + expected.length);
          assert.is(window.complete, complete && Math.min(whole.length, offset) + expected.length >= whole.length);

          assert.equal(
            await stores.logs.readBytes(run.id, "apply", offset, offset + limit),
            bytes.subarray(offset, offset + limit),
          );

          const position = (await stores.logs.positions(run.id)).apply;
          assert.equal(position, {
            nextSeq: chunks.length,
            nextOffset: whole.length,
            byteLength: bytes.length,
            complete,
          });
          assert.equal(
            await stores.logs.tail(run.id, "apply", lines),
            whole
              .split("\n")
              .filter((line) => line.length > 0)
              .slice(-lines),
          );
        },
      ),
      { numRuns: 40 },
    );
  },
);

testEachDatabase(
  logs,
  "tail of a long log reads back only as far as it needs and still returns whole lines",
  async (db) => {
    const { stores, run } = await storesWithRun(db);
    // 300 chunks, each ending mid-line, so lines straddle chunk (and read batch) boundaries.
    for (let i = 0; i < 300; i++) await stores.logs.append(run.id, "apply", `line ${i} starts here and `, false, at(i));
    await stores.logs.append(run.id, "apply", "ends\n", true, at(300));
    const whole = Array.from({ length: 300 }, (_, i) => `line ${i} starts here and `).join("") + "ends\n";
    assert.equal(await stores.logs.tail(run.id, "apply", 1), [whole.trimEnd()]);
    await stores.logs.append(run.id, "plan", "x\n".repeat(200), true, at(1));
    assert.equal(await stores.logs.tail(run.id, "plan", 3), ["x", "x", "x"]);
    assert.equal(await stores.logs.tail(run.id, "policy", 3), []);
  },
);

testEachDatabase(logs, "the migration backfills the offsets of chunks written before it", async (db) => {
  // The run is made on the latest schema (the repositories write every column of today), then the
  // schema goes back to before 20261203000000_add_log_chunk_offsets, whatever came after it. On
  // SQLite a dropped column rebuilds its table, which the rows referencing it would refuse while
  // foreign keys are enforced (knex runs each migration in a transaction, where the pragma is inert).
  const { stores, run } = await storesWithRun(db);
  if (db.dialect === "sqlite") await db.knex.raw("PRAGMA foreign_keys = OFF");
  while (!(await migrateDown(db)).includes("20261203000000_add_log_chunk_offsets"));
  if (db.dialect === "sqlite") await db.knex.raw("PRAGMA foreign_keys = ON");
  const texts = ["Initializing…\n", "€😀\n", "", "Plan: 1 to add.\n"];
  for (const [seq, text] of texts.entries()) {
    await db
      .knex("run_log_chunks")
      .insert({ run_id: run.id, phase: "plan", seq, text, final: seq === texts.length - 1, created_at: at(seq) });
  }
  await migrateLatest(db);
  const whole = texts.join("");
  assert.equal((await stores.logs.positions(run.id)).plan, {
    nextSeq: 4,
    nextOffset: whole.length,
    byteLength: Buffer.byteLength(whole),
    complete: true,
  });
  assert.is((await stores.logs.read(run.id, "plan", 3, 14)).text, whole.slice(3, 17));
  await stores.logs.append(run.id, "plan", "after\n", false, at(9));
  assert.is((await stores.logs.read(run.id, "plan", 0, 1000)).text, `${whole}after\n`);
});

logs.run();
