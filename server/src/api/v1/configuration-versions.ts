import { principalOf } from "../authorize.ts";
import { createConfigurationVersion, uploadConfiguration, uploadUrl } from "../../commands/configuration-versions.ts";
import { loadConfigurationVersion, loadWorkspace, uploadUrlFor } from "../lookup.ts";
import { presentConfigurationVersion } from "./presenters.ts";
import type { H } from "./types.ts";

/** Configuration versions and the signed upload. */
export const configurationVersionHandlers = {
  async createConfigurationVersion({ path, body, ctx }) {
    const workspace = await loadWorkspace(ctx, path.workspace_id, "workspace:write");
    const configurationVersion = await createConfigurationVersion(ctx.services, principalOf(ctx), workspace, {
      speculative: body.data.attributes?.speculative ?? false,
      source: "api",
    });
    return {
      status: 201,
      body: {
        data: presentConfigurationVersion(
          configurationVersion,
          uploadUrl(ctx.services, ctx.baseUrl, configurationVersion),
        ),
      },
    };
  },

  async getConfigurationVersion({ path, ctx }) {
    const configurationVersion = await loadConfigurationVersion(ctx, path.configuration_version_id, "workspace:read");
    return {
      status: 200,
      body: {
        data: presentConfigurationVersion(
          configurationVersion,
          await uploadUrlFor(ctx, configurationVersion, "workspace:write"),
        ),
      },
    };
  },

  async uploadConfiguration({ path, body, ctx }) {
    const configurationVersion = await uploadConfiguration(ctx.services, path.upload_token, body);
    return { status: 200, body: { data: presentConfigurationVersion(configurationVersion, null) } };
  },
} satisfies Partial<H>;
