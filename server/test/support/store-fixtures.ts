// Builders shared by the store tests. Not imported by production code.
import type { Knex } from "knex";
import * as assert from "uvu/assert";
import { DomainError, type ErrorCode } from "../../src/domain/errors.ts";
import { buildInputSnapshot } from "../../src/domain/input-snapshot.ts";
import { newId } from "../../src/domain/ids.ts";
import type {
  ConfigurationVersion,
  InputSnapshot,
  Organization,
  Project,
  Workspace,
} from "../../src/domain/records.ts";
import type { Database } from "../../src/store/db.ts";
import { createStores, type RunChangeNotice, type Stores } from "../../src/store/index.ts";
import type { CreateRunInput } from "../../src/store/run-repository.ts";

const EPOCH = Date.parse("2026-12-02T09:00:00.000Z");

/** A deterministic clock for tests: `at(n)` is n seconds after a fixed instant, as ISO text. */
export function at(seconds: number, milliseconds = 0): string {
  return new Date(EPOCH + seconds * 1000 + milliseconds).toISOString();
}

/** An organization, a project and a workspace in it. */
export interface Tenancy {
  organization: Organization;
  project: Project;
  workspace: Workspace;
}

/** Creates an organization with one project and one workspace. */
export async function seedTenancy(stores: Stores, name = "acme"): Promise<Tenancy> {
  const organization = await stores.organizations.create({ name, createdAt: at(0) });
  const project = await stores.projects.create({ organizationId: organization.id, name: "default", createdAt: at(1) });
  const workspace = await stores.workspaces.create({
    organizationId: organization.id,
    projectId: project.id,
    name: "networking",
    opentofuVersion: "1.8.5",
    executionRegion: "eu-west-1",
    createdAt: at(2),
  });
  return { organization, project, workspace };
}

/** What a run points at: an uploaded configuration version and an input snapshot. */
export interface RunPrerequisites extends Tenancy {
  configurationVersion: ConfigurationVersion;
  snapshot: InputSnapshot;
}

/** Creates tenancy plus an uploaded configuration version and an input snapshot. */
export async function seedRunPrerequisites(stores: Stores, name = "acme"): Promise<RunPrerequisites> {
  const tenancy = await seedTenancy(stores, name);
  const created = await stores.configurationVersions.create({
    organizationId: tenancy.organization.id,
    workspaceId: tenancy.workspace.id,
    speculative: false,
    source: "tfe-api",
    createdAt: at(3),
  });
  const configurationVersion = await stores.configurationVersions.markUploaded(created.id, {
    configDigest: "a".repeat(64),
    sizeBytes: 1024,
    artifactKey: `config/${created.id}.tar.gz`,
    uploadedAt: at(4),
  });
  const { document, inputDigest } = buildInputSnapshot(
    {
      workspaceId: tenancy.workspace.id,
      speculative: false,
      opentofuVersion: "1.8.5",
      executionRegion: "eu-west-1",
      platform: "linux_amd64",
      credentialsProfile: null,
      variables: [],
    },
    () => newId("snapshotSecret"),
  );
  const snapshot = await stores.snapshots.create({
    workspaceId: tenancy.workspace.id,
    inputDigest,
    document,
    secrets: [],
    createdAt: at(5),
  });
  return { ...tenancy, configurationVersion, snapshot };
}

/** A valid run creation input for the prerequisites, with overrides. */
export function runInput(prerequisites: RunPrerequisites, overrides: Partial<CreateRunInput> = {}): CreateRunInput {
  return {
    organizationId: prerequisites.organization.id,
    projectId: prerequisites.project.id,
    workspaceId: prerequisites.workspace.id,
    configurationVersionId: prerequisites.configurationVersion.id,
    inputSnapshotId: prerequisites.snapshot.id,
    kind: "plan_and_apply",
    source: "api",
    configDigest: prerequisites.configurationVersion.configDigest ?? "",
    inputDigest: prerequisites.snapshot.inputDigest,
    opentofuVersion: "1.8.5",
    executionRegion: "eu-west-1",
    platform: "linux_amd64",
    createdBy: null,
    createdAt: at(10),
    ...overrides,
  };
}

/** The stores over `db` and one pending run of acme (seedRunPrerequisites, runInput). */
export async function storesWithRun(db: Pick<Database, "knex" | "dialect">) {
  const stores = createStores(db.knex, db.dialect);
  const run = await stores.runs.create(runInput(await seedRunPrerequisites(stores)));
  return { stores, run };
}

/** The run notice of a plan that has just started. */
export function planStartedNotice(runId: string): Extract<RunChangeNotice, { kind: "run" }> {
  return {
    kind: "run",
    runId,
    status: "planning",
    statusReason: null,
    planStatus: "running",
    policyOutcome: null,
    applyStatus: "pending",
    event: "plan_started",
  };
}

/** Reads `select count(*)` of a table as a number on either dialect (pg returns a string). */
export async function countRows(knex: Knex, table: string): Promise<number> {
  const [row] = await knex(table).count({ count: "*" });
  return Number(row.count);
}

/** Awaits `promise` and asserts that it rejects with an instance of `type`. */
export async function assertRejects(
  promise: Promise<unknown>,
  type: new (...args: never[]) => Error,
  message?: string,
): Promise<void> {
  try {
    await promise;
  } catch (error) {
    assert.instance(error, type, message);
    return;
  }
  throw new assert.Assertion({
    message: `${message ?? "expected"} to reject with ${type.name}`,
    generated: false,
    operator: "rejects",
    expects: type.name,
    actual: "resolved",
  });
}

/** Awaits `promise` and asserts that it rejects with a DomainError of `code`. */
export async function assertDomainError(
  promise: Promise<unknown>,
  code: ErrorCode,
  message?: string,
): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    assert.instance(error, DomainError, message);
    assert.is((error as DomainError).code, code, message);
    return error as DomainError;
  }
  throw new assert.Assertion({
    message: `${message ?? "expected"} to reject with ${code}`,
    generated: false,
    operator: "rejects",
    expects: code,
    actual: "resolved",
  });
}
