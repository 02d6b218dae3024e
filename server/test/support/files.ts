import { closeSync, openSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";

/** Flips one bit of the byte at `position` of a file on disk (tampering with a stored object). */
export async function flipByte(file: string, position: number): Promise<void> {
  const handle = await open(file, "r+");
  try {
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, position);
    byte[0] ^= 0x20;
    await handle.write(byte, 0, 1, position);
  } finally {
    await handle.close();
  }
}

/** Fills the filesystem of `directory` to its last byte (writes until ENOSPC); returns the filler to remove. */
export function fillFilesystem(directory: string): string {
  const filler = join(directory, "filler");
  const fd = openSync(filler, "w");
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (let size = chunk.length; size >= 1; size = Math.floor(size / 2)) {
      for (;;) {
        try {
          writeSync(fd, chunk, 0, size);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "ENOSPC") break;
          throw error;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return filler;
}
