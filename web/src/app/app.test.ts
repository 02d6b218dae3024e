// Component tests (Chromium, @web/test-runner) of the shell's pure parts: routes, the `next`
// parameter, formatting, the closed sets, the runs page merge and the status badge.
import { equal, ok } from "../../test/support/assert.ts";
import { text } from "../../test/support/dom.ts";
import { FakeServer, mount } from "../../test/support/fake-server.ts";
import {
  checkRun,
  ContractError,
  isTerminal,
  RUN_STATUSES,
  RUN_STATUS_LABELS,
  TERMINAL_RUN_STATUSES,
} from "./closed-sets.ts";
import { absoluteUtc, duration, relativeTime } from "./format.ts";
import { matchRoute, safeNext } from "./router.ts";
import { mergeFirstPage } from "../runs/runs-page.ts";
import "../ui/status-badge.ts";
import type { Run } from "@stackship/client";

function run(id: string, createdAt: string, status = "applied"): Run {
  return {
    type: "runs",
    id,
    attributes: {
      status,
      created_at: createdAt,
      finished_at: null,
      updated_at: createdAt,
      message: id,
      source: "api",
      commit: null,
    } as unknown as Run["attributes"],
    relationships: {
      organization: { data: { type: "organizations", id: "org-1" } },
      workspace: { data: { type: "workspaces", id: "ws-1" } },
      configuration_version: { data: { type: "configuration-versions", id: "cv-1" } },
    },
    links: { self: `/v1/runs/${id}` },
  };
}

describe("routes and next", () => {
  it("should map every dashboard URL to its page and nothing else", () => {
    equal(matchRoute("/runs"), { name: "runs" });
    equal(matchRoute("/runs/run-0123456789abcdef"), { name: "run", runId: "run-0123456789abcdef" });
    equal(matchRoute("/workspaces/ws-1/state"), { name: "workspace-state", workspaceId: "ws-1" });
    equal(matchRoute("/workspaces/ws-1/cloud-access"), { name: "workspace-cloud-access", workspaceId: "ws-1" });
    equal(matchRoute("/workspaces/ws-1/source"), { name: "workspace-source", workspaceId: "ws-1" });
    equal(matchRoute("/github/setup"), { name: "github-setup" });
    equal(matchRoute("/runs/a/b").name, "not-found");
    equal(matchRoute("/v1/runs").name, "not-found");
  });

  it("should follow only same-origin dashboard paths after sign-in", () => {
    equal(safeNext("/runs?status=applied"), "/runs?status=applied");
    equal(safeNext("https://evil.example/runs"), "/runs");
    equal(safeNext("//evil.example/runs"), "/runs");
    equal(safeNext("/\\evil.example"), "/runs");
    equal(safeNext("/sign-in?next=/runs"), "/runs");
    equal(safeNext(null), "/runs");
  });

  it("should refuse every control character and backslash form that the URL parser turns into another host", () => {
    const attacks: string[] = [];
    const controls = [...Array.from({ length: 0x20 }, (_, code) => code), 0x7f].map((code) =>
      String.fromCharCode(code),
    );
    for (const c of controls) {
      attacks.push(
        `/${c}/evil.example/`,
        `${c}//evil.example/`,
        `/${c}\\evil.example/`,
        `//${c}evil.example/`,
        `/${c}${c}/evil.example/`,
      );
    }
    attacks.push(
      "/\\evil.example",
      "\\\\evil.example",
      "\\/evil.example",
      "/\\/evil.example",
      "/\t/evil",
      "/\t\\evil.example",
      "/.//evil.example",
      "/%2e//evil.example",
      "/runs/..//evil.example",
      "javascript:alert(1)",
      "https:evil.example",
      " /evil.example",
    );
    for (const attack of attacks) {
      const next = safeNext(attack);
      equal(next, "/runs", `next=${JSON.stringify(attack)}`);
      equal(new URL(next, location.origin).origin, location.origin);
    }
    // Same-origin dashboard pages are kept as parsed, query and fragment included.
    equal(safeNext("/workspaces/ws-1/state?x=1#top"), "/workspaces/ws-1/state?x=1#top");
    equal(safeNext("/runs/run-1"), "/runs/run-1");
  });
});

describe("formatting", () => {
  it("should word durations and relative times, and give the absolute time in UTC", () => {
    equal(
      [
        duration(0),
        duration(999),
        duration(1_000),
        duration(59_999),
        duration(60_000),
        duration(65_000),
        duration(3_600_000 + 180_000),
        duration(90_000_000),
      ],
      ["<1 s", "<1 s", "1s", "59s", "1m 00s", "1m 05s", "1h 03m", "1d 1h"],
    );
    const now = Date.parse("2026-12-03T12:00:00.000Z");
    equal(relativeTime("2026-12-03T11:59:55.000Z", now), "just now");
    equal(relativeTime("2026-12-03T11:59:30.000Z", now), "30 seconds ago");
    equal(relativeTime("2026-12-03T11:55:00.000Z", now), "5 minutes ago");
    equal(relativeTime("2026-12-02T12:00:00.000Z", now), "yesterday");
    equal(absoluteUtc("2026-12-03T11:55:00.123Z"), "2026-12-03 11:55:00 UTC");
  });
});

describe("closed sets", () => {
  it("should label every run status and refuse one outside the set", () => {
    for (const status of RUN_STATUSES) ok(RUN_STATUS_LABELS[status].label.length > 0, status);
    ok(
      TERMINAL_RUN_STATUSES.has("applied") &&
        !TERMINAL_RUN_STATUSES.has("awaiting_approval") &&
        !TERMINAL_RUN_STATUSES.has("needs_recovery"),
    );
    for (const status of RUN_STATUSES) equal(isTerminal(status), TERMINAL_RUN_STATUSES.has(status), status);
    equal(isTerminal("teleporting"), false, "a status outside the set is not terminal");
    let refused: unknown = null;
    try {
      checkRun(run("run-x", "2026-12-03T12:00:00.000Z", "teleporting"));
    } catch (error) {
      refused = error;
    }
    ok(refused instanceof ContractError, "an unknown status is a contract error");
  });

  it("should merge a re-read first page: known runs replaced, new ones added, newest first, no duplicates", () => {
    const loaded = [run("run-b", "2026-12-03T11:00:00.000Z", "planning"), run("run-a", "2026-12-03T10:00:00.000Z")];
    const fresh = [
      run("run-c", "2026-12-03T12:00:00.000Z", "pending"),
      run("run-b", "2026-12-03T11:00:00.000Z", "awaiting_approval"),
    ];
    const merged = mergeFirstPage(loaded, fresh);
    equal(
      merged.map((r) => [r.id, r.attributes.status]),
      [
        ["run-c", "pending"],
        ["run-b", "awaiting_approval"],
        ["run-a", "applied"],
      ],
    );
  });
});

describe("ss-status-badge", () => {
  it("should say the status in words, and an unknown one as unknown", async () => {
    const server = new FakeServer();
    const known = await mount(
      server,
      Object.assign(document.createElement("ss-status-badge"), { status: "awaiting_approval" }),
    );
    equal(text(known), "Awaiting approval");
    equal(known.shadowRoot!.querySelector("span")!.className, "attention");
    const unknown = await mount(
      server,
      Object.assign(document.createElement("ss-status-badge"), { status: "teleporting" }),
    );
    equal(text(unknown), "Unknown status “teleporting”");
    equal(unknown.shadowRoot!.querySelector("span")!.className, "danger");
  });
});
