// Unpacks a configuration tarball inside the sandbox, in the launcher (sandbox-launcher.mjs), so
// that a phase does not start mkdir, tar, gzip and cp processes before tofu. It runs with the
// sandbox's uid, confinement and limits, like the tar it replaces. It handles what an accepted
// configuration upload holds (artifacts/tar-inspection.ts): regular files, directories, symlinks,
// hard links to earlier files, pax and GNU long-name headers. On anything else, or any error, it
// leaves nothing behind and returns false: the phase script then unpacks with tar as before, so
// an archive tar accepts is never refused here, and tar's own error reaches the log.
//
// Modes follow `tar --no-same-owner --no-same-permissions` under `umask 077`: the archive's mode
// with group and other bits cleared (directories' modes set once everything is written, as tar
// does, so a read-only directory can still be filled).

import {
  chmodSync,
  closeSync,
  createReadStream,
  readFileSync,
  writeFileSync,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { createGunzip, gunzipSync, gzipSync } from "node:zlib";

const BLOCK = 512;
const MAX_EXTENDED_HEADER_BYTES = 1024 * 1024;
/** An archive up to this size is read and inflated in one go (fewer turns of the event loop than a stream)… */
const WHOLE_ARCHIVE_BYTES = 1024 * 1024;
/** …unless it inflates to more than this; then it is streamed. */
const WHOLE_TAR_BYTES = 32 * 1024 * 1024;

class Unsupported extends Error {}

function cString(block, start, length) {
  let end = start;
  while (end < start + length && block[end] !== 0) end += 1;
  return block.subarray(start, end).toString("utf8");
}

function octal(block, start, length) {
  if (block[start] & 0x80) throw new Unsupported("base-256 number");
  const text = cString(block, start, length).trim();
  if (text === "") return 0;
  if (!/^[0-7]+$/.test(text)) throw new Unsupported("bad number");
  return parseInt(text, 8);
}

function paxRecords(data) {
  const records = {};
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    if (space < 0) throw new Unsupported("bad pax record");
    const length = Number(data.subarray(offset, space).toString("ascii"));
    if (!Number.isInteger(length) || length <= space - offset || offset + length > data.length)
      throw new Unsupported("bad pax record");
    const record = data.subarray(space + 1, offset + length - 1).toString("utf8");
    const equals = record.indexOf("=");
    if (equals < 0) throw new Unsupported("bad pax record");
    records[record.slice(0, equals)] = record.slice(equals + 1);
    offset += length;
  }
  return records;
}

/** The archive path as a list of segments under the root ("" for the root itself); throws on `..` or an absolute path. */
function segmentsOf(name) {
  if (name.startsWith("/")) throw new Unsupported("absolute path");
  const segments = name.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.includes("..")) throw new Unsupported("path traversal");
  return segments;
}

/** The inflated tar at `archive`, as chunks. */
function inflated(archive) {
  if (statSync(archive).size <= WHOLE_ARCHIVE_BYTES) {
    let tar;
    try {
      tar = gunzipSync(readFileSync(archive), { maxOutputLength: WHOLE_TAR_BYTES });
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
    }
    if (tar !== undefined)
      return (async function* () {
        yield tar;
      })();
  }
  return createReadStream(archive).pipe(createGunzip());
}

/** Reads the gzip'd tar at `archive` as whole 512-byte blocks and entry bodies. */
async function* entries(archive) {
  let buffered = Buffer.alloc(0);
  const source = inflated(archive);
  const take = async function* (count) {
    // Yields `count` bytes as they arrive (at least one chunk per call).
    let left = count;
    while (left > 0) {
      if (buffered.length === 0) {
        const { value, done } = await iterator.next();
        if (done) throw new Unsupported("truncated archive");
        buffered = value;
      }
      const part = buffered.subarray(0, Math.min(left, buffered.length));
      buffered = buffered.subarray(part.length);
      left -= part.length;
      yield part;
    }
  };
  const iterator = source[Symbol.asyncIterator]();
  const readWhole = async (count) => {
    const parts = [];
    for await (const part of take(count)) parts.push(part);
    return Buffer.concat(parts, count);
  };
  let extended = {};
  for (;;) {
    const header = await readWhole(BLOCK);
    if (header.every((byte) => byte === 0)) return;
    const size = octal(header, 124, 12);
    const type = String.fromCharCode(header[156] || 0x30);
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (type === "x" || type === "g" || type === "L" || type === "K") {
      if (size > MAX_EXTENDED_HEADER_BYTES) throw new Unsupported("extended header too large");
      const data = (await readWhole(padded)).subarray(0, size);
      if (type === "x") Object.assign(extended, paxRecords(data));
      else if (type === "L") extended.path = cString(data, 0, data.length);
      else if (type === "K") extended.linkpath = cString(data, 0, data.length);
      continue;
    }
    // POSIX ustar ("ustar\0"): a name prefix at 345; GNU's "ustar  " keeps other fields there.
    const ustar = header.subarray(257, 262).toString("latin1") === "ustar" && header[262] === 0;
    const prefix = ustar ? cString(header, 345, 155) : "";
    const name = extended.path ?? (prefix ? `${prefix}/${cString(header, 0, 100)}` : cString(header, 0, 100));
    const linkname = extended.linkpath ?? cString(header, 157, 100);
    const realSize = extended.size !== undefined ? Number(extended.size) : size;
    if (!Number.isSafeInteger(realSize) || realSize < 0) throw new Unsupported("bad size");
    extended = {};
    const body = Math.ceil(realSize / BLOCK) * BLOCK;
    yield { name, type, linkname, mode: octal(header, 100, 8), size: realSize, body: take(body) };
  }
}

/**
 * Unpacks `archive` (gzip'd tar) into `into` (which must not exist) and copies `copy` into its
 * `workingDirectory`, through a temporary sibling renamed into place at the end. Resolves true
 * when done, false when the archive or the working directory is not one it handles (nothing is
 * left behind then).
 */
export async function unpackConfiguration({ archive, into, workingDirectory, copy }) {
  const partial = `${into}.partial`;
  try {
    mkdirSync(partial, { mode: 0o700 });
    const directories = [];
    for await (const entry of entries(archive)) {
      const segments = segmentsOf(entry.name);
      const target = path.join(partial, ...segments);
      const mode = entry.mode & 0o700;
      if (segments.length > 1) mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
      if (entry.type === "0" || entry.type === "7") {
        if (segments.length === 0) throw new Unsupported("file at the root");
        const fd = openSync(target, "wx", mode);
        try {
          let left = entry.size;
          for await (const part of entry.body) {
            const data = part.subarray(0, Math.max(0, Math.min(part.length, left)));
            left -= data.length;
            if (data.length > 0) writeSync(fd, data);
          }
        } finally {
          closeSync(fd);
        }
        chmodSync(target, mode);
        continue;
      }
      for await (const part of entry.body) void part; // no body expected; skip whatever is there
      if (entry.type === "5") {
        if (segments.length === 0) continue;
        mkdirSync(target, { recursive: true, mode: 0o700 });
        directories.push([target, mode]);
      } else if (entry.type === "2") {
        if (segments.length === 0) throw new Unsupported("symlink at the root");
        symlinkSync(entry.linkname, target);
      } else if (entry.type === "1") {
        linkSync(path.join(partial, ...segmentsOf(entry.linkname)), target);
      } else {
        throw new Unsupported(`entry type ${JSON.stringify(entry.type)}`);
      }
    }
    for (const [directory, mode] of directories.reverse()) chmodSync(directory, mode);
    const workDir = path.join(partial, ...segmentsOf(workingDirectory));
    // The working directory must be a real directory of the archive: otherwise the script's tar and cd say what is wrong.
    if (!statSync(workDir).isDirectory()) throw new Unsupported("working directory");
    // As cp under umask 077: a new file gets the source's owner bits, an existing one keeps its mode.
    for (const file of copy)
      writeFileSync(path.join(workDir, path.basename(file)), readFileSync(file), { mode: statSync(file).mode & 0o700 });
    renameSync(partial, into);
    return true;
  } catch {
    rmSync(partial, { recursive: true, force: true });
    return false;
  }
}

/** A ustar header block for a warm-up entry (the unpacker reads no checksum); the sandbox's uid must be able to enter its directory. */
function warmUpHeader(name, type, size) {
  const header = Buffer.alloc(BLOCK);
  header.write(name, 0, "utf8");
  header.write(type === "5" ? "0000700\0" : "0000600\0", 100, "ascii");
  header.write(`${size.toString(8).padStart(11, "0")}\0`, 124, "ascii");
  header.write(type, 156, "ascii");
  header.write("ustar\x0000", 257, "latin1");
  return header;
}

/**
 * Unpacks a small archive built here (a directory, a file, a symlink) under `scratch` and removes
 * it again: a launcher is a fresh process, and this compiles the unpacker and starts zlib before
 * an attempt needs them. Resolves whether the sample unpacked; never throws.
 */
export async function warmUpUnpack(scratch) {
  const archive = `${scratch}.tgz`;
  try {
    const body = Buffer.alloc(BLOCK);
    body.write("warm-up\n");
    const tar = Buffer.concat([
      warmUpHeader("d/", "5", 0),
      warmUpHeader("d/f", "0", 8),
      body,
      warmUpHeader("d/l", "2", 0),
      Buffer.alloc(2 * BLOCK),
    ]);
    tar.write("f", 157 + 3 * BLOCK, "utf8");
    writeFileSync(archive, gzipSync(tar), { mode: 0o600 });
    writeFileSync(`${scratch}.copy`, "warm-up\n", { mode: 0o600 });
    return await unpackConfiguration({ archive, into: scratch, workingDirectory: "d", copy: [`${scratch}.copy`] });
  } catch {
    return false;
  } finally {
    for (const leftover of [scratch, archive, `${scratch}.copy`]) rmSync(leftover, { recursive: true, force: true });
  }
}
