import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cString, headerNumber, paxRecords } from "./tar-format.ts";

const fields = suite("tar header fields");

const field = (bytes: number[] | string, length = 12): Buffer => {
  const out = Buffer.alloc(length);
  if (typeof bytes === "string") out.write(bytes, "latin1");
  else Buffer.from(bytes).copy(out);
  return out;
};

fields("octal text, space or NUL terminated, empty as 0", () => {
  assert.is(headerNumber(field("0000644 \0"), 0, 12), 0o644);
  assert.is(headerNumber(field("00000001750\0"), 0, 12), 1000);
  assert.is(headerNumber(field(""), 0, 12), 0);
  assert.is(headerNumber(field("   "), 0, 12), 0);
});

fields("octal text that is not octal is NaN", () => {
  assert.ok(Number.isNaN(headerNumber(field("0000648\0"), 0, 12)));
  assert.ok(Number.isNaN(headerNumber(field("12x\0"), 0, 12)));
  assert.ok(Number.isNaN(headerNumber(field("-1\0"), 0, 12)));
});

fields("GNU base-256: read up to 2^53 - 1, NaN beyond it and when negative", () => {
  assert.is(headerNumber(field([0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x00]), 0, 12), 4096);
  const largest = [0x80, 0, 0, 0, 0x00, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]; // 2^53 - 1
  assert.is(headerNumber(field(largest), 0, 12), Number.MAX_SAFE_INTEGER);
  const beyond = [0x80, 0, 0, 0, 0x00, 0x20, 0, 0, 0, 0, 0, 0]; // 2^53
  assert.ok(Number.isNaN(headerNumber(field(beyond), 0, 12)));
  assert.ok(
    Number.isNaN(headerNumber(field([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]), 0, 12)),
  );
});

fields("a text field ends at its first NUL or at its length, and is read as UTF-8", () => {
  const block = Buffer.alloc(20);
  block.write("née\0rest", 2, "utf8");
  assert.is(cString(block, 2, 10), "née");
  assert.is(cString(Buffer.from("abcdef"), 1, 3), "bcd");
});

const pax = suite("pax records");

const record = (text: string) => {
  let length = Buffer.byteLength(text) + 3;
  while (String(length).length + 2 + Buffer.byteLength(text) !== length) length += 1;
  return `${length} ${text}\n`;
};

pax("records by key; a record without a key is passed over", () => {
  const data = Buffer.from(record("path=a/b/ünï") + record("=orphan") + record("linkpath=c"));
  assert.equal(
    [...paxRecords(data)!],
    [
      ["path", "a/b/ünï"],
      ["linkpath", "c"],
    ],
  );
});

pax("a length that overruns the data, or does not end the record at its newline, makes the header malformed", () => {
  const good = record("path=x");
  assert.equal([...paxRecords(Buffer.from(good))!], [["path", "x"]]);
  assert.is(paxRecords(Buffer.from(good + "12 path=y\n")), undefined, "overruns");
  assert.is(paxRecords(Buffer.from(`2 path=x\n`)), undefined);
  assert.is(paxRecords(Buffer.from(`8 path=x\n`)), undefined);
  assert.ok(paxRecords(Buffer.from(`9 path=x\n`)));
  assert.is(paxRecords(Buffer.from(`x path=x\n`)), undefined);
});

fields.run();
pax.run();
