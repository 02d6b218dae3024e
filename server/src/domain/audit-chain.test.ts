import { createPrivateKey, createPublicKey } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  auditEventDigest,
  checkpointOrigin,
  checkpointText,
  GENESIS_DIGEST,
  verifyAuditChain,
  type AuditCheckpoint,
  type ChainedAuditEvent,
} from "./audit-chain.ts";
import { canonicalize } from "./canonical-json.ts";
import { noteVerifierKey, openNote, parseNoteVerifierKey, rawEd25519PublicKey, signNote } from "./signed-note.ts";

const note = suite("signed notes (C2SP, golang.org/x/mod/sumdb/note)");

// The example of golang.org/x/mod/sumdb/note's documentation.
const SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const SIGNED = `${TEXT}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

function exampleKey() {
  const seed = Buffer.from(SKEY.split("+").slice(4).join("+"), "base64").subarray(1);
  // PKCS#8 of an Ed25519 seed: a fixed prefix, then the 32 bytes.
  const privateKey = createPrivateKey({
    key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]),
    format: "der",
    type: "pkcs8",
  });
  return { privateKey, raw: rawEd25519PublicKey(createPublicKey(privateKey)) };
}

note("the documented example: same verifier key, byte-identical signed note, and it opens", () => {
  const { privateKey, raw } = exampleKey();
  assert.is(noteVerifierKey("PeterNeumann", raw), VKEY);
  assert.is(signNote(TEXT, "PeterNeumann", privateKey, raw), SIGNED);
  assert.equal(openNote(SIGNED, VKEY), { ok: true, text: TEXT });
});

note("a flipped byte in the text or the signature, or a malformed key, is refused", () => {
  assert.is(openNote(SIGNED.replace("answer", "Answer"), VKEY).ok, false);
  assert.is(openNote(SIGNED.replace("x08go", "x08gp"), VKEY).ok, false);
  assert.is(parseNoteVerifierKey(VKEY.replace("c74f20a3", "c74f20a4")), undefined);
  assert.is(openNote(SIGNED, "PeterNeumann+c74f20a3").ok, false);
});

const chain = suite("audit chain verifier");

function build(count: number): ChainedAuditEvent[] {
  const events: ChainedAuditEvent[] = [];
  let previous = GENESIS_DIGEST;
  for (let i = 0; i < count; i++) {
    const base = {
      chain: "org-aaaaaaaaaaaaaaaa",
      sequence: i,
      previousDigest: previous,
      id: `aud-${String(i).padStart(16, "0")}`,
      organizationId: "org-aaaaaaaaaaaaaaaa",
      actorId: null,
      action: "x.y",
      targetType: "things",
      targetId: `t${i}`,
      reason: null,
      data: { i, nested: { b: 1, a: [true, null, "é"] } },
      createdAt: new Date(Date.UTC(2026, 11, 4, 0, 0, i)).toISOString(),
    };
    const digest = auditEventDigest(base);
    events.push({ ...base, digest });
    previous = digest;
  }
  return events;
}

function checkpointOver(events: ChainedAuditEvent[], size: number): AuditCheckpoint {
  const { privateKey, raw } = exampleKey();
  const head = events[size - 1].digest;
  return {
    chain: "org-aaaaaaaaaaaaaaaa",
    treeSize: size,
    headDigest: head,
    keyName: "PeterNeumann",
    note: signNote(
      checkpointText(checkpointOrigin("PeterNeumann", "org-aaaaaaaaaaaaaaaa"), size, head),
      "PeterNeumann",
      privateKey,
      raw,
    ),
    createdAt: "2026-12-04T00:00:00.000Z",
  };
}

const verify = (events: ChainedAuditEvent[], checkpoints: AuditCheckpoint[] = [], extra = {}) =>
  verifyAuditChain({ chain: "org-aaaaaaaaaaaaaaaa", events, checkpoints, verifierKey: VKEY, ...extra });

chain("the digest is SHA-256 over the JCS encoding, key order independent", () => {
  const [event] = build(1);
  const shuffled = { ...event, data: { nested: { a: [true, null, "é"], b: 1 }, i: 0 } };
  assert.is(auditEventDigest(shuffled), event.digest);
  assert.is(canonicalize({ b: 1, a: "\u2028" }), '{"a":"\u2028","b":1}');
});

chain("an intact chain with checkpoints verifies; each kind of tampering names its first bad position", () => {
  const events = build(10);
  const checkpoints = [checkpointOver(events, 4), checkpointOver(events, 8)];
  assert.equal(verify(events, checkpoints), {
    chain: "org-aaaaaaaaaaaaaaaa",
    verifiedEvents: 10,
    verifiedCheckpoints: 2,
    problem: null,
  });
  assert.is(verify([...events.slice(0, 5), ...events.slice(6)], checkpoints).problem?.position, 5);
  assert.is(
    verify(
      events.map((e, i) => (i === 2 ? { ...e, reason: "edited" } : e)),
      checkpoints,
    ).problem?.position,
    2,
  );
  assert.is(
    verify([...events.slice(0, 6), events[7], events[6], ...events.slice(8)], checkpoints).problem?.position,
    6,
  );
  assert.match(verify(events.slice(0, 6), checkpoints).problem?.message ?? "", /covers 8 events, only 6 are present/);
  assert.is(
    verify(events.slice(0, 9), checkpoints, { head: { size: 10, digest: events[9].digest } }).problem?.position,
    9,
  );
  const forged = { ...checkpoints[1], note: checkpoints[1].note.replace("\n8\n", "\n9\n") };
  assert.match(verify(events, [checkpoints[0], forged]).problem?.message ?? "", /does not verify/);
  assert.equal(verify(events.slice(8), checkpoints, { fromCheckpoint: 8 }).problem, null);
  // From a checkpoint over a whole export: what it vouches for is skipped, what follows is checked.
  const editedEarly = events.map((e, i) => (i === 2 ? { ...e, reason: "edited" } : e));
  assert.equal(verify(editedEarly, checkpoints, { fromCheckpoint: 8 }).problem, null);
  assert.is(
    verify(
      editedEarly.map((e, i) => (i === 9 ? { ...e, targetId: "x" } : e)),
      checkpoints,
      { fromCheckpoint: 8 },
    ).problem?.position,
    9,
  );
  assert.match(verify(events, checkpoints, { fromCheckpoint: 5 }).problem?.message ?? "", /no checkpoint of size 5/);
});

note.run();
chain.run();
