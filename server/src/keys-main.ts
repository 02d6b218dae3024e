import { rotateAttestationKeys } from "./commands/attestations.ts";
import { rotateSigningKeys } from "./commands/signing-keys.ts";
import { loadConfig } from "./config.ts";
import { createServices } from "./server.ts";

function say(message: string) {
  process.stdout.write(`[stackship-keys] ${message}\n`);
}

/**
 * `npm run keys:rotate [-- --lead-seconds N]`: rotates the workload identity issuer's signing
 * key. The new key is published at once and signs only after the lead (default: one hour, so
 * relying parties that cache the key set have seen it); the key it supersedes stays published
 * until the last token it signed has expired, and keys past that are deleted. Uses the same
 * STACKSHIP_DATABASE_URL and STACKSHIP_DATA_DIR / STACKSHIP_ENCRYPTION_KEY as the server.
 *
 * `npm run keys:rotate -- --attestation [--lead-seconds N]` rotates the run attestation key
 * instead (default lead: none, since verifiers fetch the key set when they verify): the new key is
 * published at once and signs from the lead on; every earlier key stays published, because the
 * attestations it signed must stay verifiable.
 */
async function main() {
  const args = process.argv.slice(2);
  const at = args.indexOf("--lead-seconds");
  const attestation = args.includes("--attestation");
  const leadSeconds = at >= 0 ? Number(args[at + 1]) : attestation ? 0 : 3600;
  if (!Number.isInteger(leadSeconds) || leadSeconds < 0)
    throw new Error("--lead-seconds takes a whole number of seconds (0 or more)");
  const config = loadConfig();
  const { services, close } = await createServices(config, {}, (m) => say(`migrations: ${m}`));
  try {
    if (attestation) {
      const rotated = await rotateAttestationKeys(services, { publishLeadMs: leadSeconds * 1000 });
      say(`added attestation key ${rotated.added.kid}: published now, signs from ${rotated.added.signsFrom}`);
      say(`published attestation keys: ${rotated.published.join(", ")}`);
      return;
    }
    const result = await rotateSigningKeys(services, { publishLeadMs: leadSeconds * 1000 });
    say(`added key ${result.added.kid}: published now, signs from ${result.added.signsFrom}`);
    say(
      result.removed.length > 0
        ? `removed retired keys: ${result.removed.join(", ")}`
        : "no key was retired long enough to remove",
    );
    say(`published keys: ${result.published.join(", ")}`);
    if (config.publicUrl === null)
      say("note: STACKSHIP_PUBLIC_URL is not set, so workload identity is off and no token is minted");
  } finally {
    await close();
  }
}

main().catch((error) => {
  process.stderr.write(`[stackship-keys] ${(error as Error).message}\n`);
  process.exit(1);
});
