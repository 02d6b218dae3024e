import type { Handlers } from "../../../../generated/tfe/handlers.gen.ts";
import { operations } from "../../../../generated/tfe/operations.gen.ts";
import type { RequestContext, SurfaceBinding } from "../../http/app.ts";
import { organizationHandlers } from "./organizations.ts";
import { projectHandlers } from "./projects.ts";
import { planJsonHandlers } from "./plan-json.ts";
import { runHandlers } from "./runs.ts";
import { renderTfeError } from "./errors.ts";
import { stateHandlers } from "./state.ts";
import { variableHandlers } from "./variables.ts";
import { workspaceHandlers } from "./workspaces.ts";

/** The API version the CLI requires (≥ 2.5 for the `cloud` block). */
export const TFP_API_VERSION = "2.5";

/**
 * The Terraform Enterprise release StackShip answers as (`vYYYYMM-N`): the first one whose CLI
 * runs render structured run output (OpenTofu's internal/cloud shouldRenderStructuredRunOutput).
 */
export const TFE_VERSION = "v202302-1";

/** The compatibility handlers; `satisfies` makes a missing operation a compile error. */
export const tfeHandlers = {
  async getDiscovery() {
    const base = "/api/v2/";
    return { status: 200, body: { "tfe.v2": base, "tfe.v2.1": base, "tfe.v2.2": base, "state.v2": base } };
  },

  async ping() {
    // X-TFE-Version (no TFP-AppName: the CLI takes StackShip for an Enterprise server) is what
    // makes the CLI honour a run's `structured-run-output-enabled` (a release from 2023-02 on);
    // the plan and apply logs of such a run are `-json` UI lines (api/tfe/logs.ts).
    return {
      status: 204,
      body: undefined,
      headers: { "TFP-API-Version": TFP_API_VERSION, "X-TFE-Version": TFE_VERSION },
    };
  },

  ...organizationHandlers,
  ...runHandlers,
  ...planJsonHandlers,
  ...projectHandlers,
  ...stateHandlers,
  ...variableHandlers,
  ...workspaceHandlers,
} satisfies Handlers<RequestContext>;

/** The compatibility surface as the app binds it. */
export const tfeSurface: SurfaceBinding = {
  name: "tfe",
  operations,
  handlers: tfeHandlers,
  renderError: renderTfeError,
  prefix: "/api/v2",
};
