import { checkSetupToken, completeSetup } from "../../commands/setup.ts";
import { SESSION_TTL_MS } from "../../domain/sessions.ts";
import { presentSession, sessionCookie } from "./sessions.ts";
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
    const { user, session, secret, csrfToken } = await completeSetup(
      ctx.services,
      { token, email, displayName: display_name, password, organizationName: organization_name ?? null },
      ctx.clientAddress ?? "unknown",
    );
    return {
      status: 201,
      body: presentSession({ ...session, csrfToken }, user),
      headers: {
        "Set-Cookie": sessionCookie(ctx, secret, Math.floor(SESSION_TTL_MS / 1000)),
        "Cache-Control": "no-store",
      },
    };
  },
} satisfies Pick<H, "checkSetupToken" | "completeSetup">;
