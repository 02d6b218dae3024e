import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { operations as tfeOperations } from "../../../generated/tfe/operations.gen.ts";
import { operations as v1Operations } from "../../../generated/v1/operations.gen.ts";
import { OPERATION_REQUIREMENTS } from "../../src/domain/authorization.ts";
import { DomainError } from "../../src/domain/errors.ts";
import { authorizeOperation } from "../../src/http/operation-access.ts";
import type { AuthenticatedPrincipal } from "../../src/domain/principal.ts";
import type { Services } from "../../src/commands/services.ts";
import { createToken } from "../support/factories.ts";
import { seededRun, tokenWith } from "../support/seeded-runs.ts";
import { testEachServer } from "../support/test-server.ts";

// The operation binding enforces each operation's x-stackship-permission before its handler, on
// both surfaces (http/operation-access.ts). These cases pin what it decides on its own, without
// looking at any object.

const table = suite("operation tables");

table("every operation of both surfaces names a known requirement; `none` exactly on the unauthenticated ones", () => {
  for (const op of [...v1Operations, ...tfeOperations]) {
    assert.ok(
      (OPERATION_REQUIREMENTS as readonly string[]).includes(op.permission),
      `${op.operationId}: ${op.permission}`,
    );
    assert.is(op.permission === "none", !op.authenticated, op.operationId);
  }
});

table("run tokens get past the binding only on the operations the sandboxed tofu needs beyond workspace:read", () => {
  const marked = [...v1Operations, ...tfeOperations]
    .filter((op) => op.runToken)
    .map((op) => op.operationId)
    .sort();
  assert.equal(marked, ["createStateVersion", "downloadStateVersion", "lockWorkspace", "unlockWorkspace"]);
});

table("the caller-only refusals live in the binding alone: no handler or command repeats them", () => {
  // Handlers keep object-level checks (which workspace, which run); whether the caller holds the
  // operation's permission anywhere, has a session or is a site admin is decided once, before them.
  const root = join(dirname(fileURLToPath(import.meta.url)), "../../src");
  const sources = ["api", "commands"].flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
      .map((f) => join(dir, f)),
  );
  assert.ok(sources.length > 40, `${sources.length} sources`);
  const repeats = sources.filter((f) =>
    /"SESSION_REQUIRED"|holdsAnywhere\(|\bprincipal\.siteAdmin\)\s*throw|!\s*principal\.siteAdmin\b/.test(
      readFileSync(join(root, f), "utf8"),
    ),
  );
  assert.equal(repeats, []);
});

const principal = (overrides: Partial<AuthenticatedPrincipal>): AuthenticatedPrincipal => ({
  kind: "token",
  id: "prn-x",
  siteAdmin: false,
  grants: [],
  organizationId: "org-a",
  tokenId: "tok-x",
  ...overrides,
});
const grant = (
  permission: string,
  scopeKind: "organization" | "project" | "workspace" = "workspace",
  scopeId = "ws-1",
) => ({ scopeKind, scopeId, permission });
const op = (permission: (typeof OPERATION_REQUIREMENTS)[number], runToken = false) => ({
  operationId: "anything",
  permission,
  runToken,
  path: "/api/v2/runs/{run_id}",
});
const noServices = {} as Services;

async function refusal(promise: Promise<void>): Promise<string | null> {
  try {
    await promise;
    return null;
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
}

const binding = suite("authorizeOperation");

binding("`authenticated` lets any authenticated caller through, even one with no grant at all", async () => {
  assert.is(await refusal(authorizeOperation(noServices, op("authenticated"), principal({ grants: [] }), {})), null);
  assert.is(await refusal(authorizeOperation(noServices, op("run:read"), principal({ grants: [] }), {})), "NOT_FOUND");
});

binding(
  "a permission held at any scope passes; held nowhere is 403, or 404 for the visibility permissions",
  async () => {
    const narrow = principal({ grants: [grant("run:approve", "workspace", "ws-elsewhere")] });
    assert.is(await refusal(authorizeOperation(noServices, op("run:approve"), narrow, {})), null);
    assert.is(await refusal(authorizeOperation(noServices, op("run:cancel"), narrow, {})), "FORBIDDEN");
    assert.is(await refusal(authorizeOperation(noServices, op("run:read"), narrow, { run_id: "run-1" })), "NOT_FOUND");
    assert.is(await refusal(authorizeOperation(noServices, op("workspace:read"), narrow, {})), "NOT_FOUND");
    // org:admin at organization scope covers everything; at a narrower scope only itself.
    assert.is(
      await refusal(
        authorizeOperation(
          noServices,
          op("state:read"),
          principal({ grants: [grant("org:admin", "organization", "org-a")] }),
          {},
        ),
      ),
      null,
    );
    assert.is(
      await refusal(
        authorizeOperation(
          noServices,
          op("state:read"),
          principal({ grants: [grant("org:admin", "workspace", "ws-1")] }),
          {},
        ),
      ),
      "FORBIDDEN",
    );
    assert.is(
      await refusal(authorizeOperation(noServices, op("state:read"), principal({ siteAdmin: true }), {})),
      null,
    );
  },
);

binding("session and site:admin operations", async () => {
  assert.is(
    await refusal(authorizeOperation(noServices, op("session"), principal({ siteAdmin: true }), {})),
    "SESSION_REQUIRED",
  );
  assert.is(
    await refusal(
      authorizeOperation(
        noServices,
        op("site:admin"),
        principal({ grants: [grant("org:admin", "organization", "org-a")] }),
        {},
      ),
    ),
    "FORBIDDEN",
  );
  assert.is(await refusal(authorizeOperation(noServices, op("site:admin"), principal({ siteAdmin: true }), {})), null);
});

binding("a run token passes a marked operation whatever its grants, and is held to its grants elsewhere", async () => {
  const run = principal({
    kind: "run",
    grants: [grant("workspace:read")],
    run: { runId: "run-1", phase: "apply", workspaceId: "ws-1", fence: 1 },
  });
  assert.is(await refusal(authorizeOperation(noServices, op("workspace:write", true), run, {})), null);
  assert.is(await refusal(authorizeOperation(noServices, op("workspace:write"), run, {})), "FORBIDDEN");
  assert.is(await refusal(authorizeOperation(noServices, op("run:read"), run, {})), "NOT_FOUND");
  assert.is(await refusal(authorizeOperation(noServices, op("workspace:read"), run, {})), null);
});

const wire = suite("operation binding on the wire");

testEachServer(
  wire,
  "a caller who holds the permission nowhere gets the same answer for an existing and a missing object, on /v1 and /api/v2",
  async (server) => {
    const { org, run } = await seededRun(server);
    const viewer = (await createToken(server, org.token, "acme", "viewer")).token;
    const runsOnly = await tokenWith(server, org.organizationId, ["workspace:read"]);
    const missing = "run-0000000000000000";
    const cases: Array<[string, string, string, unknown, number]> = [
      ["POST", `/api/v2/runs/{id}/actions/apply`, viewer, {}, 403],
      ["POST", `/v1/runs/{id}/actions/cancel`, viewer, { data: { type: "decisions", attributes: {} } }, 403],
      ["GET", `/api/v2/runs/{id}`, runsOnly, undefined, 404],
      ["GET", `/v1/runs/{id}/review`, runsOnly, undefined, 404],
    ];
    for (const [method, template, token, body, status] of cases) {
      const answers = [];
      for (const id of [run.id, missing]) {
        const response = await fetch(`${server.baseUrl}${template.replace("{id}", id)}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const error = ((await response.json()) as { errors: Array<{ code?: string; detail: string; meta?: unknown }> })
          .errors[0];
        answers.push({ status: response.status, code: error.code, detail: error.detail.replace(id, "{id}") });
      }
      assert.is(answers[0].status, status, `${method} ${template}: ${JSON.stringify(answers[0])}`);
      assert.equal(answers[0], answers[1], `${method} ${template}`);
    }
  },
);

table.run();
binding.run();
wire.run();
