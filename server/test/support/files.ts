import { open } from "node:fs/promises";

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
