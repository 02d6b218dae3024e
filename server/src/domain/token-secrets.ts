import { sha256Hex } from "./canonical-json.ts";

/** The stored form of a token secret. Secrets are 256-bit random, so a plain SHA-256 suffices. */
export function hashTokenSecret(secret: string): string {
  return sha256Hex(secret);
}

/** The prefix of run-token secrets (organization API tokens start `ss1.`). */
export const RUN_TOKEN_SECRET_PREFIX = "ssr.";
