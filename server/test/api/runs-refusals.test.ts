import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  createOrganizationWithToken,
  createPendingConfiguration,
  createWorkspace,
  randomId,
  uploadConfiguration,
} from "../support/factories.ts";
import { expectV1Error } from "../support/responses.ts";
import { testEachServer } from "../support/test-server.ts";

import { refusedRun, setUp } from "../support/api-runs.ts";

// The refusals of createRun; what it creates is runs.test.ts.
const create = suite("createRun");

testEachServer(
  create,
  "fails 422 RUN_AUTO_APPLY_FORBIDDEN when auto_apply is true, and writes nothing",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const result = await refusedRun(server, token, workspace.id, { auto_apply: true });
    const error = expectV1Error(result, 422, "RUN_AUTO_APPLY_FORBIDDEN");
    assert.is(error.title, "Auto-apply is not supported");
  },
);

testEachServer(
  create,
  "fails 422 RUN_DESTROY_FORBIDDEN when is_destroy is true, and writes nothing",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const result = await refusedRun(server, token, workspace.id, { is_destroy: true });
    const error = expectV1Error(result, 422, "RUN_DESTROY_FORBIDDEN");
    assert.is(error.title, "Destroy runs are not supported");
  },
);

testEachServer(
  create,
  "fails 422 RUN_AUTO_APPLY_FORBIDDEN or RUN_DESTROY_FORBIDDEN when both are true, and writes nothing",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const result = await refusedRun(server, token, workspace.id, {
      auto_apply: true,
      is_destroy: true,
      kind: "speculative",
    });
    assert.is(result.response.status, 422);
    const code = (result.error as { errors: Array<{ code: string }> }).errors[0].code;
    assert.ok(code === "RUN_AUTO_APPLY_FORBIDDEN" || code === "RUN_DESTROY_FORBIDDEN", code);
  },
);

testEachServer(
  create,
  'fails 422 DOCUMENT_INVALID at /data/attributes/auto_apply when auto_apply is the string "true", and writes nothing',
  async (server) => {
    const { token, workspace } = await setUp(server);
    const result = await refusedRun(server, token, workspace.id, { auto_apply: "true" });
    expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer: "/data/attributes/auto_apply" });
  },
);

testEachServer(
  create,
  "fails 422 DOCUMENT_INVALID at /data/attributes/is_destroy when is_destroy is 1, and writes nothing",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const result = await refusedRun(server, token, workspace.id, { is_destroy: 1 });
    expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer: "/data/attributes/is_destroy" });
  },
);

testEachServer(
  create,
  "fails 422 DOCUMENT_INVALID pointing at an unknown attribute, and writes nothing",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const unknown = await refusedRun(server, token, workspace.id, { refresh_only: true });
    expectV1Error(unknown, 422, "DOCUMENT_INVALID", { pointer: "/data/attributes/refresh_only" });
    // The TFE spelling is not a v1 member either: it must not slip past as an unknown key.
    const dashed = await refusedRun(server, token, workspace.id, { "auto-apply": true });
    expectV1Error(dashed, 422, "DOCUMENT_INVALID", { pointer: "/data/attributes/auto-apply" });
  },
);

testEachServer(
  create,
  "fails 422 DOCUMENT_INVALID at /data/attributes/kind for an unknown kind, and writes nothing",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const result = await refusedRun(server, token, workspace.id, { kind: "destroy" });
    expectV1Error(result, 422, "DOCUMENT_INVALID", { pointer: "/data/attributes/kind" });
  },
);

testEachServer(
  create,
  "fails 409 CONFIGURATION_VERSION_NOT_UPLOADED when the named configuration version is still pending, and writes nothing",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const pending = await createPendingConfiguration(server, token, workspace.id);
    const result = await refusedRun(server, token, workspace.id, {}, pending.id);
    expectV1Error(result, 409, "CONFIGURATION_VERSION_NOT_UPLOADED");
  },
);

testEachServer(
  create,
  "fails 409 CONFIGURATION_VERSION_NOT_UPLOADED when the workspace has no uploaded configuration at all, and writes nothing",
  async (server) => {
    const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
    const workspace = await createWorkspace(server, token, organizationName);
    const none = await refusedRun(server, token, workspace.id);
    expectV1Error(none, 409, "CONFIGURATION_VERSION_NOT_UPLOADED");
    // Only a pending one: still nothing to run.
    await createPendingConfiguration(server, token, workspace.id);
    const onlyPending = await refusedRun(server, token, workspace.id);
    expectV1Error(onlyPending, 409, "CONFIGURATION_VERSION_NOT_UPLOADED");
  },
);

testEachServer(
  create,
  "fails 422 CONFIGURATION_VERSION_WORKSPACE_MISMATCH for a configuration version of another workspace, and writes nothing",
  async (server) => {
    const { organizationName, token, workspace } = await setUp(server);
    const other = await createWorkspace(server, token, organizationName, { name: "other" });
    const foreign = await uploadConfiguration(server, token, other.id);
    const result = await refusedRun(server, token, workspace.id, {}, foreign.configurationVersion.id);
    expectV1Error(result, 422, "CONFIGURATION_VERSION_WORKSPACE_MISMATCH", {
      pointer: "/data/relationships/configuration_version/data/id",
    });
  },
);

testEachServer(
  create,
  "fails 404 NOT_FOUND for a configuration version that does not exist, and writes nothing",
  async (server) => {
    const { token, workspace } = await setUp(server);
    const result = await refusedRun(server, token, workspace.id, {}, randomId("cv"));
    expectV1Error(result, 404, "NOT_FOUND", { pointer: "/data/relationships/configuration_version/data/id" });
  },
);

testEachServer(
  create,
  "fails 404 NOT_FOUND for a workspace that does not exist, and writes nothing",
  async (server) => {
    const { token } = await setUp(server);
    const result = await refusedRun(server, token, randomId("ws"));
    expectV1Error(result, 404, "NOT_FOUND");
  },
);

create.run();
