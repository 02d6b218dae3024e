// The logs of a run with structured output (issue 29): its plan and apply keep both forms, the
// `-json` UI lines the CLI reads through log-read-url and their human rendering, which /v1 and the
// live feed serve. Both are redacted by value: a secret that tofu's JSON escapes once (a quote, a
// backslash, Go's `\u003c`) or twice (a diagnostic that quoted it, inside a JSON line) never gets
// through, however the output is cut into chunks.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readFramedLog } from "../../src/api/tfe/logs.ts";
import { REDACTED } from "../../src/domain/redaction/index.ts";
import { PhaseLog } from "../../src/runner/phase-log.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { readLog, startRun, fixture } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";

const test = suite("structured run output: JSON log lines and their human form");

/** A canary with every character tofu's JSON escapes. */
const SECRET = `canary-${Math.random().toString(36).slice(2)}-"q"\\b<&>`;

/** Every spelling of the canary: as is, JSON-escaped once and twice, with and without Go's escapes. */
function spellings(value: string): string[] {
  const go = (text: string) => text.replace(/[<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  const once = JSON.stringify(value).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  return [value, once, go(once), twice, go(twice), value.slice(0, 16)];
}

/** What tofu -json prints: Go-escaped JSON lines, one quoting the secret in a diagnostic (escaped twice), human init text before. */
function tofuJsonOutput(): string {
  const goJson = (value: unknown) =>
    JSON.stringify(value).replace(/[<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return [
    "Initializing the backend...",
    goJson({ "@level": "info", "@message": "OpenTofu 1.12.6", type: "version" }),
    goJson({
      "@level": "info",
      "@message": "terraform_data.a: Creating...",
      type: "apply_start",
      hook: { resource: { addr: "terraform_data.a" } },
    }),
    goJson({
      "@level": "error",
      "@message": `Error: Invalid value ${JSON.stringify(SECRET)}`,
      type: "diagnostic",
      diagnostic: {
        severity: "error",
        summary: `Invalid value ${JSON.stringify(SECRET)}`,
        detail: `The value ${SECRET} is not allowed.`,
      },
    }),
    goJson({
      "@level": "info",
      "@message": "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.",
      type: "change_summary",
    }),
    "",
  ].join("\n");
}

async function structuredRun(server: TestServer) {
  const { token, organizationName } = await createOrganizationWithToken(server, "acme");
  const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
  const patched = await fetch(`${server.baseUrl}/v1/workspaces/${workspace.id}`, {
    method: "PATCH",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({ data: { type: "workspaces", attributes: { structured_run_output_enabled: true } } }),
  });
  assert.is(patched.status, 200);
  const run = (await server.services.stores.runs.getById(
    (await startRun(server, token, workspace.id, fixture("basic"))).id,
  ))!;
  assert.is(run.structuredRunOutput, true);
  return { token, run };
}

for (const piece of [1, 7, 64, 100_000]) {
  testEachServer(
    test,
    `apply output in pieces of ${piece}: the CLI reads JSON lines, /v1 and the live feed human text, neither holds the secret`,
    async (server) => {
      const { token, run } = await structuredRun(server);
      const log = new PhaseLog(server.services.stores, run.id, "apply", server.services.clock, [SECRET], {
        json: true,
      });
      const text = tofuJsonOutput();
      for (let at = 0; at < text.length; at += piece) log.write(text.slice(at, at + piece));
      await log.close();

      const framed = Buffer.from(await readFramedLog(server.services, run, "apply", 0, 1 << 20)).toString("utf8");
      assert.is(framed[0], "\u0002");
      assert.is(framed.at(-1), "\u0003");
      // After the three header lines the CLI drops: tofu's lines, each JSON line still one valid JSON object.
      const lines = framed.slice(1, -1).split("\n").slice(3);
      assert.is(lines[0], "Initializing the backend...");
      const ui = lines
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { type: string; "@message": string });
      assert.equal(
        ui.map((line) => line.type),
        ["version", "apply_start", "diagnostic", "change_summary"],
      );
      assert.ok(ui[2]["@message"].includes(REDACTED), ui[2]["@message"]);

      const human = await readLog(server, token, run.id, "apply");
      assert.is(
        human,
        `Initializing the backend...\nterraform_data.a: Creating...\n\nError: Invalid value "${REDACTED}"\n\nThe value ${REDACTED} is not allowed.\n\nApply complete! Resources: 1 added, 0 changed, 0 destroyed.\n\n`,
      );
      const live = (await server.services.stores.logs.chunksFrom(run.id, "apply", 0, 10_000))
        .map((chunk) => chunk.text)
        .join("");
      assert.is(live, human);
      for (const spelling of spellings(SECRET)) {
        for (const [where, served] of [
          ["the CLI's log", framed],
          ["/v1", human],
        ]) {
          assert.not.ok(served.includes(spelling), `${where} holds ${JSON.stringify(spelling)}`);
        }
      }
    },
  );
}

testEachServer(
  test,
  "a held plan log: both forms wait for the plan's values and are redacted with them; a run without structured output keeps one human log",
  async (server) => {
    const { run } = await structuredRun(server);
    const log = new PhaseLog(server.services.stores, run.id, "plan", server.services.clock, [], {
      hold: true,
      json: true,
    });
    log.write(tofuJsonOutput());
    assert.is((await server.services.stores.logs.allPositions(run.id)).plan_json.byteLength, 0);
    log.release([SECRET]);
    await log.close();
    const positions = await server.services.stores.logs.allPositions(run.id);
    assert.ok(positions.plan_json.complete && positions.plan.complete);
    const framed = Buffer.from(await readFramedLog(server.services, run, "plan", 0, 1 << 20)).toString("utf8");
    assert.match(framed, '"type":"apply_start"');
    for (const spelling of spellings(SECRET))
      assert.not.ok(framed.includes(spelling), `the CLI's plan log holds ${JSON.stringify(spelling)}`);
    const human = (await server.services.stores.logs.read(run.id, "plan", 0, 1 << 20)).text;
    assert.not.match(human, '"@level"');
    assert.match(human, "terraform_data.a: Creating...");

    // The switch off: the same output is stored once, as it came, and the CLI reads that.
    const { token: other, organizationName } = await createOrganizationWithToken(server, "plain");
    const workspace = await createWorkspace(server, other, organizationName, {
      name: "app",
      structured_run_output_enabled: false,
    });
    const plain = (await server.services.stores.runs.getById(
      (await startRun(server, other, workspace.id, fixture("basic"))).id,
    ))!;
    assert.is(plain.structuredRunOutput, false);
    const plainLog = new PhaseLog(server.services.stores, plain.id, "apply", server.services.clock, [SECRET], {
      json: plain.structuredRunOutput,
    });
    plainLog.write("Apply complete!\n");
    await plainLog.close();
    const plainPositions = await server.services.stores.logs.allPositions(plain.id);
    assert.is(plainPositions.apply_json.byteLength, 0);
    assert.match(
      Buffer.from(await readFramedLog(server.services, plain, "apply", 0, 1 << 20)).toString("utf8"),
      "Apply complete!\n",
    );
  },
);

test.run();
