// Transport compression (issue 28): JSON documents, logs and plan-changes go out as brotli or gzip,
// as the request's Accept-Encoding prefers; the guarded downloads (raw plan stream, emergency
// state bytes) and attachments go out byte for byte, whatever the client accepts. Requests are
// made with node:http so the bytes on the wire are seen (fetch would decode them).
import { request as httpRequest } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { PhaseLog } from "../../src/runner/phase-log.ts";
import { largePlanDiff, storePlanDiff } from "../../../web/test/e2e/run-plan-diff-fixture.ts";
import { seededRun, storePlanArtifacts, storeState } from "../support/seeded-runs.ts";
import { signedInMember } from "../support/sessions.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import { firstError, type V1 } from "../support/documents.ts";

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function raw(
  server: TestServer,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.baseUrl}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

function decoded(response: Raw): Buffer {
  const encoding = response.headers["content-encoding"];
  if (encoding === "br") return brotliDecompressSync(response.body);
  if (encoding === "gzip") return gunzipSync(response.body);
  assert.is(encoding, undefined);
  return response.body;
}

/** `bytes` bytes of numbered log lines. */
function logText(bytes: number): string {
  let text = "";
  for (let i = 0; text.length < bytes; i++)
    text += `aws_iam_role.res_${i}: Creating... [id=arn:aws:iam::123456789012:role/res-${i}]\n`;
  return text.slice(0, bytes);
}

const compression = suite("responses are compressed per Accept-Encoding, never the guarded downloads");

testEachServer(
  compression,
  "plan-changes (5,000 resources) and a 1 MB log: br and gzip as asked, the same document decoded; identity without the header",
  async (server) => {
    const { org, run } = await seededRun(server);
    const auth = { Authorization: `Bearer ${org.token}` };
    const diff = largePlanDiff(run.id, 5_000);
    await storePlanDiff(server, run.id, diff);
    const path = `/v1/runs/${run.id}/plan-changes`;

    const plain = await raw(server, "GET", path, auth);
    assert.is(plain.status, 200);
    assert.is(plain.headers["content-encoding"], undefined);
    assert.is(plain.headers.vary, "Accept-Encoding");
    const document = JSON.parse(plain.body.toString("utf8")) as V1["PlanDiff"];
    assert.is(document.resources.length, 5_000);

    for (const [accept, expected] of [
      ["gzip, deflate, br", "br"],
      ["br;q=0.5, gzip", "gzip"],
      ["gzip", "gzip"],
      ["identity", undefined],
      ["deflate", undefined],
    ] as const) {
      const response = await raw(server, "GET", path, { ...auth, "Accept-Encoding": accept });
      assert.is(response.status, 200, accept);
      assert.is(response.headers["content-encoding"], expected, accept);
      assert.match(String(response.headers["content-type"]), /^application\/json\b/, accept);
      assert.is(response.headers.vary, "Accept-Encoding", accept);
      assert.equal(JSON.parse(decoded(response).toString("utf8")), document, accept);
      if (expected) {
        assert.is(Number(response.headers["content-length"]), response.body.length, accept);
        assert.ok(
          response.body.length * 10 < plain.body.length,
          `${accept}: ${response.body.length} of ${plain.body.length} bytes`,
        );
        // A strong validator names the identity bytes; the encoded body carries a weak one.
        assert.match(String(response.headers.etag), /^W\/"[0-9a-f]{64}"$/, accept);
      } else assert.match(String(response.headers.etag), /^"[0-9a-f]{64}"$/, accept);
    }

    // A 1 MB apply log, read as the console reads it (one window).
    const text = logText(1_000_000);
    const log = new PhaseLog(server.services.stores, run.id, "apply", server.services.clock, [], {
      maxBytes: server.services.config.phaseLogMaxBytes,
    });
    log.write(text);
    await log.close();
    const logPath = `/v1/runs/${run.id}/logs/apply?offset=0&limit=1048576`;
    const logPlain = await raw(server, "GET", logPath, auth);
    const logBr = await raw(server, "GET", logPath, { ...auth, "Accept-Encoding": "br, gzip" });
    assert.is(logBr.headers["content-encoding"], "br");
    assert.equal(JSON.parse(decoded(logBr).toString("utf8")), JSON.parse(logPlain.body.toString("utf8")));
    assert.is((JSON.parse(logPlain.body.toString("utf8")) as V1["RunLogDocument"]).data.attributes.text, text);
    assert.ok(
      logBr.body.length * 5 < logPlain.body.length,
      `log: ${logBr.body.length} of ${logPlain.body.length} bytes`,
    );

    // Error documents are JSON too (a small one is sent as it is).
    const missing = await raw(server, "GET", `/v1/runs/run-doesnotexist00000000/plan-changes`, {
      ...auth,
      "Accept-Encoding": "br",
    });
    assert.is(missing.status, 400);
    assert.ok(firstError(JSON.parse(decoded(missing).toString("utf8"))).code);
  },
);

testEachServer(
  compression,
  "the raw plan stream and the emergency state go out byte for byte with their exact length, whatever the client accepts",
  async (server) => {
    const { run, workspace, planDiff } = await seededRun(server);
    // Both large and compressible, so only the rule (never these) keeps them as they are.
    const planJson = Buffer.from(JSON.stringify({ format_version: "1.2", padding: logText(200_000) }));
    await storePlanArtifacts(server, run.id, planJson, planDiff);
    const pending = await storeState(
      server,
      workspace.id,
      run.id,
      3,
      "pending",
      Buffer.from(JSON.stringify({ version: 4, serial: 3, lineage: "l", resources: [], padding: logText(200_000) })),
    );
    const admin = await signedInMember(server, "acme", "admin");
    const headers = {
      Cookie: admin.session.cookie,
      "X-CSRF-Token": admin.session.csrfToken,
      "Content-Type": "application/vnd.api+json",
      "Accept-Encoding": "br, gzip",
    };
    const body = JSON.stringify({
      data: { type: "download-requests", attributes: { reason: "incident 42: verify the plan" } },
    });
    const plan = await raw(server, "POST", `/v1/runs/${run.id}/downloads/raw-plan`, headers, body);
    assert.is(plan.status, 200, plan.body.toString());
    assert.is(plan.headers["content-encoding"], undefined);
    assert.ok(plan.body.equals(planJson));
    assert.is(Number(plan.headers["content-length"]), planJson.length);

    const state = await raw(server, "POST", `/v1/runs/${run.id}/downloads/emergency-state`, headers, body);
    assert.is(state.status, 200, state.body.toString());
    assert.is(state.headers["content-encoding"], undefined);
    assert.ok(state.body.equals(pending.body));
    assert.is(Number(state.headers["content-length"]), pending.body.length);
  },
);

compression.run();
