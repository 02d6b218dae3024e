import type { components } from "../../../../generated/tfe/types.gen.ts";
import { isAllowed } from "../../domain/authorization.ts";
import type { Run, Workspace } from "../../domain/records.ts";
import type { RunStatus } from "../../domain/run.ts";
import type { AuthenticatedPrincipal } from "../../http/principal.ts";

type S = components["schemas"];

/** The TFE status the CLI understands for each native run status. */
const TFE_RUN_STATUS: Record<RunStatus, string> = {
  pending: "pending",
  planning: "planning",
  policy_checking: "policy_checking",
  policy_soft_failed: "policy_soft_failed",
  awaiting_approval: "planned",
  applying: "applying",
  applied: "applied",
  planned_and_finished: "planned_and_finished",
  discarded: "discarded",
  canceled: "canceled",
  errored: "errored",
  expired: "discarded",
  plan_credentials_required: "errored",
  needs_recovery: "errored",
};

/** A run's plan and apply share its suffix, as in TFE (`run-X` → `plan-X`, `apply-X`). */
export function phaseId(runId: string, phase: "plan" | "apply"): string {
  return `${phase}-${runId.slice("run-".length)}`;
}

/** The compatibility workspace: never destroyable, never auto-applying, structured output off. */
export function presentWorkspace(workspace: Workspace, organizationName: string, principal: AuthenticatedPrincipal): S["Workspace"] {
  const target = { organizationId: workspace.organizationId, projectId: workspace.projectId, workspaceId: workspace.id };
  const canWrite = isAllowed(principal, "workspace:write", target);
  const canRun = isAllowed(principal, "run:create", target);
  return {
    type: "workspaces",
    id: workspace.id,
    attributes: {
      name: workspace.name,
      description: workspace.description,
      "execution-mode": "remote",
      "terraform-version": workspace.opentofuVersion,
      locked: false,
      "working-directory": workspace.workingDirectory,
      "structured-run-output-enabled": false,
      "tag-names": [],
      "vcs-repo": null,
      "auto-apply": false,
      "allow-destroy-plan": false,
      operations: true,
      "created-at": workspace.createdAt,
      "updated-at": workspace.updatedAt,
      permissions: {
        "can-queue-run": canRun,
        "can-queue-apply": canRun,
        "can-queue-destroy": false,
        "can-update": canWrite,
        "can-destroy": false,
        "can-lock": canWrite,
        "can-unlock": canWrite,
        "can-force-unlock": canWrite,
        "can-read-state-versions": isAllowed(principal, "workspace:read", target),
      },
      actions: { "is-destroyable": false },
    },
    relationships: {
      organization: { data: { type: "organizations", id: organizationName } },
      project: { data: { type: "projects", id: workspace.projectId } },
      "current-run": { data: null },
    },
  };
}

/** The compatibility run document. */
export function presentRun(run: Run): S["Run"] {
  return {
    type: "runs",
    id: run.id,
    attributes: {
      status: TFE_RUN_STATUS[run.status],
      "has-changes": false,
      "is-destroy": false,
      "auto-apply": false,
      "plan-only": run.kind === "speculative",
      message: run.message,
      source: run.source,
      "terraform-version": run.opentofuVersion,
      "created-at": run.createdAt,
      "status-timestamps": {},
      actions: { "is-cancelable": false, "is-confirmable": false, "is-discardable": false, "is-force-cancelable": false },
      permissions: { "can-apply": false, "can-cancel": false, "can-discard": false, "can-force-cancel": false, "can-override-policy": false },
    },
    relationships: {
      workspace: { data: { type: "workspaces", id: run.workspaceId } },
      plan: { data: { type: "plans", id: phaseId(run.id, "plan") } },
      apply: { data: { type: "applies", id: phaseId(run.id, "apply") } },
      "configuration-version": { data: { type: "configuration-versions", id: run.configurationVersionId } },
      "cost-estimate": { data: null },
      "policy-checks": { data: [] },
      "task-stages": { data: [] },
    },
  };
}
