import { DomainError } from "../domain/errors.ts";
import { buildInputSnapshot } from "../domain/input-snapshot.ts";
import { newId } from "../domain/ids.ts";
import type { Run, RunCommit, RunSource, Workspace } from "../domain/records.ts";
import { assertRunCreationAllowed, type RunKind } from "../domain/run.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import type { Services } from "./services.ts";
import { inTransaction } from "../store/index.ts";
import { resolveOpenTofuVersion } from "./workspaces.ts";

/** A run creation request as either API surface hands it over (flags still untrusted). */
export interface NewRun {
  kind: unknown;
  message?: string;
  autoApply?: unknown;
  isDestroy?: unknown;
  configurationVersionId?: string;
  source: RunSource;
  /** The commit, for a run a source connection creates (GitHub). */
  commit?: RunCommit | null;
  /** The source connection's working directory, recorded on the run. */
  sourceWorkingDirectory?: string | null;
  pullRequestNumber?: number | null;
  githubDeliveryId?: string | null;
  /**
   * Run variables (the CLI's -var, -var-file and TF_VAR_ values): terraform-category HCL
   * expressions that take the place of workspace variables with the same key, for this run only.
   */
  runVariables?: ReadonlyArray<{ key: string; value: string }>;
  /** The CLI's `-generate-config-out` (its `allow-config-generation`): the plan generates configuration for import blocks without one. */
  allowConfigGeneration?: boolean;
}

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** Checks run variables: OpenTofu variable names, each once. */
function checkRunVariables(runVariables: ReadonlyArray<{ key: string; value: string }>): void {
  const seen = new Set<string>();
  runVariables.forEach(({ key }, index) => {
    const source = { pointer: `/data/attributes/variables/${index}/key` };
    if (!VARIABLE_NAME.test(key))
      throw new DomainError("DOCUMENT_INVALID", `'${key}' is not an OpenTofu variable name.`, { source });
    if (seen.has(key)) throw new DomainError("DOCUMENT_INVALID", `The variable '${key}' is given twice.`, { source });
    seen.add(key);
  });
}

/**
 * Creates a run. Refusals (auto-apply, destroy, unknown kind) happen before anything is read or
 * written. Then, in one transaction, the inputs are pinned: the configuration digest of an
 * uploaded configuration version of this workspace, an input snapshot of the workspace variables
 * (sensitive values sealed under fresh handles; left out of speculative runs), the exact
 * OpenTofu version, the execution region and the platform.
 */
export async function createRun(
  services: Services,
  actor: AuthenticatedPrincipal,
  workspace: Workspace,
  input: NewRun,
): Promise<Run> {
  assertRunCreationAllowed({ kind: input.kind, autoApply: input.autoApply, isDestroy: input.isDestroy });
  const runVariables = input.runVariables ?? [];
  checkRunVariables(runVariables);
  const kind = input.kind as RunKind;
  const opentofuVersion = resolveOpenTofuVersion(workspace.opentofuVersion, services.opentofuVersions);
  if (opentofuVersion !== workspace.opentofuVersion) {
    throw new DomainError(
      "OPENTOFU_VERSION_UNAVAILABLE",
      `Workspace ${workspace.name} pins OpenTofu ${workspace.opentofuVersion}, which this deployment no longer provides.`,
    );
  }
  if (workspace.executionRegion !== services.config.region) {
    throw new DomainError(
      "EXECUTION_REGION_UNAVAILABLE",
      `Workspace ${workspace.name} runs in '${workspace.executionRegion}', which this deployment does not serve.`,
    );
  }
  const now = services.clock();
  const created = await inTransaction(services.db, async (stores) => {
    const configurationVersion = input.configurationVersionId
      ? await stores.configurationVersions.getById(input.configurationVersionId)
      : await stores.configurationVersions.latestUploaded(workspace.id);
    if (!configurationVersion) {
      throw input.configurationVersionId
        ? new DomainError(
            "NOT_FOUND",
            `Configuration version ${input.configurationVersionId} does not exist, or this token may not see it.`,
            {
              source: { pointer: "/data/relationships/configuration_version/data/id" },
            },
          )
        : new DomainError(
            "CONFIGURATION_VERSION_NOT_UPLOADED",
            `Workspace ${workspace.name} has no uploaded configuration yet. Create a configuration version and PUT the .tar.gz to its upload_url first.`,
          );
    }
    if (configurationVersion.organizationId !== workspace.organizationId) {
      // Another organization's id reads exactly like a missing one: existence is not confirmed.
      throw new DomainError(
        "NOT_FOUND",
        `Configuration version ${configurationVersion.id} does not exist, or this token may not see it.`,
        {
          source: { pointer: "/data/relationships/configuration_version/data/id" },
        },
      );
    }
    if (configurationVersion.workspaceId !== workspace.id) {
      throw new DomainError(
        "CONFIGURATION_VERSION_WORKSPACE_MISMATCH",
        `Configuration version ${configurationVersion.id} belongs to another workspace.`,
        {
          source: { pointer: "/data/relationships/configuration_version/data/id" },
        },
      );
    }
    if (configurationVersion.status !== "uploaded" || !configurationVersion.configDigest) {
      throw new DomainError(
        "CONFIGURATION_VERSION_NOT_UPLOADED",
        `Configuration version ${configurationVersion.id} is ${configurationVersion.status}; PUT the .tar.gz to its upload_url first.`,
      );
    }

    const overridden = new Set(runVariables.map((v) => v.key));
    const variables = (await stores.variables.listByWorkspace(workspace.id)).filter(
      (v) => !(v.category === "terraform" && overridden.has(v.key)),
    );
    const secrets: Array<{ handle: string; ciphertext: string }> = [];
    const { document, inputDigest } = buildInputSnapshot(
      {
        workspaceId: workspace.id,
        speculative: kind === "speculative",
        opentofuVersion,
        executionRegion: workspace.executionRegion,
        platform: services.platform,
        credentialsProfile: null,
        variables: variables
          .map((v) => ({
            key: v.key,
            category: v.category,
            hcl: v.hcl,
            sensitive: v.sensitive,
            // Unsealed only to be resealed under this snapshot's own handle.
            value: v.sensitive ? services.keys.secrets.openText(v.valueCiphertext) : v.value,
          }))
          .concat(
            runVariables.map((v) => ({
              key: v.key,
              category: "terraform" as const,
              hcl: true,
              sensitive: false,
              value: v.value,
            })),
          ),
      },
      (plaintext) => {
        const handle = newId("snapshotSecret");
        secrets.push({ handle, ciphertext: services.keys.secrets.sealText(plaintext) });
        return handle;
      },
    );
    const snapshot = await stores.snapshots.create({
      workspaceId: workspace.id,
      inputDigest,
      document,
      secrets,
      createdAt: now,
    });
    const run = await stores.runs.create({
      organizationId: workspace.organizationId,
      projectId: workspace.projectId,
      workspaceId: workspace.id,
      configurationVersionId: configurationVersion.id,
      inputSnapshotId: snapshot.id,
      kind,
      message: input.message ?? "",
      source: input.source,
      configDigest: configurationVersion.configDigest,
      inputDigest,
      opentofuVersion,
      executionRegion: workspace.executionRegion,
      platform: services.platform,
      createdBy: actor.id,
      createdAt: now,
      autoApply: input.autoApply as false | undefined,
      isDestroy: input.isDestroy as false | undefined,
      commit: input.commit ?? null,
      sourceWorkingDirectory: input.sourceWorkingDirectory ?? null,
      // Recorded on the run: its plan builds the CLI's redacted plan (and, later, JSON logs) or not, whatever the workspace says afterwards.
      structuredRunOutput: workspace.structuredRunOutputEnabled,
      allowConfigGeneration: input.allowConfigGeneration ?? false,
      pullRequestNumber: input.pullRequestNumber ?? null,
      githubDeliveryId: input.githubDeliveryId ?? null,
    });
    // Queued with the run, atomically: plan_and_apply runs of a workspace go one at a time.
    await stores.jobs.enqueue({
      runId: run.id,
      workspaceId: workspace.id,
      phase: "plan",
      serial: kind === "plan_and_apply",
      now,
    });
    await stores.audit.record({
      organizationId: workspace.organizationId,
      actorId: actor.id,
      action: "run.created",
      targetType: "runs",
      targetId: run.id,
      data: { workspace_id: workspace.id, kind, config_digest: run.configDigest, input_digest: inputDigest },
      createdAt: now,
    });
    return run;
  });
  services.jobQueued?.();
  return created;
}
