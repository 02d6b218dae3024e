import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openApiChannel } from "./api-channel.ts";

const test = suite("api channel");

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

function get(socketPath: string, urlPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get({ socketPath, path: urlPath, headers: { host: "127.0.0.1:7480" }, agent: false }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
  });
}

test("relays HTTP through the Unix socket to the API and removes the socket on close", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "stackship-channel-test-"));
  const api = http.createServer((req, res) => res.end(`api saw ${req.method} ${req.url} host=${req.headers.host}`));
  const port = await listen(api);
  try {
    const socketPath = path.join(dir, "api.sock");
    const channel = await openApiChannel({ socketPath, target: { host: "127.0.0.1", port } });
    const first = await get(socketPath, "/api/v2/ping");
    assert.is(first.status, 200);
    assert.is(first.body, "api saw GET /api/v2/ping host=127.0.0.1:7480");
    await get(socketPath, "/again");
    assert.is(channel.connectionCount, 2);

    await channel.close();
    await channel.close();
    assert.not.ok(existsSync(socketPath), "socket file removed");
    const afterClose = await get(socketPath, "/after-close").then(
      () => "answered",
      (error: NodeJS.ErrnoException) => error.code,
    );
    assert.is(afterClose, "ENOENT");
  } finally {
    api.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("close cuts connections that are still open", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "stackship-channel-test-"));
  const upstreamSockets: net.Socket[] = [];
  const api = net.createServer((socket) => upstreamSockets.push(socket));
  const port = await listen(api);
  try {
    const socketPath = path.join(dir, "api.sock");
    const channel = await openApiChannel({ socketPath, target: { host: "127.0.0.1", port } });
    const client = net.connect({ path: socketPath });
    await new Promise((resolve) => client.once("connect", resolve));
    const ended = new Promise((resolve) => client.once("close", resolve));
    client.on("error", () => {});
    while (upstreamSockets.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await channel.close();
    await ended;
  } finally {
    for (const socket of upstreamSockets) socket.destroy();
    api.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("an unreachable API closes the client connection instead of hanging", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "stackship-channel-test-"));
  const probe = net.createServer();
  const deadPort = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  try {
    const socketPath = path.join(dir, "api.sock");
    const channel = await openApiChannel({ socketPath, target: { host: "127.0.0.1", port: deadPort } });
    const client = net.connect({ path: socketPath });
    client.on("error", () => {});
    let received = 0;
    client.on("data", (chunk) => (received += chunk.length));
    await new Promise((resolve) => client.once("close", resolve));
    assert.is(received, 0);
    await channel.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
