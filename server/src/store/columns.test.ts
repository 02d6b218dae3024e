import { suite } from "uvu";
import * as assert from "uvu/assert";
import { rowMapper } from "./columns.ts";
import type { DbBoolean, DbTimestamp } from "./rows.ts";

interface SampleRow {
  id: string;
  run_id: string | null;
  attempt_number: number | string;
  size_bytes: number | string | null;
  serial: DbBoolean;
  legacy_flag?: DbBoolean;
  status: string;
  started_at: DbTimestamp;
  finished_at: DbTimestamp | null;
  target: string;
  json_outputs: string | null;
}

interface Sample {
  id: string;
  runId: string | null;
  attemptNumber: number;
  sizeBytes: number | null;
  serial: boolean;
  legacyFlag: boolean;
  status: "queued" | "done";
  startedAt: string;
  finishedAt: string | null;
  target: { address: string };
  outputs: string[] | null;
}

const toSample = rowMapper<SampleRow, Sample>()(
  "id run_id attempt_number:number size_bytes:number? serial:boolean legacy_flag:boolean status:as started_at:iso finished_at:iso? target:json outputs=json_outputs:json?",
);

const sqliteRow: SampleRow = {
  id: "s-1",
  run_id: null,
  attempt_number: 3,
  size_bytes: null,
  serial: 1,
  status: "queued",
  started_at: "2026-12-03T10:00:00.000Z",
  finished_at: null,
  target: '{"address":"aws_s3_bucket.b"}',
  json_outputs: null,
};

const test = suite("rowMapper");

test("reads each column through its reader, under the camelCase or the named field, in spec order", () => {
  const sample = toSample(sqliteRow);
  assert.equal(sample, {
    id: "s-1",
    runId: null,
    attemptNumber: 3,
    sizeBytes: null,
    serial: true,
    legacyFlag: false,
    status: "queued",
    startedAt: "2026-12-03T10:00:00.000Z",
    finishedAt: null,
    target: { address: "aws_s3_bucket.b" },
    outputs: null,
  });
  assert.equal(Object.keys(sample), [
    "id",
    "runId",
    "attemptNumber",
    "sizeBytes",
    "serial",
    "legacyFlag",
    "status",
    "startedAt",
    "finishedAt",
    "target",
    "outputs",
  ]);
});

test("reads what the PostgreSQL driver returns (bigint text, booleans, Date timestamps)", () => {
  const sample = toSample({
    ...sqliteRow,
    run_id: "run-1",
    attempt_number: "12",
    size_bytes: "4096",
    serial: false,
    legacy_flag: true,
    status: "done",
    started_at: new Date("2026-12-03T10:00:00.000Z"),
    finished_at: new Date("2026-12-03T10:05:00.000Z"),
    json_outputs: '["a","b"]',
  });
  assert.is(sample.runId, "run-1");
  assert.is(sample.attemptNumber, 12);
  assert.is(sample.sizeBytes, 4096);
  assert.is(sample.serial, false);
  assert.is(sample.legacyFlag, true);
  assert.is(sample.status, "done");
  assert.is(sample.startedAt, "2026-12-03T10:00:00.000Z");
  assert.is(sample.finishedAt, "2026-12-03T10:05:00.000Z");
  assert.equal(sample.outputs, ["a", "b"]);
});

test("a column the spec does not name never reaches the record", () => {
  const toId = rowMapper<SampleRow, { id: string }>()("id");
  const withSecret = { ...sqliteRow, password_hash: "canary-7f3a" } as SampleRow;
  assert.equal(toId(withSecret), { id: "s-1" });
  assert.not.ok(JSON.stringify(toSample(withSecret)).includes("canary-7f3a"));
});

test("a count that is not a safe integer still throws, as numberFromRow does", () => {
  assert.throws(() => toSample({ ...sqliteRow, attempt_number: "9007199254740993" }), /not a safe integer/);
});

test("a malformed spec fails when the mapper is declared, not when a row is read", () => {
  const unchecked = rowMapper<{ id: string }, { id: string }>() as unknown as (spec: string) => unknown;
  assert.throws(() => unchecked("id:nope"), /unknown column reader "nope"/);
  assert.throws(() => unchecked("id:number:iso"), /bad column spec/);
});

test("the compiler refuses specs that do not fit the row and the record", () => {
  // Each call below is a compile error (tsc fails on an unused @ts-expect-error); at run time they build.
  interface Row {
    id: string;
    n: number | string | null;
    at: DbTimestamp;
    kind: string;
  }
  const mapper = rowMapper<Row, { id: string; n: number | null; at: string; kind: "a" | "b" }>();
  const specs = [
    mapper("id n:number? at:iso kind:as"),
    // @ts-expect-error a field of the record is missing (kind)
    mapper("id n:number? at:iso"),
    // @ts-expect-error a column the row does not have
    mapper("id n:number? at:iso kind:as nope"),
    // @ts-expect-error n read without its reader is number | string | null, not number | null
    mapper("id n at:iso kind:as"),
    // @ts-expect-error at read as nullable does not fit a non-null field
    mapper("id n:number? at:iso? kind:as"),
    // @ts-expect-error n may be null: the non-null number reader does not take it
    mapper("id n:number at:iso kind:as"),
    // @ts-expect-error `as` only narrows: a number field is not a narrowing of a string column
    rowMapper<Row, { id: number }>()("id:as"),
  ];
  assert.is(specs.length, 7);
});

test("writes a record back to the named columns: ISO timestamps, JSON text, the rest as they are", () => {
  const sample = toSample(sqliteRow);
  const row = toSample.write({ ...sample, finishedAt: "2026-12-03T10:05:00.000Z", outputs: ["a"] });
  assert.equal(row, {
    id: "s-1",
    run_id: null,
    attempt_number: 3,
    size_bytes: null,
    serial: true,
    legacy_flag: false,
    status: "queued",
    started_at: "2026-12-03T10:00:00.000Z",
    finished_at: "2026-12-03T10:05:00.000Z",
    target: '{"address":"aws_s3_bucket.b"}',
    json_outputs: '["a"]',
  });
  assert.equal(toSample(row), { ...sample, finishedAt: "2026-12-03T10:05:00.000Z", outputs: ["a"] });
});

test("a written timestamp not in toISOString() form throws, as isoForWrite does", () => {
  const sample = toSample(sqliteRow);
  assert.throws(() => toSample.write({ ...sample, startedAt: "2026-12-03 10:00:00" }), /toISOString\(\) form/);
});

test("the compiler refuses write where a field's value does not fit its column", () => {
  interface Row {
    id: string;
    note: string;
    at: DbTimestamp | null;
  }
  // Reading `note` into a nullable field is fine; writing null into the non-null column is not.
  const loose = rowMapper<Row, { id: string; note: string | null; at: string | null }>()("id note at:iso?");
  const strict = rowMapper<Row, { id: string; note: string; at: string | null }>()("id note at:iso?");
  const record = { id: "x", note: "n", at: null };
  assert.equal(strict.write(record), { id: "x", note: "n", at: null });
  // note may be null: `write` is then no function but names the field (this line compiles only so).
  const refused: typeof loose.write extends (record: never) => unknown ? "callable" : "refused" = "refused";
  assert.is(refused, "refused");
  assert.equal(loose({ id: "x", note: "n", at: null }), record, "it still reads");
});

test.run();
