import { createHash } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ControlReader, type ControlItem } from "./plan-evidence.ts";

// The launcher's control channel as the runner reads it: JSON lines, and artifacts as a header
// line followed by exactly their bytes (the only way the plan's evidence reaches the runner).
const reader = suite("plan evidence: the control channel's frames");

const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const header = (name: string, bytes: Buffer, overrides: Record<string, unknown> = {}) =>
  Buffer.from(`${JSON.stringify({ type: "artifact", name, size: bytes.length, sha256: sha(bytes), ...overrides })}\n`);

function read(stream: Buffer, chunk: number, max = 1024) {
  const items: ControlItem[] = [];
  const errors: string[] = [];
  const r = new ControlReader(
    max,
    (item) => items.push(item),
    (error) => errors.push(error),
  );
  for (let offset = 0; offset < stream.length; offset += chunk) r.push(stream.subarray(offset, offset + chunk));
  return { items, errors };
}

reader("messages and artifacts (binary, with newlines inside) in order, whatever the chunk boundaries", () => {
  const plan = Buffer.from([0x50, 0x4b, 0x0a, 0x00, 0xff, 0x0a, 0x7b]);
  const json = Buffer.from('{"a":\n1}');
  const stream = Buffer.concat([
    Buffer.from('{"type":"mark","name":"evidence","at":1}\n'),
    header("plan.tfplan", plan),
    plan,
    header("plan.json", json),
    json,
    header("empty", Buffer.alloc(0)),
    Buffer.from('{"type":"exit","code":0}\n'),
  ]);
  for (const chunk of [1, 2, 3, 7, 64, stream.length]) {
    const { items, errors } = read(stream, chunk);
    assert.equal(errors, [], `chunk ${chunk}`);
    assert.equal(
      items.map((i) => (i.kind === "message" ? i.message.type : `${i.name}:${i.bytes.toString("hex")}`)),
      ["mark", `plan.tfplan:${plan.toString("hex")}`, `plan.json:${json.toString("hex")}`, "empty:", "exit"],
      `chunk ${chunk}`,
    );
  }
});

reader(
  "an artifact whose bytes do not have its header's SHA-256, one over the limit, or a malformed header: an error, and nothing after it is read",
  () => {
    const bytes = Buffer.from("real");
    const cases: [string, Buffer][] = [
      ["digest", Buffer.concat([header("plan.json", bytes, { sha256: sha(Buffer.from("forged")) }), bytes])],
      ["limit", Buffer.concat([header("plan.json", Buffer.alloc(2000)), Buffer.alloc(2000)])],
      ["name", Buffer.concat([header("../plan.json", bytes), bytes])],
      ["size", Buffer.concat([header("plan.json", bytes, { size: -1 }), bytes])],
    ];
    for (const [label, frame] of cases) {
      const { items, errors } = read(Buffer.concat([frame, Buffer.from('{"type":"exit","code":0}\n')]), 5);
      assert.is(errors.length, 1, label);
      assert.equal(items, [], label);
    }
  },
);

reader.run();
