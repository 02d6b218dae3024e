import { checkSetupToken, completeSetup } from "../../commands/setup.ts";
import { newSessionResponse } from "./sessions.ts";
import type { H } from "./types.ts";

/** The first run: the one-time setup link's check and its use (no principal: the token is the credential). */
export const setupHandlers = {
  async checkSetupToken({ body, ctx }) {
    const { expiresAt } = await checkSetupToken(
      ctx.services,
      body.data.attributes.token,
      ctx.clientAddress ?? "unknown",
    );
    return {
      status: 200,
      body: { data: { type: "setup-token-checks", attributes: { valid: true, expires_at: expiresAt.toISOString() } } },
      headers: { "Cache-Control": "no-store" },
    };
  },

  async completeSetup({ body, ctx }) {
    const { token, email, display_name, password, organization_name } = body.data.attributes;
    const signedIn = await completeSetup(
      ctx.services,
      { token, email, displayName: display_name, password, organizationName: organization_name ?? null },
      ctx.clientAddress ?? "unknown",
    );
    return newSessionResponse(ctx, signedIn);
  },
} satisfies Pick<H, "checkSetupToken" | "completeSetup">;
