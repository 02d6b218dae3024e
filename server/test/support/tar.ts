// Hand-made tar archives, for uploads no honest `tar -c` would write (traversal, absolute paths,
// escaping links, devices) and for exact sizes.

/** One archive entry; `type` is the ustar typeflag ("0" file, "1" hard link, "2" symlink, "5" directory, …). */
export interface TarEntry {
  name: string;
  type?: string;
  linkname?: string;
  data?: Uint8Array | string;
  /** The size field, when it should differ from the data's length. */
  size?: number;
}

function field(block: Buffer, offset: number, length: number, value: string): void {
  block.write(value, offset, length, "utf8");
}

function octal(block: Buffer, offset: number, length: number, value: number): void {
  field(block, offset, length, value.toString(8).padStart(length - 1, "0") + "\0");
}

/** A POSIX ustar header block with a valid checksum. */
export function tarHeader(entry: TarEntry, dataLength: number): Buffer {
  const block = Buffer.alloc(512);
  field(block, 0, 100, entry.name);
  octal(block, 100, 8, entry.type === "5" ? 0o755 : 0o644);
  octal(block, 108, 8, 0);
  octal(block, 116, 8, 0);
  octal(block, 124, 12, entry.size ?? dataLength);
  octal(block, 136, 12, 0);
  field(block, 156, 1, entry.type ?? "0");
  field(block, 157, 100, entry.linkname ?? "");
  field(block, 257, 6, "ustar\0");
  field(block, 263, 2, "00");
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  field(block, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return block;
}

/** An uncompressed tar of `entries`, ended by two zero blocks (and `trailingZeroBytes` more). */
export function tarArchive(entries: TarEntry[], trailingZeroBytes = 0): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = typeof entry.data === "string" ? Buffer.from(entry.data) : Buffer.from(entry.data ?? new Uint8Array());
    parts.push(tarHeader(entry, data.length), data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024 + trailingZeroBytes));
  return Buffer.concat(parts);
}

/**
 * A gzip member whose header carries a comment (FCOMMENT) of `commentBytes` bytes: the same
 * inflated data at any chosen compressed size at or above the plain one.
 */
export function gzipWithComment(
  deflated: { raw: Buffer; crc32: number; inputLength: number },
  commentBytes: number,
): Buffer {
  const header = Buffer.from([0x1f, 0x8b, 8, 0x10, 0, 0, 0, 0, 0, 0xff]);
  const comment = Buffer.alloc(commentBytes, 0x61);
  if (commentBytes > 0) comment[commentBytes - 1] = 0;
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(deflated.crc32 >>> 0, 0);
  trailer.writeUInt32LE(deflated.inputLength % 2 ** 32, 4);
  return Buffer.concat([header, comment, deflated.raw, trailer]);
}
