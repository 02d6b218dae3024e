// Component tests (Chromium) of the settings pages' pure parts: the variables a pipeline-off
// sentence names, the commit line of a GitHub run, and the closed sets each page checks (a value
// outside them is a ContractError, never a guess).
import type { FederationProfile, Run, SourceConnectionDocument, Workspace } from "@stackship/client";
import { checkRun, commitLine, ContractError } from "../app/closed-sets.ts";
import { equal, ok } from "../../test/support/assert.ts";
import { text, until } from "../../test/support/dom.ts";
import { errorAnswer, FakeServer, mount } from "../../test/support/fake-server.ts";
import { WS_ID } from "../../test/support/fixtures.ts";
import { checkProfile, PROVIDER_TARGETS } from "./workspace-cloud-access-page.ts";
import { checkSourceDocument, missingVariables } from "./workspace-source-page.ts";
import { structuredOutputPatch, structuredOutputSentence } from "./workspace-settings.ts";
import "./workspace-settings.ts";

const SHA = "0123456789abcdef0123456789abcdef01234567";

function run(patch: Partial<Run["attributes"]>): Run {
  return {
    type: "runs",
    id: "run-1",
    attributes: {
      status: "applied",
      created_at: "2026-12-03T12:00:00.000Z",
      finished_at: null,
      updated_at: "2026-12-03T12:00:00.000Z",
      message: "m",
      source: "api",
      commit: null,
      ...patch,
    } as Run["attributes"],
    relationships: { workspace: { data: { type: "workspaces", id: "ws-1" } } },
  } as unknown as Run;
}

function throwsContract(fn: () => unknown, pattern: RegExp): void {
  try {
    fn();
  } catch (error) {
    ok(error instanceof ContractError, `a ContractError, got ${String(error)}`);
    ok(pattern.test(error.message), error.message);
    return;
  }
  throw new Error("expected a ContractError");
}

describe("workspace settings pages", () => {
  it("should name each missing variable of the pipeline-off sentence once, and none when it names none", () => {
    equal(
      missingVariables(
        "The GitHub App pipeline is off: set STACKSHIP_GITHUB_APP_ID, STACKSHIP_GITHUB_PRIVATE_KEY (or _FILE), STACKSHIP_GITHUB_WEBHOOK_SECRET.",
      ),
      ["STACKSHIP_GITHUB_APP_ID", "STACKSHIP_GITHUB_PRIVATE_KEY (or _FILE)", "STACKSHIP_GITHUB_WEBHOOK_SECRET"],
    );
    equal(missingVariables("The GitHub App pipeline is off: set STACKSHIP_GITHUB_WEBHOOK_SECRET."), [
      "STACKSHIP_GITHUB_WEBHOOK_SECRET",
    ]);
    equal(missingVariables("Something else is wrong."), []);
  });

  it("should word a run's commit as its source and the short SHA, fork marked; nothing without a commit", () => {
    const commit = {
      sha: SHA,
      message: "x",
      author: "octocat",
      ref: "refs/heads/main",
      repository: "acme/infra",
      fork: false,
    };
    equal(commitLine(run({ source: "github_push", commit })), {
      text: "GitHub push 0123456",
      title: `acme/infra refs/heads/main ${SHA}`,
    });
    equal(
      commitLine(run({ source: "github_pull_request", commit: { ...commit, fork: true, ref: "refs/pull/3/head" } }))
        ?.text,
      "GitHub pull request (fork) 0123456",
    );
    equal(commitLine(run({ source: "cli" })), null);
  });

  it("should refuse a run source, a delivery status, a repository access or a profile provider StackShip does not define", () => {
    throwsContract(() => checkRun(run({ source: "gitlab" as never })), /source “gitlab”/);
    const document: SourceConnectionDocument = {
      data: null,
      meta: {
        pipeline: {
          state: "off",
          detail: "off",
          webhook_url: "http://x/v1/github/webhooks",
          app_id: null,
          api_url: null,
        },
        deliveries: [],
      },
    };
    equal(checkSourceDocument(document), document);
    throwsContract(
      () =>
        checkSourceDocument({
          ...document,
          meta: { ...document.meta, pipeline: { ...document.meta.pipeline, state: "paused" as never } },
        }),
      /pipeline state “paused”/,
    );
    const delivery = {
      type: "github-deliveries" as const,
      id: "d-1",
      attributes: {
        event: "push",
        action: null,
        repository: null,
        installation_id: null,
        status: "lost" as never,
        outcome: null,
        detail: null,
        attempts: 1,
        run_ids: [],
        received_at: "2026-12-03T12:00:00.000Z",
        processed_at: null,
      },
    };
    throwsContract(
      () => checkSourceDocument({ ...document, meta: { ...document.meta, deliveries: [delivery] } }),
      /status “lost”/,
    );
    const profile = {
      type: "federation-profiles",
      id: "fp-1",
      attributes: {
        name: "p",
        provider: "oracle",
        audience: "a",
        target: {},
        phases: ["plan"],
        verified_at: null,
        verified_by: null,
      },
    } as unknown as FederationProfile;
    throwsContract(() => checkProfile(profile), /provider “oracle”/);
    throwsContract(
      () =>
        checkProfile({
          ...profile,
          attributes: { ...profile.attributes, provider: "aws", phases: ["destroy" as never] },
        }),
      /phase “destroy”/,
    );
  });

  it("should ask each provider for exactly the target members the API takes", () => {
    equal(PROVIDER_TARGETS, {
      aws: ["role_arn"],
      gcp: ["workload_identity_provider", "service_account"],
      azure: ["client_id", "tenant_id"],
      generic: [],
    });
  });
});

describe("ss-workspace-settings: structured run output (issue 29)", () => {
  const PATCH = `PATCH /v1/workspaces/${WS_ID}`;
  const workspace = (enabled: boolean) =>
    ({
      type: "workspaces",
      id: WS_ID,
      attributes: { name: "app", structured_run_output_enabled: enabled },
      relationships: {},
      links: {},
    }) as unknown as Workspace;

  async function settings(server: FakeServer, enabled: boolean, canWrite: boolean) {
    return mount(
      server,
      Object.assign(document.createElement("ss-workspace-settings"), { workspace: workspace(enabled), canWrite }),
    );
  }
  const toggle = (el: HTMLElement) => el.shadowRoot!.querySelector<HTMLInputElement>("#structured-run-output");

  it("should say what each state means, and send exactly the attribute", () => {
    ok(structuredOutputSentence(true).startsWith("Structured run output is on"));
    ok(structuredOutputSentence(false).startsWith("Structured run output is off"));
    equal(structuredOutputPatch(true), {
      data: { type: "workspaces", attributes: { structured_run_output_enabled: true } },
    });
  });

  it("should turn it on through the API and show what the API confirmed", async () => {
    const server = new FakeServer().on(PATCH, { status: 200, body: { data: workspace(true) } });
    const el = await settings(server, false, true);
    const input = toggle(el)!;
    equal(input.checked, false);
    input.click();
    await until(
      () =>
        text(el.shadowRoot!.querySelector("#structured-run-output-sentence")).startsWith("Structured run output is on"),
      "the confirmed state",
    );
    equal(server.requests[0].body, structuredOutputPatch(true));
    equal(toggle(el)!.checked, true);
  });

  it("should keep the switch where the API left it when the change is refused", async () => {
    const server = new FakeServer().on(PATCH, errorAnswer(403, "FORBIDDEN", "You may not change this workspace."));
    const el = await settings(server, false, true);
    toggle(el)!.click();
    await until(() => el.shadowRoot!.querySelector("#structured-run-output-error"), "the refusal");
    equal(toggle(el)!.checked, false);
    ok(
      text(el.shadowRoot!.querySelector("#structured-run-output-sentence")).startsWith("Structured run output is off"),
    );
  });

  it("should show a reader the sentence and no switch", async () => {
    const el = await settings(new FakeServer(), true, false);
    equal(toggle(el), null);
    ok(text(el.shadowRoot!.querySelector("#structured-run-output-sentence")).startsWith("Structured run output is on"));
  });
});
