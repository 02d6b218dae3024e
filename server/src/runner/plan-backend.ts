import { crc32, deflateRawSync, inflateRawSync } from "node:zlib";
import { SANDBOX_STACKSHIP_HOSTNAME } from "./tofu-files.ts";

/**
 * The plan phase runs tofu with the local backend (plan-state.ts), so the saved plan records
 * `backend "local"`; `tofu apply <plan>` configures the backend a plan records, not the one in the
 * configuration (opentofu internal/command/apply.go, `BackendForLocalPlan`). Before the plan is
 * stored (and its digest becomes what approval binds to), its recorded backend is replaced by the
 * `cloud` block the apply phase configures (tofu-files.ts `cloudOverride`), exactly as tofu records
 * it: type "cloud", the block's attributes as cty msgpack (object attributes in name order, unset
 * ones null), the workspace name. Nothing else of the plan file changes: the other zip entries are
 * copied byte for byte, and the other fields of the plan message too.
 */
export function withCloudBackend(planFile: Buffer, organization: string, workspace: string): Buffer {
  return rewriteZipEntry(planFile, "tfplan", (tfplan) =>
    replaceField(tfplan, PLAN_BACKEND_FIELD, cloudBackendMessage(organization, workspace)),
  );
}

/** `Backend backend = 13;` of `message Plan` (opentofu internal/plans/internal/planproto/planfile.proto). */
const PLAN_BACKEND_FIELD = 13;

function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value > 0x7f) {
    bytes.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

function lengthDelimited(field: number, body: Buffer): Buffer {
  return Buffer.concat([varint((field << 3) | 2), varint(body.length), body]);
}

function msgpackString(value: string): Buffer {
  const bytes = Buffer.from(value, "utf8");
  if (bytes.length < 32) return Buffer.concat([Buffer.from([0xa0 | bytes.length]), bytes]);
  if (bytes.length < 0x100) return Buffer.concat([Buffer.from([0xd9, bytes.length]), bytes]);
  if (bytes.length < 0x10000)
    return Buffer.concat([Buffer.from([0xda, bytes.length >> 8, bytes.length & 0xff]), bytes]);
  throw new Error("a backend setting is too long");
}

/** A cty object as msgpack: a map of its attributes in name order; null is nil. */
function msgpackObject(attributes: Record<string, Buffer | null>): Buffer {
  const names = Object.keys(attributes).sort();
  if (names.length > 15) throw new Error("too many attributes");
  return Buffer.concat([
    Buffer.from([0x80 | names.length]),
    ...names.flatMap((name) => [msgpackString(name), attributes[name] ?? Buffer.from([0xc0])]),
  ]);
}

/** The `Backend` message of the `cloud` block (internal/cloud/backend.go `ConfigSchema`). */
export function cloudBackendMessage(organization: string, workspace: string): Buffer {
  const config = msgpackObject({
    hostname: msgpackString(SANDBOX_STACKSHIP_HOSTNAME),
    organization: msgpackString(organization),
    token: null,
    workspaces: msgpackObject({ name: msgpackString(workspace), project: null, tags: null }),
  });
  return Buffer.concat([
    lengthDelimited(1, Buffer.from("cloud")),
    lengthDelimited(2, lengthDelimited(1, config)),
    lengthDelimited(3, Buffer.from(workspace, "utf8")),
  ]);
}

function readVarint(buffer: Buffer, at: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = at; i < buffer.length && i < at + 10; i++) {
    value += (buffer[i] & 0x7f) * scale;
    scale *= 128;
    if ((buffer[i] & 0x80) === 0) return [value, i + 1];
  }
  throw new Error("the plan file's plan is not a protobuf message");
}

/** The message with every occurrence of `field` dropped and `field` = `body` appended. */
export function replaceField(message: Buffer, field: number, body: Buffer): Buffer {
  const kept: Buffer[] = [];
  let found = false;
  for (let at = 0; at < message.length;) {
    const start = at;
    const [key, afterKey] = readVarint(message, at);
    const wireType = key & 7;
    if (wireType === 0) at = readVarint(message, afterKey)[1];
    else if (wireType === 1) at = afterKey + 8;
    else if (wireType === 5) at = afterKey + 4;
    else if (wireType === 2) {
      const [length, afterLength] = readVarint(message, afterKey);
      at = afterLength + length;
    } else throw new Error(`the plan file's plan has an unsupported wire type ${wireType}`);
    if (at > message.length) throw new Error("the plan file's plan is truncated");
    if (Math.floor(key / 8) === field) found = true;
    else kept.push(message.subarray(start, at));
  }
  if (!found) throw new Error("the plan file records no backend");
  return Buffer.concat([...kept, lengthDelimited(field, body)]);
}

interface ZipEntry {
  name: Buffer;
  method: number;
  crc: number;
  data: Buffer;
  uncompressedSize: number;
  modTime: number;
  modDate: number;
  externalAttributes: number;
}

/** The entries of a zip file (central directory; no zip64, no encryption: what Go's archive/zip writes for a plan). */
function readZip(zip: Buffer): ZipEntry[] {
  let end = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error("the plan file is not a zip archive");
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error("the plan file's zip directory is damaged");
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localOffset = zip.readUInt32LE(at + 42);
    if (compressedSize === 0xffffffff || localOffset === 0xffffffff)
      throw new Error("zip64 plan files are not supported");
    if (method !== 0 && method !== 8) throw new Error(`the plan file uses zip compression method ${method}`);
    const name = zip.subarray(at + 46, at + 46 + nameLength);
    if (zip.readUInt32LE(localOffset) !== 0x04034b50) throw new Error("the plan file's zip entry is damaged");
    const dataStart = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    entries.push({
      name,
      method,
      crc: zip.readUInt32LE(at + 16),
      data: zip.subarray(dataStart, dataStart + compressedSize),
      uncompressedSize: zip.readUInt32LE(at + 24),
      modTime: zip.readUInt16LE(at + 12),
      modDate: zip.readUInt16LE(at + 14),
      externalAttributes: zip.readUInt32LE(at + 38),
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Flags (UTF-8 names, sizes in the header: no data descriptor), method, time, date, CRC, sizes, name length. */
function writeCommonHeader(header: Buffer, at: number, entry: ZipEntry): void {
  header.writeUInt16LE(0x0800, at);
  header.writeUInt16LE(entry.method, at + 2);
  header.writeUInt16LE(entry.modTime, at + 4);
  header.writeUInt16LE(entry.modDate, at + 6);
  header.writeUInt32LE(entry.crc, at + 8);
  header.writeUInt32LE(entry.data.length, at + 12);
  header.writeUInt32LE(entry.uncompressedSize, at + 16);
  header.writeUInt16LE(entry.name.length, at + 20);
}

function writeZip(entries: readonly ZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    // The local header (signature, version needed, then the common fields at 6) and the central
    // one (signature, version made by, then the same fields at 6 + 2).
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    writeCommonHeader(local, 6, entry);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    writeCommonHeader(central, 8, entry);
    central.writeUInt32LE(entry.externalAttributes, 38);
    central.writeUInt32LE(offset, 42);
    parts.push(local, entry.name, entry.data);
    directory.push(central, entry.name);
    offset += 30 + entry.name.length + entry.data.length;
  }
  const directoryBytes = Buffer.concat(directory);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directoryBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, directoryBytes, end]);
}

function findEntry(entries: readonly ZipEntry[], name: string): { entry: ZipEntry; contents: Buffer } {
  const found = entries.filter((entry) => entry.name.toString("utf8") === name);
  if (found.length !== 1) throw new Error(`the plan file has ${found.length} '${name}' entries`);
  const [entry] = found;
  const contents = entry.method === 8 ? inflateRawSync(entry.data) : entry.data;
  if (crc32(contents) !== entry.crc) throw new Error(`the plan file's '${name}' entry is damaged`);
  return { entry, contents };
}

/** One entry of a plan file (a zip archive), e.g. `tfstate`, the state the plan was made against. */
export function planFileEntry(zip: Buffer, name: string): Buffer {
  return findEntry(readZip(zip), name).contents;
}

function rewriteZipEntry(zip: Buffer, name: string, rewrite: (contents: Buffer) => Buffer): Buffer {
  const entries = readZip(zip);
  const { entry, contents } = findEntry(entries, name);
  const rewritten = rewrite(contents);
  const replaced: ZipEntry = {
    ...entry,
    method: 8,
    data: deflateRawSync(rewritten),
    crc: crc32(rewritten),
    uncompressedSize: rewritten.length,
  };
  return writeZip(entries.map((e) => (e === entry ? replaced : e)));
}
