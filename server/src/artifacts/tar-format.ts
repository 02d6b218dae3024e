// The tar header fields the host's two tar readers parse: artifacts/tar-inspection.ts (the upload
// gate) and github/tarball.ts (commit tarballs). Pure functions over bytes. The sandbox's
// unpacker (runner/sandbox-unpack.mjs) keeps a reader of its own: it is plain JavaScript that
// runs inside the sandbox.

/** A tar block: every header and every entry's padded data. */
export const TAR_BLOCK = 512;

/** The NUL-terminated text field of `length` bytes at `start`, as UTF-8. */
export function cString(block: Uint8Array, start: number, length: number): string {
  let end = start;
  while (end < start + length && block[end] !== 0) end += 1;
  return Buffer.from(block.buffer, block.byteOffset + start, end - start).toString("utf8");
}

/**
 * A numeric header field: octal text (space or NUL terminated; empty is 0), or GNU base-256 when
 * the top bit is set. NaN for anything else, a negative base-256 value, or one beyond 2^53.
 */
export function headerNumber(block: Uint8Array, start: number, length: number): number {
  if (block[start] & 0x80) {
    if (block[start] === 0xff) return NaN; // negative
    let value = block[start] & 0x7f;
    for (let i = start + 1; i < start + length; i += 1) value = value * 256 + block[i];
    return Number.isSafeInteger(value) ? value : NaN;
  }
  const text = cString(block, start, length).trim();
  if (text === "") return 0;
  return /^[0-7]+$/.test(text) ? parseInt(text, 8) : NaN;
}

/**
 * The records of a pax extended header (`<length> <key>=<value>\n` each), or undefined when a
 * record's length does not fit the data or does not end at its newline. A record without a key
 * is passed over.
 */
export function paxRecords(data: Buffer): Map<string, string> | undefined {
  const records = new Map<string, string>();
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    if (space < 0) break;
    const length = Number(data.subarray(offset, space).toString("latin1"));
    if (!Number.isInteger(length) || length <= space - offset + 1 || offset + length > data.length) return undefined;
    if (data[offset + length - 1] !== 0x0a) return undefined; // GNU tar refuses a record without its newline too
    const record = data.subarray(space + 1, offset + length - 1).toString("utf8");
    const equals = record.indexOf("=");
    if (equals > 0) records.set(record.slice(0, equals), record.slice(equals + 1));
    offset += length;
  }
  return records;
}
