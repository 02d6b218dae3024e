// Bad input the fuzzing found (issue 12 §6): gzip bombs in configuration uploads, JSON bodies that
// are not UTF-8. Each is refused with a JSON:API error and a stable code, and nothing is written.
import { storedArtifactKeys } from "../support/artifacts.ts";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { gzipSync } from "node:zlib";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { listVariables } from "../../../client/src/index.ts";
import { allTablesUnchanged, setUpAcme } from "../support/api-requests.ts";
import { createPendingConfiguration, putUpload } from "../support/factories.ts";
import { expectStatus, expectV1Error, type SdkResult } from "../support/responses.ts";
import { tarArchive } from "../support/tar.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

/** A fetch Response as the SDK result shape the error helpers take. */
async function asResult(response: Response): Promise<SdkResult> {
  const text = await response.text();
  const body: unknown = text ? JSON.parse(text) : undefined;
  return { response, data: response.ok ? body : undefined, error: response.ok ? undefined : body };
}

/** The bomb: about 0.5 MB of gzip that inflates to 500 MiB of zeros. */
const BOMB = gzipSync(Buffer.alloc(500 * 1024 * 1024), { level: 9 });

// ---------------------------------------------------------------------------------------------
const bombs = suite("configuration upload: gzip bombs and unsafe archives");

testEachServer(
  bombs,
  "refuses a 0.5 MB gzip bomb (500 MiB inflated) with 422 CONFIGURATION_UPLOAD_INVALID naming the ratio, and writes nothing",
  async (server) => {
    const { token, workspace } = await setUpAcme(server);
    assert.ok(BOMB.length < 600_000, String(BOMB.length));
    const pending = await createPendingConfiguration(server, token, workspace.id);
    const before = await storedArtifactKeys(server);
    const result = await allTablesUnchanged(server, async () =>
      asResult(await putUpload(pending.attributes.upload_url!, BOMB)),
    );
    const error = expectV1Error(result, 422, "CONFIGURATION_UPLOAD_INVALID");
    assert.match(error.detail!, "compression bomb");
    assert.equal(await storedArtifactKeys(server), before);
    // A bomb that is a tar archive (a zero-filled file, well over the ratio) is refused the same way.
    const tarBomb = gzipSync(tarArchive([{ name: "zeros.bin", data: Buffer.alloc(64 * 1024 * 1024) }]), { level: 9 });
    const tarResult = await allTablesUnchanged(server, async () =>
      asResult(await putUpload(pending.attributes.upload_url!, tarBomb)),
    );
    assert.match(expectV1Error(tarResult, 422, "CONFIGURATION_UPLOAD_INVALID").detail!, "compression bomb");
    assert.equal(await storedArtifactKeys(server), before);
  },
);

testEachServer(
  bombs,
  "answers /healthz while four bombs are inspected in parallel (responses arrive while inspections are in flight)",
  async (server) => {
    const { token, workspace } = await setUpAcme(server);
    const pendings = await Promise.all([0, 1, 2, 3].map(() => createPendingConfiguration(server, token, workspace.id)));
    const inspector = server.services.uploadInspector;
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let uploadsDone = 0;
    const uploads = pendings.map(async (pending) => {
      const result = await asResult(await putUpload(pending.attributes.upload_url!, BOMB));
      uploadsDone += 1;
      return result;
    });
    // Wait (by ordering, not by time) until inspections are under way.
    while (inspector.inFlight === 0 && uploadsDone === 0) await new Promise((resolve) => setImmediate(resolve));
    let answeredInFlight = 0;
    let answered = 0;
    while (uploadsDone < 4) {
      const health = await fetch(`${server.baseUrl}/healthz`);
      assert.is(health.status, 200);
      await health.arrayBuffer();
      answered += 1;
      if (inspector.inFlight > 0 && uploadsDone < 4) answeredInFlight += 1;
    }
    delay.disable();
    for (const result of await Promise.all(uploads)) expectV1Error(result, 422, "CONFIGURATION_UPLOAD_INVALID");
    // The event loop served /healthz while the bombs were being inflated (on the workers).
    assert.ok(answeredInFlight >= 1, `no /healthz answer while an inspection was in flight (${answered} answered)`);
    console.log(
      `  /healthz answered ${answeredInFlight} times while bombs were inspected; event-loop delay max ${(delay.max / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms`,
    );
    assert.is(inspector.inFlight, 0);
  },
);

testEachServer(
  bombs,
  "beyond the inspections and the queue, an upload is refused with 503 CONFIGURATION_UPLOAD_BUSY and writes nothing; the same URL works later",
  async (server) => {
    const { token, workspace } = await setUpAcme(server);
    const pendings = await Promise.all([0, 1, 2].map(() => createPendingConfiguration(server, token, workspace.id)));
    const inspector = server.services.uploadInspector;
    // One inspection and one waiting upload: the third is refused.
    const first = putUpload(pendings[0].attributes.upload_url!, BOMB);
    while (inspector.inFlight === 0) await new Promise((resolve) => setImmediate(resolve));
    const second = putUpload(pendings[1].attributes.upload_url!, BOMB);
    while (inspector.queued === 0 && inspector.inFlight === 1) await new Promise((resolve) => setImmediate(resolve));
    let busy: SdkResult | null = null;
    if (inspector.queued === 1) {
      busy = await asResult(
        await putUpload(pendings[2].attributes.upload_url!, gzipSync(tarArchive([{ name: "main.tf", data: "# x\n" }]))),
      );
    }
    await Promise.all([first, second]);
    if (busy) {
      const error = expectV1Error(busy, 503, "CONFIGURATION_UPLOAD_BUSY");
      assert.match(error.detail!, "Upload again");
    } else console.log("  (the inspections finished before the third upload arrived; busy not observed)");
    const later = await putUpload(
      pendings[2].attributes.upload_url!,
      gzipSync(tarArchive([{ name: "main.tf", data: "# x\n" }])),
    );
    assert.is(later.status, 200);
  },
  { config: { uploadInspections: 1, uploadInspectionQueue: 1 } },
);

testEachServer(
  bombs,
  "refuses path traversal, absolute paths, escaping symlinks, bad hard links and devices with 422 CONFIGURATION_UPLOAD_INVALID, and writes nothing",
  async (server) => {
    const { token, workspace } = await setUpAcme(server);
    const pending = await createPendingConfiguration(server, token, workspace.id);
    const before = await storedArtifactKeys(server);
    const main = { name: "main.tf", data: 'resource "terraform_data" "x" {}\n' };
    const cases: Array<[string, Parameters<typeof tarArchive>[0], string]> = [
      ["traversal", [main, { name: "../../etc/cron.d/x", data: "* * * * * root id\n" }], "path traversal"],
      ["absolute", [main, { name: "/etc/passwd", data: "x" }], "absolute path"],
      ["escaping symlink", [main, { name: "host", type: "2", linkname: "../../../../" }], "points outside"],
      ["absolute symlink", [main, { name: "host", type: "2", linkname: "/etc" }], "absolute path"],
      [
        "write through a symlink",
        [
          { name: "d", type: "2", linkname: "." },
          { name: "d/x.tf", data: "x" },
        ],
        "inside the symlink",
      ],
      ["hard link out", [main, { name: "shadow", type: "1", linkname: "/etc/shadow" }], "absolute path"],
      ["hard link to nothing", [main, { name: "h", type: "1", linkname: "missing.tf" }], "not a regular file earlier"],
      ["device", [main, { name: "null", type: "3" }], "device file"],
    ];
    for (const [label, entries, why] of cases) {
      const result = await allTablesUnchanged(server, async () =>
        asResult(await putUpload(pending.attributes.upload_url!, gzipSync(tarArchive(entries)))),
      );
      const error = expectV1Error(result, 422, "CONFIGURATION_UPLOAD_INVALID");
      assert.match(error.detail!, why, label);
    }
    assert.equal(await storedArtifactKeys(server), before);
    // The same URL still takes a good archive.
    assert.is((await putUpload(pending.attributes.upload_url!, gzipSync(tarArchive([main])))).status, 200);
  },
);

// ---------------------------------------------------------------------------------------------
const utf8 = suite("JSON bodies that are not UTF-8");

/** `prefix` + raw bytes + `suffix`: a JSON text with invalid UTF-8 inside. */
function withBytes(prefix: string, bytes: number[], suffix: string): Buffer {
  return Buffer.concat([Buffer.from(prefix), Buffer.from(bytes), Buffer.from(suffix)]);
}

function send(server: TestServer, method: string, path: string, token: string, body: Buffer): Promise<SdkResult> {
  return fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
    body: body as unknown as BodyInit,
  }).then(asResult);
}

testEachServer(
  utf8,
  "v1: a variable value a\\xff\\xfeb is 400 REQUEST_ENCODING_INVALID at its pointer and nothing is written; valid multi-byte text is kept exactly",
  async (server) => {
    const { token, workspace } = await setUpAcme(server);
    const path = `/v1/workspaces/${workspace.id}/variables`;
    const cases: Array<[Buffer, string]> = [
      [
        withBytes('{"data":{"type":"variables","attributes":{"key":"k","value":"a', [0xff, 0xfe], 'b"}}}'),
        "/data/attributes/value",
      ],
      // Invalid in a member name: the pointer is the object holding it.
      [
        withBytes('{"data":{"type":"variables","attributes":{"key":"k","value":"v","x', [0xc0, 0xaf], '":1}}}'),
        "/data/attributes",
      ],
      // A lone continuation byte, a truncated sequence, an encoded surrogate, a code point above U+10FFFF.
      [
        withBytes('{"data":{"type":"variables","attributes":{"key":"k","value":"', [0x80], '"}}}'),
        "/data/attributes/value",
      ],
      [
        withBytes('{"data":{"type":"variables","attributes":{"key":"k","value":"', [0xe2, 0x82], '"}}}'),
        "/data/attributes/value",
      ],
      [
        withBytes('{"data":{"type":"variables","attributes":{"key":"k","value":"', [0xed, 0xa0, 0x80], '"}}}'),
        "/data/attributes/value",
      ],
      [
        withBytes('{"data":{"type":"variables","attributes":{"key":"k","value":"', [0xf4, 0x90, 0x80, 0x80], '"}}}'),
        "/data/attributes/value",
      ],
      // Outside any string: the whole body.
      [withBytes('{"data":', [0xff], "}"), ""],
    ];
    for (const [body, pointer] of cases) {
      const result = await allTablesUnchanged(server, () => send(server, "POST", path, token, body));
      const error = expectV1Error(result, 400, "REQUEST_ENCODING_INVALID", { pointer });
      assert.match(error.detail!, "not valid UTF-8");
    }
    const text = "aé✓😀b";
    const created = await send(
      server,
      "POST",
      path,
      token,
      Buffer.from(JSON.stringify({ data: { type: "variables", attributes: { key: "k", value: text } } })),
    );
    assert.is(created.response.status, 201, JSON.stringify(created.error));
    const listed = expectStatus(
      await listVariables({ client: server.v1(token), path: { workspace_id: workspace.id } }),
      200,
    );
    assert.is(listed.data[0].attributes.value, text);
  },
);

testEachServer(
  utf8,
  "/api/v2: a workspace description a\\xff\\xfeb is 400 REQUEST_ENCODING_INVALID at its pointer and nothing is written",
  async (server) => {
    const { organizationName, token } = await setUpAcme(server);
    const path = `/api/v2/organizations/${organizationName}/workspaces`;
    const bad = withBytes(
      '{"data":{"type":"workspaces","attributes":{"name":"app","description":"a',
      [0xff, 0xfe],
      'b"}}}',
    );
    const result = await allTablesUnchanged(server, () => send(server, "POST", path, token, bad));
    assert.is(result.response.status, 400, JSON.stringify(result.error));
    const [error] = (
      result.error as {
        errors: Array<{ status: string; code: string; title: string; detail: string; source?: { pointer?: string } }>;
      }
    ).errors;
    assert.is(error.status, "400");
    assert.is(error.code, "REQUEST_ENCODING_INVALID");
    assert.is(error.source?.pointer, "/data/attributes/description");
    assert.match(error.detail, "not valid UTF-8");
    const good = await send(
      server,
      "POST",
      path,
      token,
      Buffer.from(JSON.stringify({ data: { type: "workspaces", attributes: { name: "app", description: "aé😀b" } } })),
    );
    assert.is(good.response.status, 201, JSON.stringify(good.error));
  },
);

bombs.run();
utf8.run();
