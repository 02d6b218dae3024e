import type { Run } from "../domain/records.ts";
import { mintPhaseCredentials, type MintedToken } from "../commands/phase-credentials.ts";
import type { Services } from "../commands/services.ts";
import { SANDBOX_WORK_DIR } from "./sandbox.ts";

/** Where a phase's tokens go in its sandbox, relative to /work. */
export const IDENTITY_DIR = ".stackship-identity";

/** What a phase's sandbox gets for its tokens: files in /work, variables, and the values to redact. */
export interface SandboxCredentials {
  files: Record<string, string>;
  env: Record<string, string>;
  /** Every token: the log sanitizer and the plan-diff builder redact them like sensitive variables. */
  secrets: string[];
}

/**
 * The provider's own way to find a web identity token, per profile: a file
 * `/work/.stackship-identity/<profile name>.jwt` for every profile, plus for the first profile
 * of each provider (by name) AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN; a GCP external-account
 * file named by GOOGLE_APPLICATION_CREDENTIALS; ARM_USE_OIDC, ARM_OIDC_TOKEN_FILE_PATH,
 * ARM_CLIENT_ID and ARM_TENANT_ID; STACKSHIP_WORKLOAD_IDENTITY_TOKEN (the token itself) and
 * STACKSHIP_WORKLOAD_IDENTITY_TOKEN_FILE for generic.
 */
export function sandboxCredentials(tokens: readonly MintedToken[]): SandboxCredentials {
  const out: SandboxCredentials = { files: {}, env: {}, secrets: [] };
  const seen = new Set<string>();
  for (const { profile, token } of tokens) {
    const relative = `${IDENTITY_DIR}/${profile.name}.jwt`;
    const absolute = `${SANDBOX_WORK_DIR}/${relative}`;
    out.files[relative] = token;
    out.secrets.push(token);
    const first = !seen.has(profile.provider);
    seen.add(profile.provider);
    if (!first) continue;
    switch (profile.provider) {
      case "aws":
        out.env.AWS_WEB_IDENTITY_TOKEN_FILE = absolute;
        out.env.AWS_ROLE_ARN = profile.target.role_arn!;
        break;
      case "gcp": {
        const credentials = `${IDENTITY_DIR}/${profile.name}.gcp-external-account.json`;
        out.files[credentials] = JSON.stringify(
          {
            type: "external_account",
            audience: `//iam.googleapis.com/${profile.target.workload_identity_provider}`,
            subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
            token_url: "https://sts.googleapis.com/v1/token",
            service_account_impersonation_url: `https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/${profile.target.service_account}:generateAccessToken`,
            credential_source: { file: absolute },
          },
          null,
          2,
        );
        out.env.GOOGLE_APPLICATION_CREDENTIALS = `${SANDBOX_WORK_DIR}/${credentials}`;
        break;
      }
      case "azure":
        out.env.ARM_USE_OIDC = "true";
        out.env.ARM_OIDC_TOKEN_FILE_PATH = absolute;
        out.env.ARM_CLIENT_ID = profile.target.client_id!;
        out.env.ARM_TENANT_ID = profile.target.tenant_id!;
        break;
      case "generic":
        out.env.STACKSHIP_WORKLOAD_IDENTITY_TOKEN = token;
        out.env.STACKSHIP_WORKLOAD_IDENTITY_TOKEN_FILE = absolute;
        break;
    }
  }
  return out;
}

/**
 * The hook where a phase attempt starts: mints the tokens of the profiles serving this phase of
 * the run and adds their files, variables and redaction values to what its sandbox receives.
 * Nothing else holds them: they are not stored, logged or collected back.
 */
export async function addWorkloadIdentity(
  ctx: { services: Services; phaseTimeoutMs: number },
  run: Run,
  phase: "plan" | "apply",
  inputs: { env: Record<string, string>; secrets: string[]; files?: Record<string, string> },
): Promise<void> {
  const { tokens } = await mintPhaseCredentials(ctx.services, run, phase, {
    startedAt: ctx.services.clock(),
    phaseTimeoutMs: ctx.phaseTimeoutMs,
  });
  if (tokens.length === 0) return;
  const credentials = sandboxCredentials(tokens);
  Object.assign(inputs.env, credentials.env);
  inputs.secrets.push(...credentials.secrets);
  inputs.files = { ...inputs.files, ...credentials.files };
}
