import { randomBytes } from "node:crypto";
import { isAllowed } from "../domain/authorization.ts";
import { DomainError } from "../domain/errors.ts";
import type { Organization } from "../domain/records.ts";
import type { AuthenticatedPrincipal } from "../domain/principal.ts";
import { GitHubApiError, type AppInstallation } from "../github/client.ts";
import type { InstallationBinding } from "../store/github-connection-repository.ts";
import type { Services } from "./services.ts";
import { sha256Hex } from "../domain/canonical-json.ts";

/**
 * Who owns a GitHub App installation. An installation is bound to an organization only through
 * GitHub's installation flow (a setup state issued to an organization administrator's session,
 * redeemed once by that session, for an installation GitHub confirms was created after the state
 * was issued) or by a deployment administrator after GitHub confirmed the installation. Source
 * connections may use only installations bound to their organization; another organization may
 * bind one only after its owner released it.
 */

/** How long a setup state may be redeemed. */
export const SETUP_STATE_TTL_MS = 10 * 60_000;

/** GitHub's clock and ours may disagree by this much when comparing an installation's creation with a state's issue. */
const CLOCK_SKEW_MS = 60_000;

const hashState = (state: string) => sha256Hex(state);

/** Whether the principal is an administrator of the organization itself (an organization-scoped `org:admin`, or a deployment administrator). */
export function isOrganizationAdmin(principal: AuthenticatedPrincipal, organizationId: string): boolean {
  return isAllowed(principal, "org:admin", { organizationId });
}

function requireOrganizationAdmin(principal: AuthenticatedPrincipal, organization: Organization): void {
  if (!isOrganizationAdmin(principal, organization.id))
    throw new DomainError("FORBIDDEN", `Only an administrator of the organization ${organization.name} may do this.`);
}

function githubOf(services: Services) {
  const settings = services.config.github;
  if (settings.state !== "on" || !services.github)
    throw new DomainError(
      "GITHUB_APP_NOT_CONFIGURED",
      settings.state === "off" ? settings.detail : "The GitHub App is not configured.",
    );
  return services.github;
}

/** Calls GitHub; an unreachable or failing GitHub is 503 GITHUB_API_UNAVAILABLE. */
export async function askGitHub<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof GitHubApiError)
      throw new DomainError("GITHUB_API_UNAVAILABLE", `GitHub's API could not confirm it: ${error.message}.`);
    throw error;
  }
}

/** Issues a setup state for the organization to the caller's dashboard session (returned once; stored hashed). */
export async function createInstallationState(
  services: Services,
  actor: AuthenticatedPrincipal,
  organization: Organization,
): Promise<{ state: string; id: string; expiresAt: string; installUrl: string | null }> {
  requireOrganizationAdmin(actor, organization);
  if (!actor.session)
    throw new DomainError("FORBIDDEN", "A setup state is issued to a signed-in dashboard session only.");
  const state = `ghs_setup_${randomBytes(32).toString("base64url")}`;
  const stateHash = hashState(state);
  const now = services.clock();
  const expiresAt = new Date(now.getTime() + SETUP_STATE_TTL_MS);
  await services.stores.github.createSetupState({
    stateHash,
    organizationId: organization.id,
    userId: actor.id,
    sessionId: actor.session.id,
    now,
    expiresAt,
  });
  await services.stores.audit.record({
    organizationId: organization.id,
    actorId: actor.id,
    action: "github.installation_state.created",
    targetType: "organizations",
    targetId: organization.id,
    data: { state_id: stateHash.slice(0, 16), expires_at: expiresAt.toISOString() },
    createdAt: now,
  });
  // Where to install the App with this state; without GitHub's answer the page says what to open.
  let installUrl: string | null = null;
  try {
    const page = services.github ? await services.github.appPageUrl() : null;
    if (page) installUrl = `${page.replace(/\/+$/, "")}/installations/new?state=${encodeURIComponent(state)}`;
  } catch (error) {
    if (!(error instanceof GitHubApiError)) throw error;
  }
  return { state, id: stateHash.slice(0, 16), expiresAt: expiresAt.toISOString(), installUrl };
}

async function confirmInstallation(services: Services, installationId: number): Promise<AppInstallation> {
  const github = githubOf(services);
  const installation = await askGitHub(() => github.appInstallation(installationId));
  if (!installation)
    throw new DomainError(
      "GITHUB_INSTALLATION_NOT_FOUND",
      `GitHub has no installation ${installationId} of this App.`,
      {
        source: { pointer: "/data/attributes/installation_id" },
      },
    );
  return installation;
}

/** Binds the installation unless another organization holds it (409); whether it was new. */
async function bind(
  services: Services,
  actor: AuthenticatedPrincipal,
  organization: Organization,
  installation: AppInstallation,
  how: "setup_flow" | "deployment_admin",
): Promise<{ binding: InstallationBinding; created: boolean }> {
  const now = services.clock();
  const result = await services.stores.github.bindInstallation({
    installationId: installation.id,
    organizationId: organization.id,
    account: installation.account,
    boundBy: actor.id,
    now,
  });
  if (result.binding.organizationId !== organization.id)
    throw new DomainError(
      "SOURCE_INSTALLATION_IN_USE",
      `Installation ${installation.id} is bound to another organization; it must release it (DELETE /v1/organizations/{name}/github-installations/${installation.id}) first.`,
      { source: { pointer: "/data/attributes/installation_id" } },
    );
  if (result.created)
    await services.stores.audit.record({
      organizationId: organization.id,
      actorId: actor.id,
      action: "github.installation.bound",
      targetType: "github-installations",
      targetId: String(installation.id),
      data: { installation_id: installation.id, account: installation.account, how },
      createdAt: now,
    });
  return result;
}

/**
 * Binds an installation: with a setup state (redeemed once, by the session it was issued to,
 * within its lifetime, for an installation created after it was issued), or without one by a
 * deployment administrator naming the organization. GitHub confirms the installation first.
 */
export async function bindInstallation(
  services: Services,
  actor: AuthenticatedPrincipal,
  input: { installationId: number; state?: string; organizationName?: string },
): Promise<{ binding: InstallationBinding; created: boolean; organization: Organization }> {
  if (input.state === undefined) {
    if (!actor.siteAdmin)
      throw new DomainError(
        "GITHUB_INSTALLATION_SETUP_REQUIRED",
        "An installation is bound through the GitHub App's setup flow: an organization administrator starts it from the dashboard (a setup state), installs the App on GitHub, and GitHub returns here with the state.",
        { source: { pointer: "/data/attributes/state" } },
      );
    if (!input.organizationName)
      throw new DomainError("DOCUMENT_INVALID", "Without a state, name the organization to bind the installation to.", {
        source: { pointer: "/data/attributes/organization" },
      });
    const organization = await services.stores.organizations.getByName(input.organizationName);
    if (!organization)
      throw new DomainError(
        "NOT_FOUND",
        `Organization '${input.organizationName}' does not exist, or this token may not see it.`,
      );
    const installation = await confirmInstallation(services, input.installationId);
    return { ...(await bind(services, actor, organization, installation, "deployment_admin")), organization };
  }
  if (input.organizationName !== undefined)
    throw new DomainError(
      "DOCUMENT_INVALID",
      "A setup state names its organization; send either a state or an organization.",
      {
        source: { pointer: "/data/attributes/organization" },
      },
    );
  const invalid = () =>
    new DomainError(
      "GITHUB_INSTALLATION_STATE_INVALID",
      "The setup state is unknown, expired, already used, or was issued to another session; start the installation again from the dashboard.",
      {
        source: { pointer: "/data/attributes/state" },
      },
    );
  if (!actor.session) throw invalid();
  const now = services.clock();
  const state = await services.stores.github.consumeSetupState(hashState(input.state), actor.session.id, now);
  if (!state || state.userId !== actor.id) throw invalid();
  const organization = await services.stores.organizations.getById(state.organizationId);
  if (!organization) throw invalid();
  // The session may have lost the organization's administration since it asked for the state.
  requireOrganizationAdmin(actor, organization);
  const installation = await confirmInstallation(services, input.installationId);
  const existing = await services.stores.github.getBinding(input.installationId);
  if (existing?.organizationId !== organization.id) {
    const created = installation.createdAt === null ? NaN : Date.parse(installation.createdAt);
    if (!(created >= Date.parse(state.createdAt) - CLOCK_SKEW_MS))
      throw new DomainError(
        "GITHUB_INSTALLATION_PREDATES_STATE",
        `Installation ${input.installationId} was created before this setup began, so this setup cannot prove who installed it; a deployment administrator can bind it, or install the App anew.`,
        { source: { pointer: "/data/attributes/installation_id" } },
      );
  }
  return { ...(await bind(services, actor, organization, installation, "setup_flow")), organization };
}

/** Releases the organization's installation (refused while its workspaces connect through it). */
export async function releaseInstallation(
  services: Services,
  actor: AuthenticatedPrincipal,
  organization: Organization,
  installationId: number,
): Promise<void> {
  requireOrganizationAdmin(actor, organization);
  const binding = await services.stores.github.getBinding(installationId);
  if (!binding || binding.organizationId !== organization.id)
    throw new DomainError("NOT_FOUND", `Installation ${installationId} is not bound to ${organization.name}.`);
  const connections = await services.stores.github.countConnectionsThrough(installationId, organization.id);
  if (connections > 0)
    throw new DomainError(
      "GITHUB_INSTALLATION_HAS_CONNECTIONS",
      `${connections} workspace${connections === 1 ? "" : "s"} of ${organization.name} connect${connections === 1 ? "s" : ""} through installation ${installationId}; disconnect them first.`,
    );
  const now = services.clock();
  if (!(await services.stores.github.releaseBinding(installationId, organization.id)))
    throw new DomainError("NOT_FOUND", `Installation ${installationId} is not bound to ${organization.name}.`);
  await services.stores.audit.record({
    organizationId: organization.id,
    actorId: actor.id,
    action: "github.installation.released",
    targetType: "github-installations",
    targetId: String(installationId),
    data: { installation_id: installationId },
    createdAt: now,
  });
}

/**
 * Checks a source connection before it is written: the installation is bound to the workspace's
 * organization (the same refusal whether it is unknown or another's) and GitHub confirms that it
 * can access the repository.
 */
export async function checkConnectionAccess(
  services: Services,
  organizationId: string,
  installationId: number,
  repository: string,
): Promise<void> {
  const github = githubOf(services);
  const binding = await services.stores.github.getBinding(installationId);
  if (!binding || binding.organizationId !== organizationId)
    throw new DomainError(
      "SOURCE_INSTALLATION_NOT_BOUND",
      `Installation ${installationId} is not bound to this organization. An organization administrator installs the GitHub App through the dashboard's setup flow, which binds the installation.`,
      { source: { pointer: "/data/attributes/installation_id" } },
    );
  if (!(await askGitHub(() => github.installationCanAccess(installationId, repository))))
    throw new DomainError(
      "SOURCE_REPOSITORY_NOT_ACCESSIBLE",
      `GitHub says installation ${installationId} cannot access ${repository}; grant the App access to it on GitHub.`,
      {
        source: { pointer: "/data/attributes/repository" },
      },
    );
}
