import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openDatabase, SQLITE_STATEMENT_CACHE_SIZE } from "./db.ts";

// SQLite statements are prepared once per SQL text and reused (db.ts cacheStatements).
const statements = suite("SQLite prepared statement reuse");

statements("one statement shape with different bindings, inside and outside a transaction, gives each call its own answer", async () => {
  const db = await openDatabase("sqlite::memory:");
  try {
    await db.knex.schema.createTable("t", (table) => {
      table.integer("id").primary();
      table.text("v");
    });
    for (let id = 1; id <= 5; id++) await db.knex("t").insert({ id, v: `v${id}` });
    for (let id = 1; id <= 5; id++) assert.equal(await db.knex("t").where({ id }).first(), { id, v: `v${id}` });
    await db.knex.transaction(async (trx) => {
      await trx("t").where({ id: 2 }).update({ v: "changed" });
      assert.equal(await trx("t").where({ id: 2 }).first(), { id: 2, v: "changed" });
      assert.equal(await trx("t").where({ id: 3 }).first(), { id: 3, v: "v3" });
    });
    await db.knex
      .transaction(async (trx) => {
        await trx("t").where({ id: 4 }).update({ v: "rolled back" });
        throw new Error("roll back");
      })
      .catch(() => {});
    assert.equal(await db.knex("t").where({ id: 4 }).first(), { id: 4, v: "v4" });
    // A failed statement leaves the reused one usable.
    await db
      .knex("t")
      .insert({ id: 1, v: "duplicate" })
      .then(
        () => assert.unreachable("a duplicate primary key is refused"),
        () => {},
      );
    await db.knex("t").insert({ id: 6, v: "v6" });
    assert.is((await db.knex("t").count({ n: "*" }).first())?.n, 6);
  } finally {
    await db.close();
  }
});

statements("a statement prepared before a schema change sees the new schema", async () => {
  const db = await openDatabase("sqlite::memory:");
  try {
    await db.knex.schema.createTable("t", (table) => table.integer("id"));
    await db.knex("t").insert({ id: 1 });
    assert.equal(await db.knex("t").select("*"), [{ id: 1 }]);
    await db.knex.schema.alterTable("t", (table) => table.text("added").defaultTo("x"));
    assert.equal(await db.knex("t").select("*"), [{ id: 1, added: "x" }]);
  } finally {
    await db.close();
  }
});

statements(`more distinct statements than the cache holds (${SQLITE_STATEMENT_CACHE_SIZE}) still run, the evicted ones again too`, async () => {
  const db = await openDatabase("sqlite::memory:");
  try {
    const shapes = SQLITE_STATEMENT_CACHE_SIZE + 10;
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < shapes; i++) {
        const [row] = (await db.knex.raw(`select ? + ${i} as n`, [round])) as Array<{ n: number }>;
        assert.is(row.n, round + i);
      }
    }
  } finally {
    await db.close();
  }
});

statements.run();
