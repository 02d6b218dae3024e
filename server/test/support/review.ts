// Helpers for the run review tests: fetch a review through the SDK, and walk a whole review
// document for anything it must never carry.
import * as assert from "uvu/assert";
import { getRunReview, type Client, type RunReview } from "../../../client/src/index.ts";
import * as v1Validators from "../../../generated/v1/validators.gen.js";
import { leakForms } from "./database.ts";
import { expectStatus } from "./responses.ts";
import type { TestServer } from "./test-server.ts";
import type { ConfigurationVersionRow, RunRow, StateVersionRow } from "../../src/store/rows.ts";

/** GETs a run's review with `client`, asserts 200, no-store and the spec's document, and returns the resource. */
export async function review(client: Client, runId: string): Promise<RunReview> {
  const result = await getRunReview({ client, path: { run_id: runId } });
  const document = expectStatus(result, 200);
  assert.ok(
    v1Validators.RunReviewDocument(document),
    `review violates the spec: ${JSON.stringify(v1Validators.RunReviewDocument.errors)}`,
  );
  assert.is(result.response.headers.get("cache-control"), "private, no-store");
  return document.data;
}

/** GETs a run's review through a raw session request (cookie auth) and returns the resource. */
export async function sessionReview(
  session: { request(method: string, path: string): Promise<Response> },
  runId: string,
): Promise<RunReview> {
  const response = await session.request("GET", `/v1/runs/${runId}/review`);
  const body = (await response.json()) as { data: RunReview };
  assert.is(response.status, 200, JSON.stringify(body));
  assert.ok(
    v1Validators.RunReviewDocument(body),
    `review violates the spec: ${JSON.stringify(v1Validators.RunReviewDocument.errors)}`,
  );
  return body.data;
}

/** Every key and every string value of a JSON document, with its path. */
export function walk(
  value: unknown,
  path = "$",
  out: Array<{ path: string; key?: string; text?: string }> = [],
): Array<{ path: string; key?: string; text?: string }> {
  if (typeof value === "string") out.push({ path, text: value });
  else if (Array.isArray(value)) value.forEach((item, index) => walk(item, `${path}[${index}]`, out));
  else if (value !== null && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) {
      out.push({ path: `${path}.${key}`, key });
      walk(child, `${path}.${key}`, out);
    }
  }
  return out;
}

/** Keys no review may have: artifact keys, state bodies, raw plans and policy input, labels, capabilities, secrets, finding details. */
const FORBIDDEN_KEYS = [
  /artifact_?key/i,
  /object_?key/i,
  /^key$/,
  /label/i,
  /capabilit/i,
  /handle/i,
  /secret/i,
  /ciphertext/i,
  /^details?$/i,
  /^input$/i,
  /policy_input/i,
  /^raw/i,
  /plan_json/i,
  /lock_file/i,
  /^state_body$|^body$/i,
  /^outputs?$/i,
  /^resource_changes$|^planned_values$|^prior_state$/,
];

/** Text markers of raw plans, plan JSON (the policy input), state bodies and lock files. */
const FORBIDDEN_TEXT = [
  /"resource_changes"/,
  /"planned_values"/,
  /"prior_state"/,
  /"format_version"/,
  /"terraform_version"/,
  /"lineage"\s*:/,
  /tofu init/,
  /BEGIN [A-Z ]*PRIVATE KEY/,
];

/**
 * Walks the whole review document (every key and every string) and fails on anything it must
 * never contain: the artifact object keys and secret handles stored for this run (read from the
 * database), the given secret values in every spelling a leak could take, and the forbidden keys
 * and text markers above.
 */
export async function assertNoLeaks(
  server: TestServer,
  document: unknown,
  runId: string,
  secrets: readonly string[] = [],
): Promise<void> {
  const run = await server.db
    .knex("runs")
    .where({ id: runId })
    .first<Pick<RunRow, "configuration_version_id" | "workspace_id">>();
  const storedKeys: string[] = [];
  const configuration = await server.db
    .knex("configuration_versions")
    .where({ id: run.configuration_version_id })
    .first<Pick<ConfigurationVersionRow, "artifact_key"> | undefined>();
  if (configuration?.artifact_key) storedKeys.push(configuration.artifact_key);
  for (const row of await server.db
    .knex("state_versions")
    .where({ workspace_id: run.workspace_id })
    .select<Pick<StateVersionRow, "artifact_key">[]>("artifact_key"))
    if (row.artifact_key) storedKeys.push(row.artifact_key);
  for (const row of await server.db.knex("artifacts").select<{ artifact_key: string }[]>("artifact_key"))
    storedKeys.push(row.artifact_key);
  const handles = (await server.db.knex("snapshot_secrets").select("handle", "ciphertext")).flatMap(
    (row: { handle: string; ciphertext: string }) => [row.handle, row.ciphertext],
  );
  const secretForms = secrets.flatMap(leakForms);
  const entries = walk(document);
  assert.ok(entries.length > 20, "the walk saw the document");
  for (const entry of entries) {
    if (entry.key !== undefined) {
      for (const pattern of FORBIDDEN_KEYS) assert.not.ok(pattern.test(entry.key), `forbidden key at ${entry.path}`);
      continue;
    }
    const text = entry.text!;
    for (const key of storedKeys) assert.not.ok(text.includes(key), `artifact key ${key} at ${entry.path}`);
    assert.not.ok(
      /(^|[^/])(runs|state-versions|configuration-versions)\/[a-z]+-[0-9a-z]{16}\/[^/]+\.(json|tfplan|tfstate|tar\.gz)/.test(
        text,
      ),
      `artifact-key-like text at ${entry.path}: ${text}`,
    );
    for (const handle of handles) assert.not.ok(text.includes(handle), `secret handle or ciphertext at ${entry.path}`);
    for (const form of secretForms) assert.not.ok(text.includes(form), `a secret value at ${entry.path}`);
    for (const marker of FORBIDDEN_TEXT)
      assert.not.ok(marker.test(text), `forbidden text ${marker} at ${entry.path}: ${text.slice(0, 200)}`);
  }
}
