import { equal, ok } from "../../test/support/assert.ts";
import { text, until } from "../../test/support/dom.ts";
import { FakeServer, mountForRun } from "../../test/support/fake-server.ts";
import { reviewFixture, RUN_ID } from "../../test/support/fixtures.ts";
import type { ApprovalStage } from "./review-model.ts";
import "./approval-evidence.ts";

const ENVELOPE_DIGEST = "e".repeat(64);
const ENVELOPE = {
  payloadType: "application/vnd.in-toto+json",
  payload: "eyJfdHlwZSI6InRlc3QifQ==",
  signatures: [{ keyid: "k".repeat(64), sig: "MEUC" }],
};

function approved(patch: Partial<ApprovalStage> = {}): ApprovalStage {
  return {
    ...reviewFixture().attributes.stages.approval,
    status: "succeeded",
    state: "approved",
    decided_by: { actor_id: "usr-0000000000000001", display_name: "Avery Approver" },
    decided_at: "2026-12-03T10:01:00.000Z",
    attestations: [
      {
        id: "atst-0000000000000001",
        stage: "decision",
        envelope_sha256: ENVELOPE_DIGEST,
        key_id: "k".repeat(64),
        created_at: "2026-12-03T10:01:00.000Z",
      },
    ],
    ...patch,
  };
}

describe("ss-approval-evidence", () => {
  it("should offer no attestation download before one is issued", async () => {
    const el = await mountForRun(new FakeServer(), "ss-approval-evidence", {
      approval: approved({ attestations: [] }),
    });
    equal(el.shadowRoot!.querySelector('[data-testid^="download-attestation"]'), null);
  });

  it("should offer 'Download attestation' naming the envelope's digest and save the envelope read through the SDK", async () => {
    const server = new FakeServer().on(`GET /v1/runs/${RUN_ID}/attestations`, {
      status: 200,
      body: {
        data: [
          {
            type: "run-attestations",
            id: "atst-0000000000000001",
            attributes: {
              stage: "decision",
              predicate_type: "https://stackship.dev/attestations/run-decision/v1",
              key_id: "k".repeat(64),
              envelope_sha256: ENVELOPE_DIGEST,
              created_at: "2026-12-03T10:01:00.000Z",
              envelope: ENVELOPE,
            },
          },
        ],
      },
    });
    const el = await mountForRun(server, "ss-approval-evidence", { approval: approved() });
    const button = el.shadowRoot!.querySelector<HTMLButtonElement>('[data-testid="download-attestation-decision"]');
    ok(button, "the approval stage offers the download");
    equal(text(button), "Download attestation");
    equal(text(el.shadowRoot!.querySelector('[data-testid="attestation-digest-decision"]')), ENVELOPE_DIGEST);
    const saved: Array<{ name: string; blob: Blob }> = [];
    const createObjectURL = URL.createObjectURL;
    const click = HTMLAnchorElement.prototype.click;
    const urls = new Map<string, Blob>();
    URL.createObjectURL = (blob: Blob) => {
      const url = `blob:test-${urls.size}`;
      urls.set(url, blob);
      return url;
    };
    HTMLAnchorElement.prototype.click = function (this: HTMLAnchorElement) {
      saved.push({ name: this.download, blob: urls.get(this.href)! });
    };
    try {
      button.click();
      await until(() => saved.length > 0, "the envelope saved");
    } finally {
      URL.createObjectURL = createObjectURL;
      HTMLAnchorElement.prototype.click = click;
    }
    equal(server.count(`GET /v1/runs/${RUN_ID}/attestations`), 1);
    equal(saved[0].name, `${RUN_ID}-decision.intoto.json`);
    equal(JSON.parse(await saved[0].blob.text()), ENVELOPE);
  });
});
