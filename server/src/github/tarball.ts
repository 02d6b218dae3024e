import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import { cString, headerNumber, paxRecords } from "../artifacts/tar-format.ts";
import { TarInspector, UploadRefusal, type RefusalKind } from "../artifacts/tar-inspection.ts";
import { DEFAULT_INSPECTION_LIMITS } from "../artifacts/upload-inspection.ts";

/**
 * A commit's tarball as GitHub serves it (`GET /repos/{owner}/{repo}/tarball/{sha}`: a gzipped
 * tar whose every entry sits under one top-level folder `<owner>-<repo>-<sha7>/`, with a pax
 * global header naming the commit) turned into a configuration `.tar.gz`: the top-level folder
 * stripped, checked by the upload inspection (artifacts/tar-inspection.ts: nothing that could
 * leave the tree), and bounded in size. Inflation runs on libuv's thread pool (zlib's async API), never
 * on the event loop.
 */

const gunzipAsync = promisify(gunzip);
const gzipAsync = promisify(gzip);

/** Why a tarball was refused: a stable outcome code and one sentence. */
export class TarballRefused extends Error {
  constructor(
    readonly outcome:
      | "tarball_too_large"
      | "tarball_invalid"
      | "tarball_path_absolute"
      | "tarball_path_escapes"
      | "tarball_link_escapes"
      | "tarball_entry_unsupported"
      | "working_directory_missing",
    readonly detail: string,
  ) {
    super(detail);
    this.name = "TarballRefused";
  }
}

interface TarEntry {
  name: string;
  type: "file" | "directory" | "symlink" | "hardlink";
  mode: number;
  linkname: string;
  data: Buffer;
}

/** Reads every entry of an uncompressed tar archive. */
function readTar(tar: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let at = 0;
  let longName: string | null = null;
  let longLink: string | null = null;
  let pax = new Map<string, string>();
  while (at + 512 <= tar.length) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const magic = header.subarray(257, 262).toString("latin1");
    if (magic !== "ustar") throw new TarballRefused("tarball_invalid", "The tarball is not a ustar archive.");
    const size = headerNumber(header, 124, 12);
    if (Number.isNaN(size)) throw new TarballRefused("tarball_invalid", "The tarball has a malformed size field.");
    const flag = String.fromCharCode(header[156] || 0x30);
    const dataStart = at + 512;
    const dataEnd = dataStart + size;
    if (dataEnd > tar.length) throw new TarballRefused("tarball_invalid", "The tarball is truncated.");
    const data = tar.subarray(dataStart, dataEnd);
    at = dataStart + Math.ceil(size / 512) * 512;
    if (flag === "g") continue; // pax global header (git archive: the commit id)
    if (flag === "x") {
      const records = paxRecords(data);
      if (records === undefined) throw new TarballRefused("tarball_invalid", "The tarball has a malformed pax header.");
      pax = records;
      continue;
    }
    if (flag === "L") {
      longName = cString(data, 0, data.length);
      continue;
    }
    if (flag === "K") {
      longLink = cString(data, 0, data.length);
      continue;
    }
    const prefix = cString(header, 345, 155);
    const shortName = cString(header, 0, 100);
    const name = pax.get("path") ?? longName ?? (prefix ? `${prefix}/${shortName}` : shortName);
    const linkname = pax.get("linkpath") ?? longLink ?? cString(header, 157, 100);
    pax = new Map();
    longName = longLink = null;
    const type =
      flag === "0" || flag === "\0" || flag === "7"
        ? "file"
        : flag === "5"
          ? "directory"
          : flag === "2"
            ? "symlink"
            : flag === "1"
              ? "hardlink"
              : null;
    if (type === null)
      throw new TarballRefused(
        "tarball_entry_unsupported",
        `The tarball holds '${name}', which is not a file, directory or link (type '${flag}').`,
      );
    entries.push({
      name,
      type,
      mode: headerNumber(header, 100, 8) & 0o777,
      linkname,
      data: type === "file" ? data : Buffer.alloc(0),
    });
  }
  return entries;
}

function header(name: string, entry: Pick<TarEntry, "type" | "mode" | "linkname">, size: number): Buffer[] {
  const blocks: Buffer[] = [];
  const nameBytes = Buffer.from(name, "utf8");
  const linkBytes = Buffer.from(entry.linkname, "utf8");
  if (nameBytes.length > 100 || linkBytes.length > 100) {
    // A pax extended header carries the long names.
    const records = [`path=${name}`, ...(entry.linkname ? [`linkpath=${entry.linkname}`] : [])].map((kv) => {
      const body = ` ${kv}\n`;
      let length = Buffer.byteLength(body) + 1;
      while (String(length).length + Buffer.byteLength(body) !== length)
        length = String(length).length + Buffer.byteLength(body);
      return `${length}${body}`;
    });
    const data = Buffer.from(records.join(""), "utf8");
    blocks.push(rawHeader("PaxHeader", 0o644, data.length, "x", ""), pad(data));
  }
  const flag = entry.type === "file" ? "0" : entry.type === "directory" ? "5" : entry.type === "symlink" ? "2" : "1";
  blocks.push(
    rawHeader(
      nameBytes.length > 100 ? nameBytes.subarray(0, 100).toString("latin1") : name,
      entry.mode,
      size,
      flag,
      linkBytes.length > 100 ? "" : entry.linkname,
    ),
  );
  return blocks;
}

function rawHeader(name: string, mode: number, size: number, flag: string, linkname: string): Buffer {
  const block = Buffer.alloc(512);
  block.write(name, 0, 100, "utf8");
  block.write(mode.toString(8).padStart(7, "0"), 100, 8, "latin1");
  block.write("0000000", 108, 8, "latin1");
  block.write("0000000", 116, 8, "latin1");
  block.write(size.toString(8).padStart(11, "0"), 124, 12, "latin1");
  block.write("00000000000", 136, 12, "latin1");
  block.fill(0x20, 148, 156);
  block.write(flag, 156, 1, "latin1");
  block.write(linkname, 157, 100, "utf8");
  block.write("ustar\u000000", 257, 8, "latin1");
  let sum = 0;
  for (const b of block) sum += b;
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "latin1");
  return block;
}

function pad(data: Buffer): Buffer {
  const rest = data.length % 512;
  return rest === 0 ? data : Buffer.concat([data, Buffer.alloc(512 - rest)]);
}

/** Limits of a tarball: its compressed bytes and what it may unpack to. */
export interface TarballLimits {
  maxBytes: number;
  maxUnpackedBytes: number;
}

/** The outcome a refusal of the upload inspection gets for a commit tarball. */
const OUTCOMES: Record<RefusalKind, TarballRefused["outcome"]> = {
  not_a_tar: "tarball_invalid",
  absolute_path: "tarball_path_absolute",
  path_traversal: "tarball_path_escapes",
  link: "tarball_link_escapes",
  unsupported_entry: "tarball_entry_unsupported",
  too_many_entries: "tarball_too_large",
};

/**
 * The configuration `.tar.gz` of a GitHub commit tarball, or TarballRefused. The top-level folder
 * is stripped here; what may not be extracted (absolute paths, `..`, links leaving the tree,
 * devices…) is refused by the same inspection as a configuration upload, run on the stripped
 * archive. `workingDirectory` must exist in the commit (a directory); the whole tree is kept so
 * that modules the configuration reaches with `../` are there.
 */
export async function configurationFromGitHubTarball(
  bytes: Buffer,
  workingDirectory: string,
  limits: TarballLimits,
): Promise<Buffer> {
  if (bytes.length > limits.maxBytes)
    throw new TarballRefused(
      "tarball_too_large",
      `The commit's tarball is ${bytes.length} bytes, over the limit of ${limits.maxBytes}.`,
    );
  let tar: Buffer;
  try {
    tar = await gunzipAsync(bytes, { maxOutputLength: limits.maxUnpackedBytes });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE")
      throw new TarballRefused(
        "tarball_too_large",
        `The commit's tarball unpacks to more than ${limits.maxUnpackedBytes} bytes.`,
      );
    throw new TarballRefused("tarball_invalid", "The commit's tarball is not gzip-compressed.");
  }
  const entries = readTar(tar);
  if (entries.length === 0) throw new TarballRefused("tarball_invalid", "The commit's tarball is empty.");
  const top = entries[0].name.split("/")[0];
  // A name outside the top-level folder is kept as it is: the inspection refuses it if it is
  // absolute or goes through `..`, and it is refused as out of place otherwise.
  const prefix = top === "" || top === "." || top === ".." ? null : `${top}/`;
  const strip = (path: string) =>
    prefix !== null && (path.startsWith(prefix) || path === top) ? path.slice(prefix.length) : null;
  const out: Buffer[] = [];
  const dir = workingDirectory.replace(/^\/+|\/+$/g, "");
  let workingDirectoryFound = dir === "";
  let outside: string | null = null;
  for (const entry of entries) {
    const stripped = strip(entry.name);
    if (stripped === null) outside ??= entry.name;
    const name = (stripped ?? entry.name).replace(/\/+$/, "");
    if (name === "") continue;
    const linkname = entry.type === "hardlink" ? (strip(entry.linkname) ?? entry.linkname) : entry.linkname;
    if (entry.type === "directory" && name === dir) workingDirectoryFound = true;
    if (dir !== "" && name.startsWith(`${dir}/`)) workingDirectoryFound = true;
    const kept = {
      type: entry.type,
      mode: entry.type === "directory" ? 0o755 : entry.mode & 0o111 ? 0o755 : 0o644,
      linkname,
    };
    out.push(...header(entry.type === "directory" ? `${name}/` : name, kept, entry.data.length));
    if (entry.data.length > 0) out.push(pad(entry.data));
  }
  out.push(Buffer.alloc(1024));
  const configuration = Buffer.concat(out);
  const inspector = new TarInspector(DEFAULT_INSPECTION_LIMITS.maxEntries);
  try {
    inspector.push(configuration);
    inspector.finish();
  } catch (error) {
    if (error instanceof UploadRefusal)
      throw new TarballRefused(
        OUTCOMES[error.kind],
        `The commit's tarball cannot be a configuration: ${error.message}.`,
      );
    throw error;
  }
  if (outside !== null)
    throw new TarballRefused(
      "tarball_invalid",
      `The tarball's entries are not all under one top-level folder ('${outside}').`,
    );
  if (!workingDirectoryFound)
    throw new TarballRefused(
      "working_directory_missing",
      `The commit has no directory '${dir}' (the workspace's working directory).`,
    );
  return gzipAsync(configuration);
}

/** A tar entry for building tarballs (tests and the GitHub double). */
export interface TarInput {
  name: string;
  type?: "file" | "directory" | "symlink" | "hardlink";
  content?: string | Buffer;
  linkname?: string;
}

/** Builds a `.tar.gz` from entries exactly as named (no checks: tests build hostile ones). */
export async function buildTarGz(entries: readonly TarInput[], globalComment?: string): Promise<Buffer> {
  const out: Buffer[] = [];
  if (globalComment) {
    const body = ` comment=${globalComment}\n`;
    const length = String(Buffer.byteLength(body) + 2).length + Buffer.byteLength(body);
    const data = Buffer.from(`${length}${body}`);
    out.push(rawHeader("pax_global_header", 0o666, data.length, "g", ""), pad(data));
  }
  for (const entry of entries) {
    const data =
      entry.content === undefined
        ? Buffer.alloc(0)
        : Buffer.isBuffer(entry.content)
          ? entry.content
          : Buffer.from(entry.content);
    out.push(
      ...header(
        entry.name,
        {
          type: entry.type ?? "file",
          mode: entry.type === "directory" ? 0o755 : 0o644,
          linkname: entry.linkname ?? "",
        },
        data.length,
      ),
    );
    if (data.length > 0) out.push(pad(data));
  }
  out.push(Buffer.alloc(1024));
  return gzipAsync(Buffer.concat(out));
}
