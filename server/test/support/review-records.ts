import type { Permission } from "../../src/domain/authorization.ts";
import type { Run, RunAttempt, RunExecution } from "../../src/domain/records.ts";
import type { ReviewCaller } from "../../src/domain/review.ts";
import { runExecution } from "./domain-fixtures.ts";
import type { ReviewDocumentInput } from "../../src/api/v1/review-presenter.ts";

// The records a run review is derived from, for the domain and presenter tests of the review.

export const NOW = new Date("2026-12-02T12:00:00.000Z");
export const DIGEST = "a".repeat(64);
export const POLICY_DIGEST = "b".repeat(64);
export const STATE_DIGEST = "c".repeat(64);

export const execution = runExecution;

export function run(status: Run["status"], x: Partial<RunExecution> = {}, extra: Partial<Run> = {}): Run {
  return {
    id: "run-0000000000000001",
    organizationId: "org-0000000000000001",
    projectId: "prj-0000000000000001",
    workspaceId: "ws-0000000000000001",
    configurationVersionId: "cv-1",
    inputSnapshotId: "snap-1",
    kind: "plan_and_apply",
    status,
    message: "Add the bucket",
    source: "api",
    commit: null,
    sourceWorkingDirectory: null,
    structuredRunOutput: false,
    pullRequestNumber: null,
    autoApply: false,
    isDestroy: false,
    configDigest: DIGEST,
    inputDigest: DIGEST,
    opentofuVersion: "1.10.7",
    executionRegion: "local",
    platform: "linux_amd64",
    createdBy: "pr-1",
    createdAt: "2026-12-02T11:00:00.000Z",
    updatedAt: "2026-12-02T11:00:00.000Z",
    execution: execution(x),
    ...extra,
  };
}

export function attempt(phase: "plan" | "apply", overrides: Partial<RunAttempt> = {}): RunAttempt {
  return {
    id: `attempt-${phase}`,
    runId: "run-0000000000000001",
    phase,
    attemptNumber: 1,
    runnerId: "runner-1",
    sandboxId: `sbx-${phase}`,
    sandboxName: `run-0000000000000001-${phase}-1`,
    region: "local",
    baseProfile: "stackship-standard/v1",
    status: "succeeded",
    terminalClassification: "exit_zero",
    startedAt: phase === "plan" ? "2026-12-02T11:00:01.000Z" : "2026-12-02T11:10:00.000Z",
    heartbeatAt: "2026-12-02T11:00:02.000Z",
    finishedAt: phase === "plan" ? "2026-12-02T11:00:05.000Z" : "2026-12-02T11:10:09.000Z",
    ...overrides,
  };
}

export function records(r: Run, overrides: Partial<ReviewDocumentInput> = {}): ReviewDocumentInput {
  return {
    run: r,
    workspace: { id: "ws-0000000000000001", name: "app", workingDirectory: "infra" },
    commit: null,
    attempts: [],
    jobs: [],
    decision: null,
    evaluation: null,
    findings: [],
    overrides: [],
    overridesTruncated: false,
    stateVersions: [],
    displayNames: new Map(),
    logTail: null,
    // A finished plan published its three artifacts (commands/run-artifacts.ts).
    artifacts: r.execution.planStatus === "finished" ? ["plan", "plan_json", "plan_diff"] : [],
    recovery: null,
    ...overrides,
  };
}

export function caller(permissions: Permission[], options: { somewhere?: boolean } = {}): ReviewCaller {
  return {
    may: (p) => permissions.includes(p),
    mayDownloadSomewhere:
      options.somewhere ?? permissions.some((p) => p.startsWith("artifact") || p === "state:recover"),
  };
}

export const VIEWER: Permission[] = ["workspace:read", "run:read", "artifact:read"];
export const OPERATOR: Permission[] = [
  ...VIEWER,
  "run:create",
  "run:approve",
  "run:cancel",
  "workspace:write",
  "state:read",
];
export const ADMIN: Permission[] = [
  ...OPERATOR,
  "run:recover",
  "policy:override_soft",
  "artifact:read_sensitive",
  "state:recover",
  "workspace:delete",
  "org:admin",
];

export const awaiting = () =>
  run("awaiting_approval", {
    planStatus: "finished",
    hasChanges: true,
    planCounts: { create: 1, change: 0, destroy: 2 },
    planDigest: DIGEST,
    policyOutcome: "passed",
    policyResultDigest: POLICY_DIGEST,
    approvalExpiresAt: "2026-12-03T11:00:06.000Z",
  });
export const evaluation = (outcome: "passed" | "soft_failed" | "skipped" = "passed") => ({
  outcome,
  resultDigest: POLICY_DIGEST,
  opaVersion: "1.4.2",
  opaBuildCommit: "abc123",
  evaluatedAt: "2026-12-02T11:00:06.000Z",
});
