import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { MintedToken } from "../commands/phase-credentials.ts";
import { validateProfileContent, type FederationProfile } from "../domain/workload-identity.ts";
import { sandboxCredentials } from "./workload-identity-files.ts";

const test = suite("workload identity files and variables in the sandbox");

function minted(
  name: string,
  provider: FederationProfile["provider"],
  target: FederationProfile["target"],
  audience?: string,
): MintedToken {
  const content = validateProfileContent({ name, provider, target, audience, phases: ["plan"] });
  const profile: FederationProfile = {
    id: `fp-${name}`,
    organizationId: "org-1",
    workspaceId: "ws-1",
    ...content,
    verifiedAt: null,
    verifiedBy: null,
    verifiedDigest: null,
    createdAt: "",
    updatedAt: "",
  };
  return { profile, token: `token-of-${name}`, jti: name, expiresAt: new Date(0) };
}

test("each provider gets its own variables; every token is a file and a value to redact", () => {
  const pool = "projects/1/locations/global/workloadIdentityPools/pool/providers/prov";
  const out = sandboxCredentials([
    minted("a-aws", "aws", { role_arn: "arn:aws:iam::123456789012:role/a" }),
    minted("b-aws", "aws", { role_arn: "arn:aws:iam::123456789012:role/b" }),
    minted("gcp", "gcp", { workload_identity_provider: pool, service_account: "sa-name@p.iam.gserviceaccount.com" }),
    minted("azure", "azure", { client_id: "c", tenant_id: "t" }),
    minted("vault", "generic", {}, "vault.example"),
  ]);
  assert.equal(out.secrets, ["token-of-a-aws", "token-of-b-aws", "token-of-gcp", "token-of-azure", "token-of-vault"]);
  assert.equal(out.env, {
    // The first profile of a provider (by name) gets the provider's variables.
    AWS_WEB_IDENTITY_TOKEN_FILE: "/work/.stackship-identity/a-aws.jwt",
    AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/a",
    GOOGLE_APPLICATION_CREDENTIALS: "/work/.stackship-identity/gcp.gcp-external-account.json",
    ARM_USE_OIDC: "true",
    ARM_OIDC_TOKEN_FILE_PATH: "/work/.stackship-identity/azure.jwt",
    ARM_CLIENT_ID: "c",
    ARM_TENANT_ID: "t",
    STACKSHIP_WORKLOAD_IDENTITY_TOKEN: "token-of-vault",
    STACKSHIP_WORKLOAD_IDENTITY_TOKEN_FILE: "/work/.stackship-identity/vault.jwt",
  });
  assert.is(out.files[".stackship-identity/b-aws.jwt"], "token-of-b-aws");
  const external: unknown = JSON.parse(out.files[".stackship-identity/gcp.gcp-external-account.json"]);
  assert.equal(external, {
    type: "external_account",
    audience: `//iam.googleapis.com/${pool}`,
    subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
    token_url: "https://sts.googleapis.com/v1/token",
    service_account_impersonation_url:
      "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/sa-name@p.iam.gserviceaccount.com:generateAccessToken",
    credential_source: { file: "/work/.stackship-identity/gcp.jwt" },
  });
  // The external-account file holds the path, never the token.
  assert.not.ok(out.files[".stackship-identity/gcp.gcp-external-account.json"].includes("token-of-gcp"));
  assert.equal(sandboxCredentials([]), { files: {}, env: {}, secrets: [] });
});

test.run();
