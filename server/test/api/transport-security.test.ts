// Transport-dependent security: the session cookie's Secure attribute follows the connection (TLS)
// or the public URL, whichever is https.
import { readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { listenOverHttps } from "../support/https-listener.ts";
import { createUser } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const cookie = suite("session cookie Secure attribute");

function signInBody(email: string, password: string): string {
  return JSON.stringify({ data: { type: "sessions", attributes: { email, password } } });
}

/** Signs in over the server's HTTPS listener (the local CA's certificate); returns the Set-Cookie header. */
async function signInOverHttps(
  server: TestServer,
  email: string,
  password: string,
): Promise<{ status: number; setCookie: string }> {
  const https = await listenOverHttps(server);
  const tls = https.tls;
  try {
    const body = signInBody(email, password);
    return await new Promise((resolve, reject) => {
      const req = httpsRequest(
        `https://localhost:${https.port}/v1/auth/sessions`,
        {
          method: "POST",
          ca: readFileSync(tls.caFile, "utf8"),
          agent: false,
          headers: { "Content-Type": "application/vnd.api+json", "Content-Length": Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, setCookie: (res.headers["set-cookie"] ?? [""])[0] }),
          );
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  } finally {
    await https.close();
  }
}

const attributes = (setCookie: string) => setCookie.split(";").map((part) => part.trim().toLowerCase());

testEachServer(
  cookie,
  "a sign-in over the HTTPS listener sets a Secure cookie although STACKSHIP_PUBLIC_URL is http; over plain http it does not",
  async (server) => {
    assert.is(server.services.config.publicUrl, "http://stackship.test");
    const { email, password } = await createUser(server);
    const overTls = await signInOverHttps(server, email, password);
    assert.is(overTls.status, 201);
    assert.ok(overTls.setCookie.startsWith("stackship_session="), overTls.setCookie);
    assert.ok(attributes(overTls.setCookie).includes("secure"), `Secure over TLS: ${overTls.setCookie}`);
    assert.ok(attributes(overTls.setCookie).includes("httponly"));

    const overHttp = await fetch(`${server.baseUrl}/v1/auth/sessions`, {
      method: "POST",
      headers: { "Content-Type": "application/vnd.api+json" },
      body: signInBody(email, password),
    });
    assert.is(overHttp.status, 201);
    const setCookie = overHttp.headers.get("set-cookie") ?? "";
    assert.ok(setCookie.startsWith("stackship_session="), setCookie);
    assert.not.ok(
      attributes(setCookie).includes("secure"),
      `no Secure over plain http with an http public URL (the local dashboard): ${setCookie}`,
    );
  },
  { config: { publicUrl: "http://stackship.test" } },
);

testEachServer(
  cookie,
  "an https public URL makes the cookie Secure even over plain http (a TLS-terminating proxy in front)",
  async (server) => {
    const { email, password } = await createUser(server);
    const response = await fetch(`${server.baseUrl}/v1/auth/sessions`, {
      method: "POST",
      headers: { "Content-Type": "application/vnd.api+json" },
      body: signInBody(email, password),
    });
    assert.is(response.status, 201);
    assert.ok(attributes(response.headers.get("set-cookie") ?? "").includes("secure"));
  },
  { config: { publicUrl: "https://stackship.test" } },
);

cookie.run();
