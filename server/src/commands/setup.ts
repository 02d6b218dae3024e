import { randomBytes } from "node:crypto";
import { DomainError } from "../domain/errors.ts";
import { hashPassword, MIN_PASSWORD_LENGTH } from "../domain/sessions.ts";
import { inTransaction, type Session, type User } from "../store/index.ts";
import { createOrganizationIn } from "./organizations.ts";
import type { Services } from "./services.ts";
import { newSessionSecrets, openSession } from "./users.ts";
import { sha256Hex } from "../domain/canonical-json.ts";

/** How long a printed setup link stays usable. */
export const SETUP_LINK_TTL_MS = 60 * 60 * 1000;

const REFUSED =
  "This setup link is unknown, expired or already used, or setup is already complete. Restart StackShip (npm start) to print a new link while no administrator exists; once one exists, sign in instead.";

function tokenHash(token: string): string {
  return sha256Hex(token);
}

/**
 * On start, while no deployment administrator exists: a new one-time setup token (returned once,
 * stored only as its SHA-256, valid one hour; every earlier link stops working). Null once an
 * administrator exists, so the link is never printed again.
 */
export async function issueSetupToken(services: Services): Promise<{ token: string; expiresAt: Date } | null> {
  if (await services.stores.setupTokens.administratorExists()) return null;
  const token = `sst.${randomBytes(32).toString("base64url")}`;
  const now = services.clock().getTime();
  const expiresAtMs = now + SETUP_LINK_TTL_MS;
  await inTransaction(services.db, (stores) =>
    stores.setupTokens.issue({ tokenHash: tokenHash(token), createdAtMs: now, expiresAtMs }),
  );
  return { token, expiresAt: new Date(expiresAtMs) };
}

/** Audits a refused setup token (named by a prefix of its hash, never by its text) and throws. */
async function refuse(
  services: Services,
  token: string,
  clientAddress: string,
  step: "check" | "complete",
): Promise<never> {
  await services.stores.audit.record({
    organizationId: null,
    actorId: null,
    action: "setup.refused",
    targetType: "setup_tokens",
    targetId: tokenHash(token).slice(0, 16),
    data: { refusal: "SETUP_TOKEN_INVALID", step, client_address: clientAddress },
    createdAt: services.clock(),
  });
  throw new DomainError("SETUP_TOKEN_INVALID", REFUSED, { source: { pointer: "/data/attributes/token" } });
}

/** Whether the token can complete setup now: its expiry, or SETUP_TOKEN_INVALID (audited). Changes nothing else. */
export async function checkSetupToken(
  services: Services,
  token: string,
  clientAddress: string,
): Promise<{ expiresAt: Date }> {
  const usable = (await services.stores.setupTokens.administratorExists())
    ? undefined
    : await services.stores.setupTokens.findUsable(tokenHash(token), services.clock().getTime());
  if (!usable) return refuse(services, token, clientAddress, "check");
  return { expiresAt: new Date(usable.expiresAtMs) };
}

class TokenNotUsable extends Error {}

/**
 * Spends the setup token: in one transaction the deployment administrator, optionally the first
 * organization (with its Default Project) and a signed-in session. A token that is unknown,
 * expired or used, or any token once an administrator exists, creates nothing and is refused
 * with SETUP_TOKEN_INVALID (audited); any other failure rolls back with the token still usable.
 */
export async function completeSetup(
  services: Services,
  input: { token: string; email: string; displayName: string; password: string; organizationName: string | null },
  clientAddress: string,
): Promise<{ user: User; session: Session; secret: string; csrfToken: string }> {
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new DomainError("DOCUMENT_INVALID", `A password needs at least ${MIN_PASSWORD_LENGTH} characters.`, {
      source: { pointer: "/data/attributes/password" },
    });
  }
  const passwordHash = await hashPassword(input.password);
  const secrets = newSessionSecrets(services);
  const now = services.clock();
  try {
    return await inTransaction(services.db, async (stores) => {
      if (
        (await stores.setupTokens.administratorExists()) ||
        !(await stores.setupTokens.consume(tokenHash(input.token), now.getTime()))
      )
        throw new TokenNotUsable();
      const user = await stores.users.createUser({
        email: input.email,
        displayName: input.displayName,
        passwordHash,
        siteAdmin: true,
        createdAt: now,
      });
      await stores.audit.recordAction(
        { organizationId: null, actorId: user.id, createdAt: now },
        "user.created",
        ["users", user.id],
        { site_admin: true },
      );
      if (input.organizationName !== null) await createOrganizationIn(stores, user.id, input.organizationName, now);
      await stores.audit.recordAction(
        { organizationId: null, actorId: user.id, createdAt: now },
        "setup.completed",
        ["users", user.id],
        {
          organization_name: input.organizationName,
          client_address: clientAddress,
        },
      );
      const session = await openSession(stores, user, secrets, now);
      return { user, session, ...secrets };
    });
  } catch (error) {
    if (error instanceof TokenNotUsable) return refuse(services, input.token, clientAddress, "complete");
    throw error;
  }
}
