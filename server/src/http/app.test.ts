// Koa's `error` event (a response failing under way, a client that went away) is logged with the
// request's own logger, so the line names the request id; without a request, with the server's.
import { Writable } from "node:stream";
import pino from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type Koa from "koa";
import type { Services } from "../commands/services.ts";
import { buildApp } from "./app.ts";

function capture(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: "debug" }, stream), lines };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test("a response error is logged with the request's logger (its request id), else with the server's", async () => {
  const server = capture();
  const app = buildApp(
    {
      config: { validateResponses: false, publicUrl: null, trustedProxies: [] },
      logger: server.logger,
    } as unknown as Services,
    [],
  );
  const request = server.logger.child({ request_id: "req-0001" });
  const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
  const context = { state: { log: request } } as unknown as Koa.Context;
  app.emit("error", reset, context);
  app.emit("error", new Error("disk gone"), context);
  app.emit("error", new Error("no request"));
  await settle();
  assert.is(server.lines.length, 3);
  assert.is(server.lines[0].request_id, "req-0001");
  assert.is(server.lines[0].msg, "the client went away before the response was complete");
  assert.is(server.lines[1].request_id, "req-0001");
  assert.is(server.lines[1].msg, "response failed");
  assert.is(server.lines[2].request_id, undefined);
  assert.is(server.lines[2].msg, "response failed");
});

test.run();
