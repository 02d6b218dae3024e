import { uploadConfiguration } from "../../commands/configuration-versions.ts";
import { readConfigurationVersion, startConfigurationVersion } from "../configuration-versions.ts";
import { presentConfigurationVersion } from "./presenters.ts";
import type { H } from "./types.ts";

/** Configuration versions and the signed upload. */
export const configurationVersionHandlers = {
  async createConfigurationVersion({ path, body, ctx }) {
    const created = await startConfigurationVersion(ctx, path.workspace_id, "workspace:write", {
      speculative: body.data.attributes?.speculative ?? false,
      source: "api",
    });
    return { status: 201, body: { data: presentConfigurationVersion(...created) } };
  },

  async getConfigurationVersion({ path, ctx }) {
    const found = await readConfigurationVersion(ctx, path.configuration_version_id, "workspace:write");
    return { status: 200, body: { data: presentConfigurationVersion(...found) } };
  },

  async uploadConfiguration({ path, body, ctx }) {
    const configurationVersion = await uploadConfiguration(ctx.services, path.upload_token, body);
    return { status: 200, body: { data: presentConfigurationVersion(configurationVersion, null) } };
  },
} satisfies Partial<H>;
