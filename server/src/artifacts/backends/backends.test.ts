// The object backends against the conformance suite (conformance.ts): the local directory always,
// PostgreSQL when STACKSHIP_TEST_PG_URL is set (on a scratch database, where an aborted write is
// also checked to leave no chunk rows).
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TEST_PG_URL_ENV, withDatabase } from "../../../test/support/databases.ts";
import type { Database } from "../../store/db.ts";
import type { ObjectBackend } from "../object-backend.ts";
import { runObjectBackendConformance, patterned } from "./conformance.ts";
import { LocalObjectBackend } from "./local.ts";
import { PostgresObjectBackend } from "./postgres.ts";

const directory = mkdtempSync(join(tmpdir(), "ss-local-backend-"));
runObjectBackendConformance("local", async () => new LocalObjectBackend(directory));

const local = suite("local backend");
local("leaves no temporary file behind after completed and aborted writes", async () => {
  const backend = new LocalObjectBackend(join(directory, "temporaries"));
  await backend.write(
    "a/b.bin",
    (async function* () {
      yield patterned(1000);
    })(),
  );
  await backend
    .write(
      "a/c.bin",
      (async function* () {
        yield patterned(1000);
        throw new Error("cut off");
      })(),
    )
    .catch(() => undefined);
  assert.equal(readdirSync(join(directory, "temporaries", "a")), ["b.bin"]);
});
local.after(() => rmSync(directory, { recursive: true, force: true }));
local.run();

if (process.env[TEST_PG_URL_ENV]) {
  // One scratch database for every PostgreSQL case; each case's backend shares it.
  let database: Database | undefined;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const ready = new Promise<Database>((resolve, reject) => {
    withDatabase("postgres", async (db) => {
      resolve(db);
      await done;
    }).catch(reject);
  });
  const make = async (): Promise<ObjectBackend> => new PostgresObjectBackend((database ??= await ready).knex);
  runObjectBackendConformance("postgres", make);

  const pg = suite("postgres backend");
  pg("an aborted write leaves no chunk rows; a replace and a delete leave none of the old object", async () => {
    const db = await ready;
    const backend = new PostgresObjectBackend(db.knex);
    const rows = async () => Number((await db.knex("artifact_object_chunks").count({ n: "*" }))[0].n);
    const before = await rows();
    await backend
      .write(
        "rows/aborted.bin",
        (async function* () {
          yield patterned(1024 * 1024);
          throw new Error("cut off");
        })(),
      )
      .catch(() => undefined);
    assert.is(await rows(), before, "chunks of an aborted write");
    assert.is(
      Number((await db.knex("artifact_objects").where({ object_key: "rows/aborted.bin" }).count({ n: "*" }))[0].n),
      0,
    );
    await backend.write(
      "rows/replaced.bin",
      (async function* () {
        yield patterned(600 * 1024);
      })(),
    );
    assert.is(await rows(), before + 3, "600 KiB is three 256 KiB rows");
    await backend.write(
      "rows/replaced.bin",
      (async function* () {
        yield patterned(10);
      })(),
    );
    assert.is(await rows(), before + 1, "the replaced object's rows are gone");
    await backend.delete("rows/replaced.bin");
    assert.is(await rows(), before);
  });
  pg("concurrent replaces of one key leave exactly one object and its rows", async () => {
    const db = await ready;
    const backend = new PostgresObjectBackend(db.knex);
    const sizes = [300 * 1024, 700 * 1024, 5, 1024 * 1024];
    await Promise.all(
      sizes.map((size, i) =>
        backend.write(
          "rows/raced.bin",
          (async function* () {
            yield patterned(size, i);
          })(),
        ),
      ),
    );
    const size = await backend.size("rows/raced.bin");
    assert.ok(size !== null && sizes.includes(size));
    const head = await db
      .knex("artifact_objects")
      .where({ object_key: "rows/raced.bin" })
      .first<{ object_id: string } | undefined>("object_id");
    const orphans = await db
      .knex("artifact_object_chunks")
      .whereNotIn("object_id", db.knex("artifact_objects").select("object_id"))
      .count<Array<{ n: number | string }>>({ n: "*" });
    assert.is(Number(orphans[0].n), 0, "no chunks without an object");
    assert.is(
      Number(
        (
          await db
            .knex("artifact_object_chunks")
            .where({ object_id: head?.object_id })
            .count<Array<{ n: number | string }>>({ n: "*" })
        )[0].n,
      ),
      Math.max(1, Math.ceil(size / (256 * 1024))),
    );
  });
  pg.after(() => finished());
  pg.run();
}
