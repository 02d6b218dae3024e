import { createPrivateKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { checkpointOrigin, checkpointText, type AuditCheckpoint } from "../domain/audit-chain.ts";
import { noteVerifierKey, rawEd25519PublicKey, signNote } from "../domain/signed-note.ts";
import type { StoredAuditCheckpointKey } from "../store/audit-repository.ts";
import type { Services } from "./services.ts";

/**
 * Signed checkpoints of the audit history (domain/audit-chain.ts): the checkpoint key (Ed25519,
 * made on first use, the private half sealed with the master key), the verifier key anyone checks
 * them with, and the sweep that signs a chain's head once it is due.
 */

/** The checkpoint key's name: `<public host>/audit`, or `stackship/audit` without STACKSHIP_PUBLIC_URL. */
function keyNameFor(services: Services): string {
  const host = services.config.publicUrl === null ? "stackship" : new URL(services.config.publicUrl).host;
  return `${host}/audit`;
}

/** The checkpoint key, made on first use. */
export async function checkpointKey(services: Services): Promise<StoredAuditCheckpointKey> {
  const existing = await services.stores.audit.checkpointKeys();
  if (existing.length > 0) return existing[0];
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  await services.stores.audit.addCheckpointKey({
    name: keyNameFor(services),
    publicKey: rawEd25519PublicKey(publicKey).toString("base64"),
    privateKeySealed: services.keys.auditCheckpointKeys.sealText(
      privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    ),
    createdAt: services.clock().toISOString(),
  });
  // Another process may have made one at the same time: the oldest wins everywhere.
  return (await services.stores.audit.checkpointKeys())[0];
}

/** The verifier key (golang.org/x/mod/sumdb/note form) the checkpoints are signed for. */
export async function auditVerifierKey(services: Services): Promise<{ name: string; verifierKey: string }> {
  const key = await checkpointKey(services);
  return { name: key.name, verifierKey: noteVerifierKey(key.name, Buffer.from(key.publicKey, "base64")) };
}

const opened = new Map<string, KeyObject>();

function privateKeyOf(services: Services, key: StoredAuditCheckpointKey): KeyObject {
  let found = opened.get(key.name + key.publicKey);
  if (found === undefined) {
    found = createPrivateKey(services.keys.auditCheckpointKeys.openText(key.privateKeySealed));
    opened.set(key.name + key.publicKey, found);
  }
  return found;
}

/** Signs a checkpoint of `chain` at its current head, unless that size is already checkpointed. */
export async function checkpointChain(services: Services, chain: string): Promise<AuditCheckpoint | null> {
  const head = await services.stores.audit.head(chain);
  if (head.size === 0) return null;
  const [last] = await services.stores.audit.listCheckpoints(chain, { from: head.size, limit: 1 });
  if (last !== undefined) return null;
  const key = await checkpointKey(services);
  const text = checkpointText(checkpointOrigin(key.name, chain), head.size, head.digest);
  const checkpoint: AuditCheckpoint = {
    chain,
    treeSize: head.size,
    headDigest: head.digest,
    keyName: key.name,
    note: signNote(text, key.name, privateKeyOf(services, key), Buffer.from(key.publicKey, "base64")),
    createdAt: services.clock().toISOString(),
  };
  await services.stores.audit.addCheckpoint(checkpoint);
  return checkpoint;
}

/**
 * Checkpoints every chain that is due: `everyEvents` events past its last checkpoint, or its
 * first unchecked event older than `everyMs` (config.auditCheckpoint). Returns what it signed.
 */
export async function checkpointDueChains(services: Services): Promise<AuditCheckpoint[]> {
  const { everyEvents, everyMs } = services.config.auditCheckpoint;
  const now = services.clock().getTime();
  const signed: AuditCheckpoint[] = [];
  for (const head of await services.stores.audit.heads()) {
    const covered = await services.stores.audit.lastCheckpointSize(head.chain);
    if (head.size <= covered) continue;
    const firstUnchecked = await services.stores.audit.createdAtOf(head.chain, covered);
    const old = firstUnchecked !== undefined && now - new Date(firstUnchecked).getTime() >= everyMs;
    if (head.size - covered < everyEvents && !old) continue;
    const checkpoint = await checkpointChain(services, head.chain);
    if (checkpoint !== null) signed.push(checkpoint);
  }
  return signed;
}

/** Runs checkpointDueChains every `intervalMs` until stopped; errors are logged, never thrown. */
export function startAuditCheckpointer(services: Services, intervalMs = 30_000): { stop(): void } {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    checkpointDueChains(services)
      .catch((error: unknown) => services.logger.error({ err: error }, "audit checkpoint failed"))
      .finally(() => {
        busy = false;
      });
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
