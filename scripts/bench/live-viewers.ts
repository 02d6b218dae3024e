/**
 * The viewers of `bench live`, in their own process so the server's numbers are its own:
 * `node --import tsx live-viewers.ts <ws url> <origin> <cookie> <count>` (forked with IPC).
 * Opens `count` sockets 100 at a time, reports handshake → hello times, then for every log chunk
 * reports when the last viewer got it and every viewer's receipt time (epoch ms, sub-ms precision).
 */
import { performance } from "node:perf_hooks";
import { WebSocket, type RawData } from "ws";

const [url, origin, cookie, countText] = process.argv.slice(2);
const count = Number(countText);
const now = () => performance.timeOrigin + performance.now();
const receipts = new Map<number, number[]>();
const sockets: WebSocket[] = [];

/** A message's text (with the default binaryType, "nodebuffer", every message arrives as one Buffer). */
function frameText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  return (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString("utf8");
}

function open(): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = now();
    const ws = new WebSocket(url, { headers: { Cookie: cookie }, origin });
    sockets.push(ws);
    ws.on("message", (data) => {
      const message = JSON.parse(frameText(data)) as { type: string; seq?: number };
      if (message.type === "hello") resolve(now() - start);
      else if (message.type === "log") {
        const at = now();
        const list = receipts.get(message.seq!) ?? [];
        list.push(at);
        receipts.set(message.seq!, list);
        if (list.length === count) process.send!({ type: "delivered", seq: message.seq, receipts: list });
      }
    });
    ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once("error", reject);
  });
}

const started = now();
const times: number[] = [];
for (let batch = 0; batch < count; batch += 100)
  times.push(...(await Promise.all(Array.from({ length: Math.min(100, count - batch) }, open))));
process.send!({ type: "connected", total: now() - started, times });
process.on("message", (message: { type: string }) => {
  if (message.type !== "close") return;
  for (const ws of sockets) ws.close();
  setTimeout(() => process.exit(0), 200);
});
