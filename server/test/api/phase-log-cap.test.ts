// The cap of a phase's stored log (issue 25, part 6: one apply stored a 437 MiB log). With a small
// configured cap: a log of exactly the cap is stored whole; one byte more and the stored log is the
// first half of the cap, the truncation line, and the newest half. The dashboard's log route, the
// live feed's chunks and the CLI's log-read stream all carry the same line, and the review names the cut log.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { phaseId } from "../../src/api/tfe/presenters.ts";
import { PhaseLog, truncationLine } from "../../src/runner/phase-log.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { readLog, startRun } from "../support/runs.ts";
import { testEachServer, type TestServer } from "../support/test-server.ts";
import { jsonOf, type Tfe, type V1 } from "../support/documents.ts";

const CAP = 1000;

/** `bytes` bytes of numbered ASCII lines (every position distinguishable). */
function output(bytes: number): string {
  let text = "";
  for (let i = 0; text.length < bytes; i++) text += `line ${String(i).padStart(5, "0")} of the apply\n`;
  return text.slice(0, bytes);
}

/** Writes `text` through a PhaseLog of the run's apply in pieces of `piece` characters, then closes it. */
async function writeApplyLog(server: TestServer, runId: string, text: string, piece: number): Promise<void> {
  const log = new PhaseLog(server.services.stores, runId, "apply", server.services.clock, [], {
    maxBytes: server.services.config.phaseLogMaxBytes,
  });
  for (let at = 0; at < text.length; at += piece) log.write(text.slice(at, at + piece));
  await log.close();
}

/** The apply log as the CLI reads it (the framed stream of log-read-url, without STX, the header it drops and ETX). */
async function cliLog(server: TestServer, token: string, runId: string): Promise<string> {
  const apply = await fetch(`${server.baseUrl}/api/v2/applies/${phaseId(runId, "apply")}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  const url = new URL((await jsonOf<Tfe["ApplyDocument"]>(apply)).data.attributes["log-read-url"]);
  url.search = "?offset=0&limit=1048576";
  const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
  assert.is(bytes[0], 0x02);
  assert.is(bytes.at(-1), 0x03);
  const text = bytes.subarray(1, -1).toString("utf8");
  return text.slice(text.indexOf("Applying the approved plan...\n") + "Applying the approved plan...\n".length);
}

async function reviewOf(server: TestServer, token: string, runId: string): Promise<V1["RunReview"]["attributes"]> {
  const response = await fetch(`${server.baseUrl}/v1/runs/${runId}/review`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  assert.is(response.status, 200);
  return (await jsonOf<V1["RunReviewDocument"]>(response)).data.attributes;
}

async function liveChunks(server: TestServer, runId: string): Promise<string> {
  return (await server.services.stores.logs.chunksFrom(runId, "apply", 0, 10_000)).map((chunk) => chunk.text).join("");
}

const cap = suite("a phase's stored log is capped; its newest output is kept");

testEachServer(
  cap,
  "exactly the cap is stored whole; cap + 1 bytes and 5× the cap keep the first and the newest half with the truncation line, the same for the dashboard, the live feed and the CLI",
  async (server) => {
    assert.is(server.services.config.phaseLogMaxBytes, CAP);
    const { token, organizationName } = await createOrganizationWithToken(server, "acme");
    // Without structured output: the test writes the human apply log, which the CLI's log-read-url then serves too.
    const workspace = await createWorkspace(server, token, organizationName, {
      name: "logs",
      structured_run_output_enabled: false,
    });
    const line = truncationLine(CAP);
    assert.match(line, "STACKSHIP_PHASE_LOG_MAX_BYTES");

    // Exactly the cap: whole, no line, in any pieces.
    for (const piece of [1, 7, CAP]) {
      const run = await startRun(server, token, workspace.id, { "main.tf": "\n" });
      const text = output(CAP);
      await writeApplyLog(server, run.id, text, piece);
      assert.is(await readLog(server, token, run.id, "apply"), text, `piece ${piece}`);
      assert.is(await liveChunks(server, run.id), text);
      assert.is(await cliLog(server, token, run.id), text);
      assert.is((await reviewOf(server, token, run.id)).truncated_logs, undefined);
    }

    // One byte more: the byte in the middle goes, the line says so.
    for (const [bytes, piece] of [
      [CAP + 1, 1],
      [CAP + 1, 333],
      [CAP + 1, CAP + 1],
      [5 * CAP, 64],
    ] as const) {
      const run = await startRun(server, token, workspace.id, { "main.tf": "\n" });
      const text = output(bytes);
      await writeApplyLog(server, run.id, text, piece);
      const expected = text.slice(0, CAP / 2) + line + text.slice(-CAP / 2);
      const stored = await readLog(server, token, run.id, "apply");
      assert.is(stored, expected, `${bytes} bytes in pieces of ${piece}`);
      assert.is(Buffer.byteLength(stored.replace(line, ""), "utf8"), CAP);
      assert.is(await liveChunks(server, run.id), expected);
      assert.is(await cliLog(server, token, run.id), expected);
      // The review says which log was cut.
      assert.equal((await reviewOf(server, token, run.id)).truncated_logs, ["apply"]);
    }
  },
  { config: { phaseLogMaxBytes: CAP } },
);

cap.run();
