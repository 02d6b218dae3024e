// Streaming inspection of an uncompressed tar archive (a configuration upload): it sees each
// block once, keeps no file contents, and refuses what the runner's `tar -x` must never be
// handed. Pure; the upload inspection worker feeds it the inflated bytes.

import { cString, headerNumber, paxRecords, TAR_BLOCK } from "./tar-format.ts";

/** What kind of problem a refusal is about (callers with their own outcome codes map it; uploads use only the message). */
export type RefusalKind =
  "not_a_tar" | "absolute_path" | "path_traversal" | "link" | "unsupported_entry" | "too_many_entries";

/** Why an upload is refused; the message completes "The upload must be a .tar.gz of the configuration: …". */
export class UploadRefusal extends Error {
  constructor(
    message: string,
    readonly kind: RefusalKind = "not_a_tar",
  ) {
    super(message);
    this.name = "UploadRefusal";
  }
}

/** The largest pax or GNU long-name header data kept (a name, a link target, a size). */
const MAX_EXTENDED_HEADER_BYTES = 1024 * 1024;
/** How many symlinks a link target may go through before it counts as a loop. */
const MAX_LINK_HOPS = 40;

/** What an accepted archive held. */
export interface TarSummary {
  entries: number;
  /** Uncompressed bytes seen, the end-of-archive blocks included. */
  tarBytes: number;
}

function quote(path: string): string {
  return JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
}

function checksumMatches(block: Uint8Array): boolean {
  const recorded = headerNumber(block, 148, 8);
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < TAR_BLOCK; i += 1) {
    const byte = i >= 148 && i < 156 ? 0x20 : block[i];
    unsigned += byte;
    signed += byte > 127 ? byte - 256 : byte;
  }
  return recorded === unsigned || recorded === signed;
}

/**
 * The segments of an archive member path relative to the archive root ("./a//b" → ["a", "b"]);
 * refuses absolute paths and any `..` segment, which `tar -x` would otherwise resolve.
 */
function segmentsOf(path: string, what: string): string[] {
  if (path.includes("\0")) throw new UploadRefusal(`${what} ${quote(path)} contains a NUL byte`);
  if (path.startsWith("/")) throw new UploadRefusal(`${what} ${quote(path)} is an absolute path`, "absolute_path");
  const segments = path.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.includes(".."))
    throw new UploadRefusal(`${what} ${quote(path)} contains '..' (path traversal)`, "path_traversal");
  return segments;
}

/**
 * Whether every `.terraform` segment of an entry's path is the directory itself (type `5`, as the
 * last segment) or leads into its `modules` subtree: the only part of tofu's working data an
 * upload may carry (no providers, plugins or backend state).
 */
function onlyModulesOfTofuData(segments: readonly string[], type: string): boolean {
  return segments.every(
    (segment, i) =>
      segment !== ".terraform" || (i === segments.length - 1 ? type === "5" : segments[i + 1] === "modules"),
  );
}

type Extended = "x" | "g" | "L" | "K";

/**
 * Feed the inflated bytes in order with push(), then call finish(). Each throws UploadRefusal
 * for an archive that is not a tar, is truncated, or has an entry that is absolute, contains
 * `..`, is a device or FIFO, writes through a symlink of the archive, or is a hard link to
 * anything but an earlier regular file of the archive, or lies in a `.terraform` directory at any
 * depth other than its `modules` subtree (tofu's working data: providers it would run); finish()
 * also refuses symlinks whose
 * target (followed through the archive's other symlinks) leaves the archive root.
 */
export class TarInspector {
  private readonly header = new Uint8Array(TAR_BLOCK);
  private headerFill = 0;
  /** Bytes of the current entry's data (and padding) still to pass over. */
  private skip = 0;
  /** Extended header data being collected (pax or GNU long name). */
  private extended: { type: Extended; size: number; chunks: Buffer[]; have: number } | null = null;
  /** Overrides for the next entry from pax (`x`) or GNU long-name (`L`, `K`) headers. */
  private next: { path?: string; linkpath?: string; size?: number } = {};
  private ended = false;
  private tarBytes = 0;
  private entries = 0;
  /** Symlinks of the archive: normalized path → [directory segments, target]. */
  private readonly symlinks = new Map<string, { dir: string[]; target: string }>();
  /** Regular files of the archive (normalized paths), the only hard link targets allowed. */
  private readonly files = new Set<string>();

  constructor(private readonly maxEntries: number) {}

  push(chunk: Uint8Array): void {
    this.tarBytes += chunk.length;
    let offset = 0;
    while (offset < chunk.length) {
      if (this.ended) return;
      if (this.skip > 0 || this.extended) {
        const take = Math.min(this.skip, chunk.length - offset);
        if (this.extended && this.extended.have < this.extended.size) {
          const keep = Math.min(take, this.extended.size - this.extended.have);
          this.extended.chunks.push(Buffer.from(chunk.subarray(offset, offset + keep)));
          this.extended.have += keep;
        }
        this.skip -= take;
        offset += take;
        if (this.skip === 0 && this.extended) this.endExtended();
        continue;
      }
      const take = Math.min(TAR_BLOCK - this.headerFill, chunk.length - offset);
      this.header.set(chunk.subarray(offset, offset + take), this.headerFill);
      this.headerFill += take;
      offset += take;
      if (this.headerFill === TAR_BLOCK) {
        this.headerFill = 0;
        this.readHeader();
      }
    }
  }

  finish(): TarSummary {
    if (this.tarBytes === 0 || this.tarBytes % TAR_BLOCK !== 0)
      throw new UploadRefusal("the decompressed data is not a tar archive");
    if (!this.ended && (this.skip > 0 || this.extended || this.headerFill > 0))
      throw new UploadRefusal("the tar archive is truncated");
    for (const [path, link] of this.symlinks) {
      if (this.escapes(link.dir, link.target))
        throw new UploadRefusal(
          `the symlink ${quote(path)} points outside the configuration (to ${quote(link.target)})`,
          "link",
        );
    }
    return { entries: this.entries, tarBytes: this.tarBytes };
  }

  private readHeader(): void {
    const block = this.header;
    if (block.every((b) => b === 0)) {
      // GNU tar stops at the first zero block: nothing after it is extracted.
      this.ended = true;
      return;
    }
    // "ustar\0" (POSIX) or "ustar " (GNU).
    const magic = Buffer.from(block.buffer, block.byteOffset + 257, 5).toString("latin1");
    if (magic !== "ustar" || !checksumMatches(block))
      throw new UploadRefusal("the decompressed data is not a tar archive");
    const size = headerNumber(block, 124, 12);
    if (!Number.isFinite(size) || size < 0)
      throw new UploadRefusal("the decompressed data is not a tar archive (an entry has no valid size)");
    const type = String.fromCharCode(block[156]);
    if (type === "x" || type === "g" || type === "L" || type === "K") {
      if (size > MAX_EXTENDED_HEADER_BYTES)
        throw new UploadRefusal(`an extended tar header is larger than ${MAX_EXTENDED_HEADER_BYTES} bytes`);
      this.extended = { type, size, chunks: [], have: 0 };
      this.skip = Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
      if (this.skip === 0) this.endExtended();
      return;
    }
    // POSIX ustar ("ustar\0" "00") splits long names into prefix/name; GNU ("ustar " " \0") does not.
    const posix = block[262] === 0 && block[263] === 0x30 && block[264] === 0x30;
    const prefix = posix ? cString(block, 345, 155) : "";
    const name = this.next.path ?? (prefix ? `${prefix}/${cString(block, 0, 100)}` : cString(block, 0, 100));
    const linkname = this.next.linkpath ?? cString(block, 157, 100);
    const dataSize = this.next.size ?? size;
    this.next = {};
    this.entries += 1;
    if (this.entries > this.maxEntries)
      throw new UploadRefusal(`the archive has more than ${this.maxEntries} entries`, "too_many_entries");
    this.checkEntry(type, name, linkname);
    // Links, directories and devices carry no data whatever their size field says.
    this.skip = type === "0" || type === "\0" || type === "7" ? Math.ceil(dataSize / TAR_BLOCK) * TAR_BLOCK : 0;
  }

  private endExtended(): void {
    const extended = this.extended!;
    this.extended = null;
    const data = Buffer.concat(extended.chunks);
    if (extended.type === "L") this.next.path = cString(data, 0, data.length);
    else if (extended.type === "K") this.next.linkpath = cString(data, 0, data.length);
    else if (extended.type === "x") {
      const records = paxRecords(data);
      if (records === undefined)
        throw new UploadRefusal("the decompressed data is not a tar archive (a malformed pax header)");
      const path = records.get("path");
      const linkpath = records.get("linkpath");
      const size = records.get("size");
      if (path !== undefined) this.next.path = path;
      if (linkpath !== undefined) this.next.linkpath = linkpath;
      if (size !== undefined) {
        if (!/^[0-9]+$/.test(size) || !Number.isSafeInteger(Number(size)))
          throw new UploadRefusal("the decompressed data is not a tar archive (a malformed pax size)");
        this.next.size = Number(size);
      }
    }
    // Global pax headers (`g`) change nothing an extraction would write where.
  }

  private checkEntry(type: string, name: string, linkname: string): void {
    if (name === "") throw new UploadRefusal("an entry of the archive has no name");
    const segments = segmentsOf(name, "the entry");
    const path = segments.join("/");
    // Writing under a symlink the archive made earlier would write wherever it points.
    for (let i = 1; i <= segments.length; i += 1) {
      const ancestor = segments.slice(0, i).join("/");
      if (i < segments.length && this.symlinks.has(ancestor))
        throw new UploadRefusal(`the entry ${quote(name)} is inside the symlink ${quote(ancestor)}`, "link");
    }
    // tofu's working data: a provider binary in it would be run as "previously installed".
    // StackShip installs providers only from its mirror; the CLI uploads only `.terraform/modules/`
    // (the modules `tofu init` installed, which the sandbox reuses), so nothing else of it is accepted.
    if (!onlyModulesOfTofuData(segments, type))
      throw new UploadRefusal(
        `the entry ${quote(name)} is inside a .terraform directory (tofu's working data; a configuration may carry only its .terraform/modules)`,
        "unsupported_entry",
      );
    if (type !== "2" && this.symlinks.has(path))
      throw new UploadRefusal(`the entry ${quote(name)} replaces a symlink of the archive`, "link");
    switch (type) {
      case "0":
      case "\0":
      case "7":
        this.files.add(path);
        return;
      case "5":
        return;
      case "2": {
        if (linkname === "") throw new UploadRefusal(`the symlink ${quote(name)} has no target`, "link");
        if (linkname.startsWith("/"))
          throw new UploadRefusal(`the symlink ${quote(name)} points to the absolute path ${quote(linkname)}`, "link");
        if (segments.length === 0)
          throw new UploadRefusal(`the symlink ${quote(name)} would replace the configuration directory`, "link");
        this.symlinks.set(path, { dir: segments.slice(0, -1), target: linkname });
        this.files.delete(path);
        return;
      }
      case "1": {
        const target = segmentsOf(linkname, "the hard link target").join("/");
        if (!this.files.has(target))
          throw new UploadRefusal(
            `the hard link ${quote(name)} points to ${quote(linkname)}, which is not a regular file earlier in the archive`,
            "link",
          );
        this.files.add(path);
        return;
      }
      case "3":
      case "4":
        throw new UploadRefusal(`the entry ${quote(name)} is a device file`, "unsupported_entry");
      case "6":
        throw new UploadRefusal(`the entry ${quote(name)} is a FIFO`, "unsupported_entry");
      default:
        throw new UploadRefusal(
          `the entry ${quote(name)} has an unsupported tar type ${JSON.stringify(type)}`,
          "unsupported_entry",
        );
    }
  }

  /** Whether `target`, read from directory `dir` and followed through the archive's symlinks, leaves the root. */
  private escapes(dir: string[], target: string): boolean {
    const resolved = [...dir];
    const pending = target.split("/").reverse();
    let hops = 0;
    while (pending.length > 0) {
      const segment = pending.pop()!;
      if (segment === "" || segment === ".") continue;
      if (segment === "..") {
        if (resolved.length === 0) return true;
        resolved.pop();
        continue;
      }
      resolved.push(segment);
      const link = this.symlinks.get(resolved.join("/"));
      if (!link) continue;
      hops += 1;
      if (hops > MAX_LINK_HOPS) return true; // a loop: refused like an escape
      if (link.target.startsWith("/")) return true;
      resolved.pop();
      pending.push(...link.target.split("/").reverse());
    }
    return false;
  }
}
