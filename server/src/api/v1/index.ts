import type { Handlers } from "../../../../generated/v1/handlers.gen.ts";
import { operations } from "../../../../generated/v1/operations.gen.ts";
import type { RequestContext, SurfaceBinding } from "../../http/app.ts";
import { renderV1Error } from "../../http/middleware/errors.ts";
import { attestationHandlers } from "./attestations.ts";
import { auditHandlers } from "./audit.ts";
import { configurationVersionHandlers } from "./configuration-versions.ts";
import { downloadHandlers } from "./downloads.ts";
import { githubHandlers } from "./github.ts";
import { auditOversizedWebhook } from "../../commands/github-webhooks.ts";
import { healthHandlers } from "./health.ts";
import { referenceHandlers } from "./reference.ts";
import { organizationHandlers } from "./organizations.ts";
import { policyHandlers } from "./policies.ts";
import { reviewHandlers } from "./review.ts";
import { runHandlers } from "./runs.ts";
import { sessionHandlers } from "./sessions.ts";
import { setupHandlers } from "./setup.ts";
import { workspaceHandlers } from "./workspaces.ts";
import { workspaceLockHandlers } from "./workspace-locks.ts";
import { workspaceDeletionHandlers } from "./workspace-deletion.ts";
import { workloadIdentityHandlers } from "./workload-identity.ts";

/** Every v1 handler; `satisfies` makes a missing or mistyped operation a compile error. */
export const v1Handlers = {
  ...healthHandlers,
  ...referenceHandlers,
  ...organizationHandlers,
  ...workspaceHandlers,
  ...workspaceLockHandlers,
  ...workspaceDeletionHandlers,
  ...configurationVersionHandlers,
  ...runHandlers,
  ...policyHandlers,
  ...reviewHandlers,
  ...attestationHandlers,
  ...sessionHandlers,
  ...setupHandlers,
  ...downloadHandlers,
  ...githubHandlers,
  ...workloadIdentityHandlers,
  ...auditHandlers,
} satisfies Handlers<RequestContext>;

/** The v1 surface as the app binds it. */
export const v1Surface: SurfaceBinding = {
  name: "v1",
  operations,
  handlers: v1Handlers,
  renderError: renderV1Error,
  prefix: "/",
  rawBodyRefused: async (operationId, headers, services, limit) => {
    if (operationId === "receiveGithubWebhook") await auditOversizedWebhook(services, headers, limit);
  },
};
