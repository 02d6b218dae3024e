import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ID_PREFIXES, idPattern, isId, newId, type IdKind } from "./ids.ts";

const KINDS = Object.keys(ID_PREFIXES) as IdKind[];

const ids = suite("ids");

ids("uses the agreed prefixes", () => {
  assert.equal(Object.values(ID_PREFIXES).sort(), [
    "at",
    "atst",
    "att",
    "cv",
    "evt",
    "fp",
    "grt",
    "job",
    "mbr",
    "org",
    "pfnd",
    "povr",
    "prj",
    "prn",
    "pset",
    "psv",
    "rev",
    "run",
    "sec",
    "ses",
    "snap",
    "usr",
    "var",
    "ws",
  ]);
  // No prefix may be a prefix of another followed by a dash, or ids would be ambiguous.
  for (const a of Object.values(ID_PREFIXES))
    for (const b of Object.values(ID_PREFIXES)) if (a !== b) assert.not.ok(b.startsWith(`${a}-`));
});

ids("newId makes prefix-dash-16 lowercase alphanumerics for every kind", () => {
  for (const kind of KINDS) {
    const id = newId(kind);
    assert.match(id, new RegExp(`^${ID_PREFIXES[kind]}-[0-9a-z]{16}$`));
    assert.ok(isId(kind, id));
  }
});

ids("newId does not repeat and uses the whole alphabet", () => {
  const seen = new Set<string>();
  const characters = new Set<string>();
  for (let index = 0; index < 5000; index += 1) {
    const id = newId("run");
    seen.add(id);
    for (const character of id.slice(4)) characters.add(character);
  }
  assert.is(seen.size, 5000);
  assert.is(characters.size, 36);
});

ids("isId is strict", () => {
  const good = "run-0123456789abcdef";
  assert.ok(isId("run", good));
  for (const bad of [
    "run-0123456789abcde",
    "run-0123456789abcdefg",
    "run-0123456789ABCDEF",
    "run_0123456789abcdef",
    "ws-0123456789abcdef",
    ` ${good}`,
    `${good}\n`,
    `${good} `,
    "run-0123456789abcde-",
    "",
  ]) {
    assert.not.ok(isId("run", bad), bad);
  }
  assert.not.ok(isId("run", 42));
  assert.not.ok(isId("run", undefined));
  assert.not.ok(isId("workspace", good));
  assert.ok(isId("workspace", "ws-0123456789abcdef"));
  assert.ok(idPattern("inputSnapshot").test("snap-0123456789abcdef"));
});

ids.run();
