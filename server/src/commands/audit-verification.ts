import { auditChainOf, DEPLOYMENT_CHAIN, verifyAuditChain, type AuditChainReport } from "../domain/audit-chain.ts";
import { DomainError } from "../domain/errors.ts";
import { exportAuditChain, type AuditChainExport } from "../domain/audit-export.ts";
import { auditVerifierKey } from "./audit-checkpoints.ts";
import type { Services } from "./services.ts";

/**
 * `npm run verify-audit`: one chain read from the database (an organization's by name, or the
 * deployment chain), verified (domain/audit-chain.ts) or exported as JSON Lines.
 */

/** The chain of an organization name, or of the deployment (`null`). */
async function chainNamed(services: Services, organizationName: string | null): Promise<string> {
  if (organizationName === null) return DEPLOYMENT_CHAIN;
  const organization = await services.stores.organizations.getByName(organizationName);
  if (organization === undefined)
    throw new DomainError("NOT_FOUND", `no organization named ${JSON.stringify(organizationName)}`);
  return auditChainOf(organization.id);
}

/** Everything stored for one chain, from `fromCheckpoint` (its events and checkpoints from that size on). */
export async function loadAuditChain(
  services: Services,
  organizationName: string | null,
  fromCheckpoint = 0,
): Promise<AuditChainExport> {
  const chain = await chainNamed(services, organizationName);
  const [events, checkpoints, head, key] = await Promise.all([
    services.stores.audit.listChain(chain, { from: fromCheckpoint }),
    services.stores.audit.listCheckpoints(chain, { from: fromCheckpoint }),
    services.stores.audit.head(chain),
    auditVerifierKey(services),
  ]);
  return { chain, verifierKey: key.verifierKey, events, checkpoints, head: { size: head.size, digest: head.digest } };
}

/** Verifies one chain as stored, from the start or from the checkpoint of size `fromCheckpoint`. */
export async function verifyStoredAuditChain(
  services: Services,
  organizationName: string | null,
  options: { fromCheckpoint?: number } = {},
): Promise<AuditChainReport> {
  const loaded = await loadAuditChain(services, organizationName, options.fromCheckpoint ?? 0);
  return verifyAuditChain({ ...loaded, fromCheckpoint: options.fromCheckpoint });
}

/** One chain as JSON Lines (domain/audit-export.ts). */
export async function exportStoredAuditChain(services: Services, organizationName: string | null): Promise<string> {
  return exportAuditChain(await loadAuditChain(services, organizationName));
}
