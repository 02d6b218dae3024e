// Test fixtures of domain records shared by the domain and store tests.
import type { RunExecution } from "../../src/domain/records.ts";

/** A run's execution before anything ran (what a new run holds), with overrides. */
export function runExecution(overrides: Partial<RunExecution> = {}): RunExecution {
  return {
    planStatus: "pending",
    applyStatus: "pending",
    statusReason: null,
    hasChanges: null,
    planCounts: null,
    planDigest: null,
    planJsonDigest: null,
    planDiffDigest: null,
    dependencyBundleDigest: null,
    dependencyLockFile: null,
    policyOutcome: null,
    policyResultDigest: null,
    predecessorStateVersionId: null,
    predecessorStateDigest: null,
    workspaceLockFence: null,
    approvalExpiresAt: null,
    cancelRequestedAt: null,
    finishedAt: null,
    ...overrides,
  };
}
