// Loopback ports for a server that a test starts later, or starts again on the same port (SeaweedFS,
// a PostgreSQL cluster, prism, podman's published ports). A port the kernel hands out for port 0
// comes from the ephemeral range, which is also where every outgoing connection of every process
// on the machine takes its local port: between the pick and the bind (or across a restart) one of
// them can take it, and the server then fails to start. So these come from below that range
// (net.ipv4.ip_local_port_range), picked at random and checked free by binding them.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** The lowest port of the kernel's ephemeral range (32768 when it cannot be read). */
export function ephemeralLow(rangeFile = "/proc/sys/net/ipv4/ip_local_port_range"): number {
  try {
    const low = Number(readFileSync(rangeFile, "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 1024 ? low : 32768;
  } catch {
    return 32768;
  }
}

/** The ports picked from: [first, last], from 10000 up to just below the ephemeral range. */
export function candidateRange(low: number): { first: number; last: number } | null {
  const last = low - 1;
  const first = 10_000;
  return last - first >= 1_000 ? { first, last } : null;
}

/** Whether `port` can be bound now (on every address: a server on any of them would conflict). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/** A port the kernel picks (port 0): the fallback when no range lies below the ephemeral one. */
function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** `count` different ports, free now and outside the ephemeral range (`random` as Math.random). */
export async function freePorts(count: number, random: () => number = Math.random): Promise<number[]> {
  const range = candidateRange(ephemeralLow());
  const ports: number[] = [];
  for (let tries = 0; ports.length < count; tries++) {
    if (!range || tries > 1_000) {
      ports.push(await kernelPort());
      continue;
    }
    const port = range.first + Math.floor(random() * (range.last - range.first + 1));
    if (!ports.includes(port) && (await bindable(port))) ports.push(port);
  }
  return ports;
}

/** One port, as freePorts. */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0];
}
