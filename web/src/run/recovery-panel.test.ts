import { equal, ok } from "../../test/support/assert.ts";
import { text, until } from "../../test/support/dom.ts";
import { FakeServer, mountForRun } from "../../test/support/fake-server.ts";
import { RUN_ID } from "../../test/support/fixtures.ts";
import type { Action, Recovery } from "./review-model.ts";
import "./recovery-panel.ts";

const EVIDENCE: Recovery = {
  attempt: {
    id: "att-1",
    attempt_number: 1,
    status: "lost",
    terminal_classification: "runner_lost",
    sandbox_id: "sbx-1",
    runner_id: "vm-1",
    started_at: "2026-12-03T10:00:00.000Z",
    finished_at: null,
  },
  last_log_lines: ["terraform_data.slow: Creating...", "provisioning-started"],
  pending_state_version: null,
  lock: { holder_kind: "run", holder_id: RUN_ID, fence: 3 },
  predecessor_state_digest: null,
};

const panel = (server: FakeServer, recovery: Recovery, actions: Action[]) =>
  mountForRun(server, "ss-recovery-panel", { recovery, actions });

describe("ss-recovery-panel", () => {
  it("should show the recorded evidence, and the resolve form only with recover", async () => {
    const viewer = await panel(new FakeServer(), EVIDENCE, []);
    const t = text(viewer.shadowRoot!.querySelector("section"));
    ok(
      t.includes("#1, lost (runner_lost)") &&
        t.includes("none was uploaded") &&
        t.includes(`held by run ${RUN_ID} (fence 3)`) &&
        t.includes("provisioning-started"),
      t,
    );
    equal(viewer.shadowRoot!.querySelector("form"), null);
  });

  it("should not offer committing a pending state that was never uploaded, and require a ten-character reason", async () => {
    const server = new FakeServer().on(`POST /v1/runs/${RUN_ID}/actions/resolve-recovery`, { status: 202, body: {} });
    const el = await panel(server, EVIDENCE, ["recover"]);
    const form = el.shadowRoot!.querySelector<HTMLFormElement>('[data-testid="recovery-form"]')!;
    const commit = form.querySelector<HTMLInputElement>('input[value="commit_pending_state"]')!;
    const keep = form.querySelector<HTMLInputElement>('input[value="keep_current_state"]')!;
    ok(commit.disabled && !commit.checked);
    ok(!keep.checked, "nothing is preselected");
    equal(
      [...form.querySelectorAll<HTMLInputElement>('input[name="resolution"]')].map((i) => i.value),
      ["keep_current_state", "commit_pending_state"],
      "the choice that changes no recorded state comes first",
    );
    form.querySelector("textarea")!.value = "nothing changed upstream";
    form.requestSubmit();
    await el.updateComplete;
    equal(server.requests.length, 0, "no choice, nothing sent");
    ok(text(form).includes("Choose how to resolve the recovery."), text(form));
    keep.checked = true;
    form.querySelector("textarea")!.value = "too short";
    form.requestSubmit();
    await el.updateComplete;
    equal(server.requests.length, 0);
    ok(text(form).includes("Write at least 10 characters."));
    ok(!text(form).includes("Choose how to resolve"), "the choice error is gone once chosen");
    form.querySelector("textarea")!.value = "nothing changed upstream";
    form.requestSubmit();
    await until(() => server.requests.length > 0);
    equal(server.requests[0].body, {
      data: {
        type: "recovery-resolutions",
        attributes: { resolution: "keep_current_state", reason: "nothing changed upstream" },
      },
    });
  });
});
