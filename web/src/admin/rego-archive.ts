// The Rego modules of a policy bundle the browser reads: `.rego` files as they are, and a `.tar.gz`
// (or `.tgz`) of them unpacked here (gzip through DecompressionStream, then the ustar blocks).
// StackShip's policy sets hold Rego modules only: a data document or any other file in an archive
// is refused by name rather than silently dropped.

/** One Rego module: its file's base name and source. */
export interface RegoModule {
  name: string;
  source: string;
}

const BLOCK = 512;

function field(block: Uint8Array, start: number, length: number): string {
  const bytes = block.subarray(start, start + length);
  const end = bytes.indexOf(0);
  return new TextDecoder().decode(end === -1 ? bytes : bytes.subarray(0, end));
}

/** The regular files of an uncompressed tar archive, by path. */
export function untar(bytes: Uint8Array): Array<{ path: string; data: Uint8Array }> {
  const files: Array<{ path: string; data: Uint8Array }> = [];
  for (let offset = 0; offset + BLOCK <= bytes.length;) {
    const header = bytes.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) break; // the end-of-archive blocks
    const name = field(header, 0, 100);
    const size = parseInt(field(header, 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(header[156] || 48);
    const prefix = field(header, 345, 155);
    if (!Number.isFinite(size) || size < 0)
      throw new Error("The archive is not a tar archive (a header's size is unreadable).");
    const start = offset + BLOCK;
    if (start + size > bytes.length) throw new Error("The archive ends inside a file: it is truncated.");
    if (type === "0" || type === "\0")
      files.push({ path: prefix ? `${prefix}/${name}` : name, data: bytes.slice(start, start + size) });
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  return files;
}

/** The Rego modules of the chosen files (`.rego`, or `.tar.gz`/`.tgz` bundles of them). */
export async function regoModules(files: Iterable<File>): Promise<RegoModule[]> {
  const modules: RegoModule[] = [];
  for (const file of files) {
    if (/\.(tar\.gz|tgz)$/i.test(file.name)) {
      const unzipped = new Uint8Array(
        await new Response(file.stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer(),
      );
      const entries = untar(unzipped).filter((entry) => !entry.path.split("/").some((part) => part.startsWith("._")));
      const other = entries.filter((entry) => !entry.path.endsWith(".rego"));
      if (other.length > 0) {
        throw new Error(
          `${file.name} holds files that are not Rego modules (${other.map((e) => e.path).join(", ")}): policy sets take .rego modules only, without data documents.`,
        );
      }
      for (const entry of entries)
        modules.push({
          name: entry.path
            .split("/")
            .pop()!
            .replace(/\.rego$/, ""),
          source: new TextDecoder().decode(entry.data),
        });
    } else if (file.name.endsWith(".rego")) {
      modules.push({ name: file.name.replace(/\.rego$/, ""), source: await file.text() });
    } else {
      throw new Error(`${file.name} is neither a .rego file nor a .tar.gz of them.`);
    }
  }
  if (modules.length === 0) throw new Error("Choose at least one .rego file or a .tar.gz of them.");
  return modules;
}
