import { suite } from "uvu";
import * as assert from "uvu/assert";
import * as sdk from "../../../client/src/index.ts";
import { storedArtifactKeys } from "../support/artifacts.ts";
import { applicationTables, expectNothingWritten } from "../support/database.ts";
import {
  createOrganizationWithToken,
  createPendingConfiguration,
  createWorkspace,
  makeConfigurationTarball,
  putUpload,
} from "../support/factories.ts";
import { expectStatus, expectV1Error } from "../support/responses.ts";
import { testEachServer } from "../support/test-server.ts";

// Issue 25 part 5, the upload door: a configuration carrying tofu's working data (`.terraform/`,
// where `tofu init` finds "previously-installed" providers and `tofu plan` runs them) other than
// `.terraform/modules/` (which the CLI uploads) is refused
// with 422 CONFIGURATION_UPLOAD_INVALID naming the path, and nothing is written. (The sandbox door,
// TF_DATA_DIR outside the configuration, is tested in server/src/runner/sandbox-provider-mirror.test.ts,
// and the CLI's uploaded modules still working in server/test/lifecycle/uploaded-modules.test.ts.)
const upload = suite("uploadConfiguration: no .terraform directory");

/** A shadowing "provider": a shell script that leaves a marker wherever it is run. */
const SHADOW = "#!/bin/sh\necho shadow-provider-ran > /work/shadow-marker\nexit 1\n";
const PROVIDER =
  ".terraform/providers/registry.opentofu.org/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0";
const LOCK = `provider "registry.opentofu.org/hashicorp/random" {
  version     = "3.9.0"
  constraints = "3.9.0"
  hashes      = ["h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]
}
`;

testEachServer(
  upload,
  "a provider binary under .terraform/ (at the root or in a module's folder) is refused 422 naming the path; nothing is written",
  async (server) => {
    const { organizationName, token } = await createOrganizationWithToken(server, "acme", "admin");
    const workspace = await createWorkspace(server, token, organizationName, { name: "app" });
    const pending = await createPendingConfiguration(server, token, workspace.id);
    const uploadToken = new URL(pending.attributes.upload_url!).pathname.split("/").pop()!;
    for (const path of [
      PROVIDER,
      `modules/net/${PROVIDER}`,
      ".terraform/plugins/linux_amd64/terraform-provider-random_v3.9.0",
      ".terraform/modules/m/.terraform/providers/p",
    ]) {
      const tarball = makeConfigurationTarball({
        "main.tf": 'resource "random_id" "x" {\n  byte_length = 4\n}\n',
        ".terraform.lock.hcl": LOCK,
        [path]: SHADOW,
      });
      const result = await expectNothingWritten(
        server,
        () =>
          sdk.uploadConfiguration({ client: server.v1(), path: { upload_token: uploadToken }, body: tarball as never }),
        await applicationTables(server),
      );
      const error = expectV1Error(result, 422, "CONFIGURATION_UPLOAD_INVALID");
      assert.match(error.detail ?? "", ".terraform", path);
      // The first entry refused is the directory below .terraform that is not its modules (system tar lists directories first).
      const segments = path.split("/");
      const at = segments.findIndex((segment, i) => segment === ".terraform" && segments[i + 1] !== "modules");
      assert.match(
        error.detail ?? "",
        `"./${segments.slice(0, at + 2).join("/")}/"`,
        `the detail names the path: ${error.detail}`,
      );
    }
    assert.equal(await storedArtifactKeys(server), []);
    // A lock file is an ordinary configuration file, and .terraform/modules/ is what the CLI uploads
    // of tofu's working data (go-slug's defaults): both accepted.
    const modules = {
      "main.tf": "",
      ".terraform.lock.hcl": LOCK,
      ".terraform/modules/modules.json": '{"Modules":[]}',
      ".terraform/modules/vpc/main.tf": "",
    };
    assert.is((await putUpload(pending.attributes.upload_url!, makeConfigurationTarball(modules))).status, 200);
    const shown = expectStatus(
      await sdk.getConfigurationVersion({ client: server.v1(token), path: { configuration_version_id: pending.id } }),
      200,
    ).data;
    assert.is(shown.attributes.status, "uploaded");
  },
);

upload.run();
