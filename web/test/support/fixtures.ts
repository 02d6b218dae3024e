// Fixtures of component tests: a session, ids, and a review and a plan-diff changed per test.
import type { PlanDiff, PlanDiffResource } from "@stackship/client";
import type { Session } from "../../src/app/session.ts";
import type { Review } from "../../src/run/review-model.ts";

/** A member's session in acme (no organization admin), changed by `patch`. */
export function sessionFixture(patch: Partial<Session> = {}): Session {
  return {
    id: "ses-1",
    csrfToken: "csrf",
    expiresAt: "2027-01-01T00:00:00.000Z",
    stepUpFreshUntil: null,
    user: { id: "usr-1", email: "a@example.com", display_name: "A", site_admin: false },
    organizations: [{ id: "org-1", name: "acme" }],
    organization: "acme",
    organizationAdmin: false,
    ...patch,
  };
}

export const RUN_ID = "run-0000000000000001";
export const WS_ID = "ws-0000000000000001";
export const DIGEST = "a".repeat(64);

/** The soft-mandatory finding of a policy that flags the fixture's resource. */
export const NEEDS_TAGS_FINDING = {
  title: "Needs tags",
  message: "terraform_data.greeting is flagged",
  address: "terraform_data.greeting",
  enforcement_level: "soft_mandatory",
} as const;

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> | T[K] : T[K] };

/** A review of a run awaiting approval (1 create, 0 destroys), changed by `patch`. */
export function reviewFixture(patch: (review: Review) => void = () => undefined): Review {
  const review: Review = {
    type: "run-reviews",
    id: RUN_ID,
    attributes: {
      header: {
        title: "Add the greeting",
        title_generated: false,
        commit_message: { state: "not_recorded", value: null },
        status: "awaiting_approval",
        kind: "plan_and_apply",
        source: "api",
        commit_sha: { state: "not_recorded", value: null },
        commit_url: { state: "not_recorded", value: null },
        source_ref: { state: "not_recorded", value: null },
        working_directory: { state: "recorded", value: "" },
        commit_author: { state: "not_recorded", value: null },
        created_at: "2026-12-03T10:00:00.000Z",
        started_at: "2026-12-03T10:00:01.000Z",
        finished_at: null,
        run_id: RUN_ID,
        workspace: { id: WS_ID, name: "app", href: `/v1/workspaces/${WS_ID}` },
      },
      available_actions: ["approve", "discard", "cancel"],
      stages: {
        plan: {
          status: "succeeded",
          phase_status: "finished",
          started_at: "2026-12-03T10:00:01.000Z",
          finished_at: "2026-12-03T10:00:05.000Z",
          summary: { state: "recorded", counts: { create: 1, change: 0, destroy: 0 }, has_changes: true },
        },
        policy: {
          status: "skipped",
          outcome: "skipped",
          started_at: null,
          finished_at: "2026-12-03T10:00:05.000Z",
          findings: [],
          override_control: null,
          overrides: [],
          overrides_truncated: false,
        },
        approval: {
          status: "waiting",
          state: "awaiting",
          decided_by: null,
          decided_at: null,
          reason: null,
          approval_expires_at: "2026-12-04T10:00:05.000Z",
          plan_digest: DIGEST,
          destroy_confirmation_required: false,
          started_at: "2026-12-03T10:00:05.000Z",
          finished_at: null,
          attestations: [],
        },
        apply: {
          status: "pending",
          phase_status: "pending",
          started_at: null,
          finished_at: null,
          state_version: { state: "not_recorded" },
        },
      },
      terminal_reason: null,
      recovery: null,
      evidence: {
        jobs: [],
        definition_sha: { state: "not_recorded", value: null },
        build_sha: { state: "not_recorded", value: null },
        opentofu_version: { state: "recorded", value: "1.10.0" },
        opentofu_build: { state: "not_recorded", value: null },
        runner_release: { state: "not_recorded", value: null },
        sandbox_base_profile: { state: "not_recorded", value: null },
        sandbox_profile_digest: { state: "not_recorded", value: null },
        protocol: { state: "not_recorded", value: null },
        opa_version: { state: "not_recorded", value: null },
        opa_build_commit: { state: "not_recorded", value: null },
        job_engine_build: { state: "not_recorded", value: null },
        attempts: [],
      },
      downloads: {
        state: "permitted",
        items: [
          {
            kind: "redacted_plan",
            method: "GET",
            href: `/v1/runs/${RUN_ID}/downloads/redacted-plan`,
            requires_reason: false,
            requires_step_up: false,
            available: true,
          },
        ],
      },
    },
    relationships: {
      organization: { data: { type: "organizations", id: "org-0000000000000001" } },
      workspace: { data: { type: "workspaces", id: WS_ID } },
      run: { data: { type: "runs", id: RUN_ID } },
    },
    links: { self: `/v1/runs/${RUN_ID}/review` },
  };
  patch(review);
  return review;
}
export type { DeepPartial };

/** A plan-diff of `n` resources (create, update, delete, replace in turn), with markers on the first few. */
export function planDiffFixture(n: number, patch: (diff: PlanDiff) => void = () => undefined): PlanDiff {
  const actions = ["create", "update", "delete", "replace"] as const;
  const resources: PlanDiffResource[] = [];
  for (let i = 0; i < n; i++) {
    const action = actions[i % actions.length];
    resources.push({
      address: `terraform_data.item[${i}]`,
      provider: "terraform.io/builtin/terraform",
      mode: "managed",
      type: "terraform_data",
      name: "item",
      actions: action === "replace" ? ["delete", "create"] : [action],
      action,
      before: action === "create" ? null : { input: `old-${i}`, password: { $stackship: "sensitive" } },
      after:
        action === "delete"
          ? null
          : { input: `new-${i}`, password: { $stackship: "sensitive" }, id: { $stackship: "unknown" } },
      ...(action === "replace" ? { replace_paths: [["input"]] } : {}),
    });
  }
  const diff: PlanDiff = {
    format: "stackship.plan-diff/v1",
    run_id: RUN_ID,
    opentofu_version: "1.10.0",
    plan_format_version: "1.2",
    plan_timestamp: null,
    plan_errored: false,
    truncated: false,
    truncation: { max_resources: 5000, max_bytes: 4194304, changed_resources: n, cut: 0, withheld: 0, dropped: 0 },
    resources,
  };
  patch(diff);
  return diff;
}
