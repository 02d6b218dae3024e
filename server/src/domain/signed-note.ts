import { createHash, createPublicKey, sign, verify, type KeyObject } from "node:crypto";

/**
 * C2SP signed notes (https://github.com/C2SP/C2SP/blob/main/signed-note.md) with Ed25519 keys,
 * the format Go's golang.org/x/mod/sumdb/note reads: the text, a blank line, then one
 * `— <key name> <base64(key hash ‖ signature)>` line per signature. The key hash is the first
 * four bytes of SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key); the signature covers the text alone.
 */

const ED25519 = 0x01;
const EM_DASH = "\u2014";
// The DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows it.
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** A key name as the format allows it: non-empty, no whitespace, no `+`. */
export function isNoteKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name);
}

/** The raw 32 bytes of an Ed25519 public key. */
export function rawEd25519PublicKey(key: KeyObject): Buffer {
  const der = key.export({ type: "spki", format: "der" });
  if (der.length !== SPKI_PREFIX.length + 32 || !der.subarray(0, SPKI_PREFIX.length).equals(SPKI_PREFIX))
    throw new TypeError("not an Ed25519 public key");
  return der.subarray(SPKI_PREFIX.length);
}

/** An Ed25519 public key from its raw 32 bytes. */
export function ed25519PublicKeyFromRaw(raw: Uint8Array): KeyObject {
  if (raw.length !== 32) throw new TypeError("an Ed25519 public key is 32 bytes");
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: "der", type: "spki" });
}

/** The 4-byte key hash that prefixes each signature. */
export function noteKeyHash(name: string, rawPublicKey: Uint8Array): Buffer {
  return createHash("sha256")
    .update(Buffer.concat([Buffer.from(name, "utf8"), Buffer.from([0x0a, ED25519]), rawPublicKey]))
    .digest()
    .subarray(0, 4);
}

/** The verifier key string note.NewVerifier takes: `<name>+<hash hex>+<base64(0x01 ‖ key)>`. */
export function noteVerifierKey(name: string, rawPublicKey: Uint8Array): string {
  if (!isNoteKeyName(name)) throw new TypeError(`not a note key name: ${JSON.stringify(name)}`);
  return `${name}+${noteKeyHash(name, rawPublicKey).toString("hex")}+${Buffer.concat([Buffer.from([ED25519]), rawPublicKey]).toString("base64")}`;
}

/** A verifier key string parsed; undefined when malformed or not Ed25519. */
export function parseNoteVerifierKey(vkey: string): { name: string; rawPublicKey: Buffer } | undefined {
  // The name has no `+`, the hash is hex; the base64 key may hold `+`.
  const match = /^([^+]+)\+([^+]+)\+(.+)$/su.exec(vkey);
  if (match === null) return undefined;
  const [, name, hash, keyPart] = match;
  if (!isNoteKeyName(name) || !/^[0-9a-f]{8}$/u.test(hash)) return undefined;
  const key = Buffer.from(keyPart, "base64");
  if (key.length !== 33 || key[0] !== ED25519 || key.toString("base64") !== keyPart) return undefined;
  const rawPublicKey = key.subarray(1);
  if (noteKeyHash(name, rawPublicKey).toString("hex") !== hash) return undefined;
  return { name, rawPublicKey };
}

/** Signs `text` (non-empty, ending in a newline) as a note with one Ed25519 signature. */
export function signNote(text: string, name: string, privateKey: KeyObject, rawPublicKey: Uint8Array): string {
  if (!text.endsWith("\n") || text.includes("\n\n"))
    throw new TypeError("a note text ends with a newline and has no blank line");
  if (!isNoteKeyName(name)) throw new TypeError(`not a note key name: ${JSON.stringify(name)}`);
  const signature = sign(null, Buffer.from(text, "utf8"), privateKey);
  return `${text}\n${EM_DASH} ${name} ${Buffer.concat([noteKeyHash(name, rawPublicKey), signature]).toString("base64")}\n`;
}

/**
 * Opens a signed note with one verifier key: the text when a signature by that key verifies,
 * otherwise a reason. Signatures by other keys are ignored (as note.Open does for unknown keys).
 */
export function openNote(note: string, vkey: string): { ok: true; text: string } | { ok: false; reason: string } {
  const key = parseNoteVerifierKey(vkey);
  if (key === undefined) return { ok: false, reason: "the verifier key is malformed" };
  const split = note.lastIndexOf("\n\n");
  if (split < 0 || !note.endsWith("\n"))
    return { ok: false, reason: "not a signed note (no blank line before the signatures)" };
  const text = note.slice(0, split + 1);
  const expectedHash = noteKeyHash(key.name, key.rawPublicKey);
  const publicKey = ed25519PublicKeyFromRaw(key.rawPublicKey);
  for (const line of note.slice(split + 2, -1).split("\n")) {
    const match = /^\u2014 (\S+) ([A-Za-z0-9+/]+=*)$/u.exec(line);
    if (match === null) return { ok: false, reason: `malformed signature line ${JSON.stringify(line)}` };
    const blob = Buffer.from(match[2], "base64");
    if (match[1] !== key.name || blob.length !== 4 + 64 || !blob.subarray(0, 4).equals(expectedHash)) continue;
    if (verify(null, Buffer.from(text, "utf8"), publicKey, blob.subarray(4))) return { ok: true, text };
    return { ok: false, reason: `the signature by ${key.name} does not verify` };
  }
  return { ok: false, reason: `no signature by ${key.name}` };
}
