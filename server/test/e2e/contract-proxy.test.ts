// The contract mode's own check: a response that violates spec/tfe is refused by prism and
// recorded readably, a conforming one passes, and paths outside spec/tfe bypass prism.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { describeViolations, startContractProxy } from "./contract-proxy.ts";

test("prism refuses a response that violates spec/tfe and the front records why; other paths go direct", async () => {
  const seen: string[] = [];
  const upstream: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} host=${req.headers.host}`);
    if (req.url === "/api/v2/organizations/good/entitlement-set") {
      res.writeHead(200, { "content-type": "application/vnd.api+json" });
      res.end(
        JSON.stringify({
          data: {
            id: "org-good",
            type: "entitlement-sets",
            attributes: {
              operations: true,
              "private-module-registry": false,
              sentinel: false,
              "state-storage": true,
              teams: false,
              "vcs-integrations": false,
            },
          },
        }),
      );
    } else if (req.url === "/api/v2/organizations/bad/entitlement-set") {
      res.writeHead(200, { "content-type": "application/vnd.api+json" });
      res.end(JSON.stringify({ data: { id: 42, type: "nope" } }));
    } else if (req.url === "/api/v2/organizations/conflict/entitlement-set") {
      // 409 is not among the operation's responses: prism passes it, with a warning.
      res.writeHead(409, { "content-type": "application/vnd.api+json" });
      res.end(JSON.stringify({ errors: [{ status: "409", title: "conflict", detail: "undeclared" }] }));
    } else {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("direct");
    }
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const proxy = await startContractProxy({ upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` });
  try {
    const base = `http://127.0.0.1:${proxy.port}`;
    const headers = { Authorization: "Bearer t", Accept: "application/vnd.api+json" };
    const good = await fetch(`${base}/api/v2/organizations/good/entitlement-set`, { headers });
    const goodBody = await good.text();
    assert.is(good.status, 200, goodBody);

    const bad = await fetch(`${base}/api/v2/organizations/bad/entitlement-set`, { headers });
    assert.is(bad.status, 500);
    assert.match(bad.headers.get("content-type") ?? "", "application/problem+json");
    await bad.text();

    const conflict = await fetch(`${base}/api/v2/organizations/conflict/entitlement-set`, { headers });
    assert.is(conflict.status, 409);
    await conflict.text();

    const upload = await fetch(`${base}/uploads/configuration-versions/abc`, {
      method: "PUT",
      body: new Uint8Array([0x1f, 0x8b, 0xff, 0x00]),
    });
    assert.is(await upload.text(), "direct");

    assert.equal(proxy.validated, [
      "GET /api/v2/organizations/good/entitlement-set 200",
      "GET /api/v2/organizations/bad/entitlement-set 500",
      "GET /api/v2/organizations/conflict/entitlement-set 409",
    ]);
    assert.equal(proxy.direct, ["PUT /uploads/configuration-versions/abc 200"]);
    assert.is(proxy.violations.length, 2);
    const message = describeViolations(proxy);
    assert.match(message, "GET /api/v2/organizations/conflict/entitlement-set → 409: Violations prism let through");
    assert.match(message, "[Warning] response: Unable to match the returned status code");
    assert.match(message, "GET /api/v2/organizations/bad/entitlement-set → 500 prism VIOLATIONS");
    assert.match(message, "VIOLATIONS");
    assert.match(message, "response.body.data");
    // The server sees the front's host, so the absolute URLs it builds lead back through the front.
    assert.ok(
      seen.every((line) => line.endsWith(`host=localhost:${proxy.port}`)),
      seen.join("\n"),
    );
  } finally {
    await proxy.close();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  }
});

test.run();
