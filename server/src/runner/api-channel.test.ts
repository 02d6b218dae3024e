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

function send(
  socketPath: string,
  method: string,
  urlPath: string,
  options: { body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { socketPath, method, path: urlPath, headers: { host: "127.0.0.1:7480", ...options.headers }, agent: false },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on("error", reject);
    request.end(options.body);
  });
}

const get = (socketPath: string, urlPath: string) => send(socketPath, "GET", urlPath);

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
    await get(socketPath, "/.well-known/terraform.json");
    assert.is(channel.connectionCount, 2);

    await channel.close();
    await channel.close();
    assert.not.ok(existsSync(socketPath), "socket file removed");
    const afterClose = await get(socketPath, "/api/v2/ping").then(
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
    // A request the API never answers keeps both connections open.
    client.write("GET /api/v2/ping HTTP/1.1\r\nHost: 127.0.0.1:7480\r\n\r\n");
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
    client.write("GET /api/v2/ping HTTP/1.1\r\nHost: 127.0.0.1:7480\r\n\r\n");
    let received = 0;
    client.on("data", (chunk) => (received += chunk.length));
    await new Promise((resolve) => client.once("close", resolve));
    assert.is(received, 0);
    await channel.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("forwards only the operations a run token may call: everything else is 403 at the channel and never reaches the API", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "stackship-channel-test-"));
  const seen: string[] = [];
  const api = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} xff=${String(req.headers["x-forwarded-for"] ?? "-")}`);
    req.resume();
    req.on("end", () => res.end("api"));
  });
  const port = await listen(api);
  const channel = await openApiChannel({ socketPath: path.join(dir, "api.sock"), target: { host: "127.0.0.1", port } });
  try {
    const body = JSON.stringify({
      data: { type: "sessions", attributes: { email: "someone@example.com", password: "guess" } },
    });
    const refused = [
      ["POST", "/v1/auth/sessions"],
      ["POST", "/v1/auth/sessions/"],
      ["POST", "/V1/AUTH/SESSIONS"],
      ["GET", "/v1/organizations"],
      ["POST", "/api/v2/runs"],
      ["GET", "/api/v2/plans/plan-1/json-output"],
      ["GET", "/metrics"],
      ["GET", "/"],
      ["GET", "/api/v2/ping/../../v1/organizations"],
      ["HEAD", "/api/v2/ping"],
    ];
    for (const [method, urlPath] of refused) {
      const answer = await send(channel.socketPath, method, urlPath, { body: method === "POST" ? body : undefined });
      assert.is(answer.status, 403, `${method} ${urlPath}`);
      if (method !== "HEAD")
        assert.is((JSON.parse(answer.body) as { errors: Array<{ code: string }> }).errors[0].code, "FORBIDDEN");
    }
    // An absolute-form target is refused too (the API would see another path than the one checked).
    const client = net.connect({ path: channel.socketPath });
    const absolute = await new Promise<string>((resolve) => {
      let text = "";
      client.on("data", (chunk) => (text += chunk.toString()));
      client.on("close", () => resolve(text));
      client.on("error", () => resolve(text));
      client.write(
        "POST http://127.0.0.1:7480/v1/auth/sessions HTTP/1.1\r\nHost: 127.0.0.1:7480\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
      );
    });
    assert.match(absolute, /^HTTP\/1\.1 403 /);
    assert.equal(seen, [], "no refused request reached the API");

    const allowed = [
      ["GET", "/.well-known/terraform.json"],
      ["GET", "/api/v2/ping"],
      ["GET", "/api/v2/organizations/acme/workspaces/app"],
      ["POST", "/api/v2/workspaces/ws-1/actions/lock"],
      ["POST", "/api/v2/workspaces/ws-1/actions/unlock"],
      ["GET", "/api/v2/workspaces/ws-1/current-state-version"],
      ["POST", "/api/v2/workspaces/ws-1/state-versions"],
      ["GET", "/api/v2/state-versions/sv-1/download"],
      ["PUT", "/api/v2/uploads/state-versions/tok"],
      ["PUT", "/api/v2/uploads/state-versions-json/tok"],
    ];
    for (const [method, urlPath] of allowed) {
      const answer = await send(channel.socketPath, method, `${urlPath}?q=1`, {
        body: method === "GET" ? undefined : "{}",
        headers: { "X-Forwarded-For": "203.0.113.9" },
      });
      assert.is(answer.status, 200, `${method} ${urlPath}`);
      assert.is(answer.body, "api");
    }
    // Forwarded as sent, but never with a client-address header the sandbox made up.
    assert.equal(
      seen,
      allowed.map(([method, urlPath]) => `${method} ${urlPath}?q=1 xff=-`),
    );
  } finally {
    await channel.close();
    api.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
