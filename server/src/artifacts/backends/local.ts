import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, open, rename, rm, stat, writeFile, type FileHandle } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { assertObjectKey, ObjectNotFoundError, type ObjectBackend } from "../object-backend.ts";

/** How much one read of a local object covers (16 frames of 64 KiB plus their tags). */
export const LOCAL_READ_BYTES = 16 * (64 * 1024 + 16);

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === "ENOENT";
}

/**
 * The embedded default: one file per object under a directory. A write goes to a temporary file
 * beside its target and is renamed over it once complete (atomic on one filesystem); a failed or
 * aborted source removes the temporary file. Reads stream in LOCAL_READ_BYTES batches.
 */
export class LocalObjectBackend implements ObjectBackend {
  readonly kind = "local";
  readonly root: string;

  constructor(directory: string) {
    this.root = resolve(directory);
  }

  private path(key: string): string {
    assertObjectKey(key);
    const path = resolve(join(this.root, key));
    if (!path.startsWith(this.root + sep)) throw new Error(`invalid artifact key '${key}'`);
    return path;
  }

  async write(key: string, source: AsyncIterable<Uint8Array>): Promise<number> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const temporary = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    let length = 0;
    const counted = async function* () {
      for await (const chunk of source) {
        length += chunk.byteLength;
        yield chunk;
      }
    };
    try {
      await pipeline(
        Readable.from(counted()),
        createWriteStream(temporary, { mode: 0o600, highWaterMark: LOCAL_READ_BYTES }),
      );
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return length;
  }

  /** A small object in one write of a temporary file, renamed over its target like `write`'s. */
  async writeWhole(key: string, bytes: Buffer): Promise<number> {
    const path = this.path(key);
    const directory = dirname(path);
    const temporary = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    const writeTemporary = () => writeFile(temporary, bytes, { mode: 0o600, flag: "wx" });
    try {
      try {
        await writeTemporary();
      } catch (error) {
        // The first object under its directory (or the directory was removed since): made, once.
        if (!isMissing(error)) throw error;
        await mkdir(directory, { recursive: true, mode: 0o700 });
        await writeTemporary();
      }
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return bytes.length;
  }

  async readWhole(key: string, maxBytes: number): Promise<Buffer | null> {
    const file = await this.openFile(key);
    try {
      const { size } = await file.stat();
      if (size > maxBytes) return null;
      const buffer = Buffer.allocUnsafe(size);
      let filled = 0;
      while (filled < size) {
        const { bytesRead } = await file.read(buffer, filled, size - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return buffer.subarray(0, filled);
    } finally {
      await file.close().catch(() => undefined);
    }
  }

  /**
   * Opens an object's file for positioned reads (the artifact store hands large objects' files to
   * its read worker). The caller closes the handle. Optional member of ObjectBackend.
   */
  async openFile(key: string): Promise<FileHandle> {
    try {
      return await open(this.path(key), "r");
    } catch (error) {
      if (isMissing(error)) throw new ObjectNotFoundError(key);
      throw error;
    }
  }

  read(key: string, range: { start?: number; end?: number } = {}): AsyncIterable<Uint8Array> {
    const open = () => this.openFile(key);
    return (async function* () {
      const file = await open();
      try {
        const { size } = await file.stat();
        let position = Math.max(0, range.start ?? 0);
        const end = Math.min(size, range.end ?? size);
        while (position < end) {
          const buffer = Buffer.allocUnsafe(Math.min(LOCAL_READ_BYTES, end - position));
          const { bytesRead } = await file.read(buffer, 0, buffer.length, position);
          if (bytesRead === 0) break;
          position += bytesRead;
          yield buffer.subarray(0, bytesRead);
        }
      } finally {
        await file.close().catch(() => undefined);
      }
    })();
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.path(key))).size;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async close(): Promise<void> {}
}
