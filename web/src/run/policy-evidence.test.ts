import { equal, ok } from "../../test/support/assert.ts";
import { text, until } from "../../test/support/dom.ts";
import { cleanup, FakeServer, mountForRun } from "../../test/support/fake-server.ts";
import { NEEDS_TAGS_FINDING, reviewFixture, RUN_ID } from "../../test/support/fixtures.ts";
import type { Action, PolicyStage } from "./review-model.ts";
import "./policy-evidence.ts";

const RESULT = "c".repeat(64);

function softFailed(patch: Partial<PolicyStage> = {}): PolicyStage {
  return {
    ...reviewFixture().attributes.stages.policy,
    status: "waiting",
    outcome: "soft_failed",
    findings: [NEEDS_TAGS_FINDING],
    override_control: {
      result_digest: RESULT,
      href: `/v1/runs/${RUN_ID}/policy-overrides`,
      default_duration_seconds: 3600,
      max_duration_seconds: 86400,
      active_override_expires_at: null,
      expires_at: "2026-12-04T10:00:00.000Z",
    },
    ...patch,
  };
}

const evidence = (server: FakeServer, policy: PolicyStage, actions: Action[]) =>
  mountForRun(server, "ss-policy-evidence", { policy, actions });

describe("ss-policy-evidence", () => {
  it("should offer the override control only where the review carries one and override is available", async () => {
    const server = new FakeServer();
    const without = await evidence(server, softFailed(), ["discard"]);
    equal(without.shadowRoot!.querySelector("form"), null, "no override action: no control");
    ok(text(without.shadowRoot!.querySelector('[data-testid="policy-findings"]')).includes("Needs tags"));
    cleanup();
    const noControl = await evidence(server, softFailed({ override_control: null }), ["override"]);
    equal(noControl.shadowRoot!.querySelector("form"), null);
  });

  it("should refuse an empty reason and submit the exact result digest with the chosen duration", async () => {
    const server = new FakeServer().on(`POST /v1/runs/${RUN_ID}/policy-overrides`, { status: 201, body: {} });
    const el = await evidence(server, softFailed(), ["discard", "cancel", "override"]);
    const form = el.shadowRoot!.querySelector<HTMLFormElement>('[data-testid="override-form"]')!;
    form.requestSubmit();
    await el.updateComplete;
    ok(text(form).includes("Say why the failure may be overridden."));
    equal(server.requests.length, 0);
    form.querySelector<HTMLTextAreaElement>("textarea")!.value = "tags follow";
    const select = form.querySelector<HTMLSelectElement>("select")!;
    equal(
      [...select.options].map((o) => o.textContent),
      ["15 minutes", "1 hour", "4 hours", "24 hours"],
    );
    select.value = String(4 * 3600);
    form.requestSubmit();
    await until(() => server.requests.length > 0);
    equal(server.requests[0].body, {
      data: {
        type: "policy-overrides",
        attributes: { result_digest: RESULT, reason: "tags follow", duration_seconds: 14400 },
      },
    });
  });

  it("should list overrides with the truncation flag, and keep hard-mandatory failures without a control", async () => {
    const el = await evidence(
      new FakeServer(),
      softFailed({
        overrides: [
          {
            id: "po-1",
            actor_id: "prn-0000000000000001",
            actor_display_name: null,
            reason: "ok for now",
            created_at: "2026-12-03T10:00:00.000Z",
            expires_at: "2026-12-03T11:00:00.000Z",
          },
        ],
        overrides_truncated: true,
      }),
      ["override"],
    );
    const table = text(el.shadowRoot!.querySelector('[data-testid="policy-overrides"]'));
    ok(table.includes("prn-0000000000000001") && table.includes("ok for now"), table);
    ok(text(el).includes("Only the newest 256 overrides are listed"));
    cleanup();
    const hard = await evidence(new FakeServer(), softFailed({ outcome: "hard_failed", override_control: null }), []);
    ok(text(hard).includes("Hard-mandatory findings cannot be overridden."));
    equal(hard.shadowRoot!.querySelector("form"), null);
  });
  it("should turn the control into “Override active until …, by …” once an override is in force", async () => {
    const expiry = new Date(Date.now() + 3_600_000).toISOString();
    const override = {
      id: "po-2",
      actor_id: "usr-0000000000000001",
      actor_display_name: "Ada Lovelace",
      reason: "tags follow",
      created_at: new Date().toISOString(),
      expires_at: expiry,
    };
    const control = softFailed().override_control!;
    const el = await evidence(
      new FakeServer(),
      softFailed({ override_control: { ...control, active_override_expires_at: expiry }, overrides: [override] }),
      ["override"],
    );
    const line = text(el.shadowRoot!.querySelector('[data-testid="active-override"]'));
    ok(line.startsWith("Override active until ") && line.endsWith(", by Ada Lovelace."), line);
    equal(el.shadowRoot!.querySelector("form"), null, "no second override while one is in force");
    cleanup();
    // A viewer (no control) still reads the override in force from the list; an expired one is not "active".
    const expired = {
      ...override,
      id: "po-1",
      created_at: "2026-12-01T10:00:00.000Z",
      expires_at: "2026-12-01T11:00:00.000Z",
    };
    const viewer = await evidence(
      new FakeServer(),
      softFailed({ override_control: null, overrides: [expired, override] }),
      [],
    );
    ok(text(viewer.shadowRoot!.querySelector('[data-testid="active-override"]')).endsWith(", by Ada Lovelace."));
    cleanup();
    const none = await evidence(new FakeServer(), softFailed({ override_control: null, overrides: [expired] }), []);
    equal(none.shadowRoot!.querySelector('[data-testid="active-override"]'), null);
  });

  it("should list blocking findings first: hard-mandatory, then soft-mandatory, advisory last", async () => {
    const finding = (title: string, level: string) => ({
      title,
      message: title,
      address: null,
      enforcement_level: level,
    });
    const el = await evidence(
      new FakeServer(),
      softFailed({
        findings: [
          finding("a1", "advisory"),
          finding("s1", "soft_mandatory"),
          finding("h1", "hard_mandatory"),
          finding("a2", "advisory"),
          finding("s2", "soft_mandatory"),
        ] as PolicyStage["findings"],
      }),
      [],
    );
    equal(
      [...el.shadowRoot!.querySelectorAll('[data-testid="policy-findings"] li strong')].map((n) => n.textContent),
      ["h1", "s1", "s2", "a1", "a2"],
    );
  });
});
