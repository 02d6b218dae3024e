import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { WebSocket, type RawData } from "ws";
import { REPO_ROOT } from "../../src/config.ts";
import type { LiveLogMessage, LiveMessage } from "../../src/live/messages.ts";
import type { TestServer } from "./test-server.ts";

/** Every message is checked against spec/schemas/stackship.live.v1.json as it arrives. */
const validateMessage = new Ajv2020.default({ strict: true, allErrors: true }).compile(
  JSON.parse(readFileSync(join(REPO_ROOT, "spec/schemas/stackship.live.v1.json"), "utf8")),
);

/** A connected live socket and everything it received. */
export interface LiveClient {
  ws: WebSocket;
  messages: LiveMessage[];
  /** Messages that did not match the JSON Schema, with the validator's complaint. */
  invalid: string[];
  /** Resolves with the first message (already received or not) that matches, after `index` if given. */
  waitFor<T extends LiveMessage = LiveMessage>(
    predicate: (message: LiveMessage) => boolean,
    timeoutMs?: number,
  ): Promise<T>;
  /** The log messages received so far, in arrival order. */
  logs(phase?: LiveLogMessage["phase"]): LiveLogMessage[];
  /** Resolves with the close code and reason once the socket closed. */
  closed: Promise<{ code: number; reason: string }>;
}

/** What a refused upgrade answered. */
export interface LiveRefusal {
  status: number;
  body: { errors: Array<{ status: string; code: string; title: string; detail?: string }> } | null;
}

/** A message's text (with the default binaryType, "nodebuffer", every message arrives as one Buffer). */
function frameText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  return (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString("utf8");
}

/** The live socket URL of a run on the test server. */
export function liveUrl(server: TestServer, runId: string): string {
  return `${server.baseUrl.replace(/^http/, "ws")}/live/runs/${runId}`;
}

/** Opens a live socket: `{ client }` when the upgrade succeeded, `{ refusal }` when the server answered with an HTTP error. */
export function openLive(
  server: TestServer,
  runId: string,
  options: { cookie?: string; origin?: string | null; headers?: Record<string, string> } = {},
): Promise<{ client: LiveClient; refusal?: undefined } | { client?: undefined; refusal: LiveRefusal }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.cookie) headers.Cookie = options.cookie;
  const origin = options.origin === undefined ? server.baseUrl : options.origin;
  const ws = new WebSocket(liveUrl(server, runId), { headers, ...(origin === null ? {} : { origin }) });
  const messages: LiveMessage[] = [];
  const invalid: string[] = [];
  const waiters = new Set<() => void>();
  ws.on("message", (data) => {
    const text = frameText(data);
    const message = JSON.parse(text) as LiveMessage;
    if (!validateMessage(message)) invalid.push(`${text.slice(0, 200)}: ${JSON.stringify(validateMessage.errors)}`);
    messages.push(message);
    for (const wake of waiters) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })),
  );
  // `closed` never rejects.
  void closed.then(() => {
    for (const wake of waiters) wake();
  });
  const client: LiveClient = {
    ws,
    messages,
    invalid,
    closed,
    logs: (phase) =>
      messages.filter((m): m is LiveLogMessage => m.type === "log" && (phase === undefined || m.phase === phase)),
    waitFor(predicate, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(predicate);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found as never);
          } else if (ws.readyState === ws.CLOSED) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`socket closed before the awaited message; got ${messages.length} messages`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `timed out waiting for a live message; got ${messages.length}: ${JSON.stringify(messages.slice(-3))}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve({ client }));
    ws.once("unexpected-response", (_req, res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let body: LiveRefusal["body"] = null;
        try {
          body = JSON.parse(text) as LiveRefusal["body"];
        } catch {
          body = null;
        }
        ws.terminate();
        resolve({ refusal: { status: res.statusCode ?? 0, body } });
      });
    });
    ws.once("error", (error) => reject(error));
  });
}

/** Opens a live socket that must be accepted. */
export async function connectLive(
  server: TestServer,
  runId: string,
  options: { cookie?: string; origin?: string | null } = {},
): Promise<LiveClient> {
  const opened = await openLive(server, runId, options);
  if (!opened.client)
    throw new Error(`live upgrade refused: ${opened.refusal.status} ${JSON.stringify(opened.refusal.body)}`);
  return opened.client;
}

/** Closes a live socket from the client side and waits for the close; every message it got must have matched the schema. */
export async function disconnect(client: LiveClient): Promise<void> {
  if (client.invalid.length > 0)
    throw new Error(`live messages that violate spec/schemas/stackship.live.v1.json:\n${client.invalid.join("\n")}`);
  if (client.ws.readyState !== client.ws.CLOSED) client.ws.close(1000, "bye");
  await client.closed;
}
