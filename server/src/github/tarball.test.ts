import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildTarGz, configurationFromGitHubTarball, TarballRefused, type TarInput } from "./tarball.ts";

const LIMITS = { maxBytes: 64 * 1024 * 1024, maxUnpackedBytes: 512 * 1024 * 1024 };
const TOP = "acme-infra-0123456";

/** Unpacks a .tar.gz with GNU tar (what the sandbox runs) and lists it. */
function unpack(bytes: Buffer): { dir: string; files: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "ss-tarball-"));
  writeFileSync(join(dir, "c.tar.gz"), bytes);
  execFileSync("mkdir", ["-p", join(dir, "out")]);
  execFileSync("tar", ["-xzf", join(dir, "c.tar.gz"), "-C", join(dir, "out")]);
  const files = execFileSync("find", [".", "-mindepth", "1"], { cwd: join(dir, "out"), encoding: "utf8" })
    .trim()
    .split("\n")
    .sort();
  return { dir: join(dir, "out"), files };
}

async function refusal(entries: TarInput[], outcome: string, workingDirectory = "") {
  try {
    await configurationFromGitHubTarball(
      await buildTarGz(entries, "0123456789abcdef0123456789abcdef01234567"),
      workingDirectory,
      LIMITS,
    );
  } catch (error) {
    assert.instance(error, TarballRefused);
    assert.is((error as TarballRefused).outcome, outcome, (error as Error).message);
    return;
  }
  assert.unreachable(`expected ${outcome}`);
}

const tarball = suite("GitHub commit tarball → configuration");

tarball(
  "strips the top-level folder, keeps the tree (long names too) and a link inside it; GNU tar unpacks it",
  async () => {
    const long = `modules/${"n".repeat(120)}/main.tf`;
    const bytes = await configurationFromGitHubTarball(
      await buildTarGz(
        [
          { name: `${TOP}/`, type: "directory" },
          { name: `${TOP}/infra/`, type: "directory" },
          { name: `${TOP}/infra/main.tf`, content: 'resource "terraform_data" "x" {}\n' },
          { name: `${TOP}/infra/current.tf`, type: "symlink", linkname: "main.tf" },
          { name: `${TOP}/infra/shared.tf`, type: "symlink", linkname: "../modules/shared.tf" },
          { name: `${TOP}/modules/shared.tf`, content: "# shared\n" },
          { name: `${TOP}/${long}`, content: "# long\n" },
        ],
        "0123456789abcdef0123456789abcdef01234567",
      ),
      "infra",
      LIMITS,
    );
    const { dir, files } = unpack(bytes);
    try {
      assert.ok(files.includes("./infra/main.tf"), files.join(","));
      assert.ok(files.includes(`./${long}`), files.join(","));
      assert.not.ok(
        files.some((f) => f.includes(TOP)),
        "the top-level folder is stripped",
      );
      assert.is(readFileSync(join(dir, "infra/main.tf"), "utf8"), 'resource "terraform_data" "x" {}\n');
      assert.is(readlinkSync(join(dir, "infra/shared.tf")), "../modules/shared.tf");
    } finally {
      rmSync(join(dir, ".."), { recursive: true, force: true });
    }
  },
);

tarball("refuses `..`, absolute paths, links leaving the tree, devices and a missing working directory", async () => {
  await refusal(
    [
      { name: `${TOP}/`, type: "directory" },
      { name: `${TOP}/../evil.tf`, content: "x" },
    ],
    "tarball_path_escapes",
  );
  await refusal([{ name: `${TOP}/a/../../evil.tf`, content: "x" }], "tarball_path_escapes");
  await refusal([{ name: "/etc/evil.tf", content: "x" }], "tarball_path_absolute");
  await refusal(
    [
      { name: `${TOP}/`, type: "directory" },
      { name: `${TOP}/escape`, type: "symlink", linkname: "../../etc/passwd" },
    ],
    "tarball_link_escapes",
  );
  await refusal(
    [
      { name: `${TOP}/`, type: "directory" },
      { name: `${TOP}/dir/escape`, type: "symlink", linkname: "../.." },
    ],
    "tarball_link_escapes",
  );
  await refusal(
    [
      { name: `${TOP}/`, type: "directory" },
      { name: `${TOP}/abs`, type: "symlink", linkname: "/etc/passwd" },
    ],
    "tarball_link_escapes",
  );
  await refusal(
    [
      { name: `${TOP}/`, type: "directory" },
      { name: `${TOP}/hard`, type: "hardlink", linkname: "/etc/passwd" },
    ],
    "tarball_path_absolute",
  );
  await refusal(
    [
      { name: `${TOP}/`, type: "directory" },
      { name: `${TOP}/hard`, type: "hardlink", linkname: "other-top/x" },
    ],
    "tarball_link_escapes",
  );
  await refusal(
    [
      { name: `${TOP}/`, type: "directory" },
      { name: "second-top/main.tf", content: "x" },
    ],
    "tarball_invalid",
  );
  await refusal(
    [
      { name: `${TOP}/`, type: "directory" },
      { name: `${TOP}/main.tf`, content: "x" },
    ],
    "working_directory_missing",
    "infra",
  );
});

tarball(
  "the stripped archive goes through the upload inspection: what an upload may not hold, a commit may not either",
  async () => {
    // A link that leaves the tree only through another link of the archive.
    await refusal(
      [
        { name: `${TOP}/`, type: "directory" },
        { name: `${TOP}/dir/`, type: "directory" },
        { name: `${TOP}/dir/up`, type: "symlink", linkname: ".." },
        { name: `${TOP}/x`, type: "symlink", linkname: "dir/up/.." },
      ],
      "tarball_link_escapes",
    );
    // Writing through a link of the archive.
    await refusal(
      [
        { name: `${TOP}/`, type: "directory" },
        { name: `${TOP}/modules`, type: "symlink", linkname: "infra" },
        { name: `${TOP}/modules/main.tf`, content: "x" },
      ],
      "tarball_link_escapes",
    );
    // A hard link to a file the archive does not hold (inside the top-level folder).
    await refusal(
      [
        { name: `${TOP}/`, type: "directory" },
        { name: `${TOP}/hard`, type: "hardlink", linkname: `${TOP}/missing.tf` },
      ],
      "tarball_link_escapes",
    );
    // The same hard link to a file the archive holds earlier is kept, its target stripped too.
    const bytes = await configurationFromGitHubTarball(
      await buildTarGz([
        { name: `${TOP}/`, type: "directory" },
        { name: `${TOP}/main.tf`, content: "# main\n" },
        { name: `${TOP}/hard.tf`, type: "hardlink", linkname: `${TOP}/main.tf` },
      ]),
      "",
      LIMITS,
    );
    const { dir } = unpack(bytes);
    try {
      assert.is(readFileSync(join(dir, "hard.tf"), "utf8"), "# main\n");
    } finally {
      rmSync(join(dir, ".."), { recursive: true, force: true });
    }
  },
);

tarball(
  "refuses a committed .terraform directory (tofu's working data: its providers would run as installed), like an upload",
  async () => {
    const bytes = await buildTarGz([
      { name: `${TOP}/`, type: "directory" },
      { name: `${TOP}/main.tf`, content: "" },
      { name: `${TOP}/.terraform.lock.hcl`, content: "" },
      {
        name: `${TOP}/.terraform/providers/registry.opentofu.org/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0`,
        content: "#!/bin/sh\n",
      },
    ]);
    try {
      await configurationFromGitHubTarball(bytes, "", LIMITS);
      assert.unreachable("a .terraform directory must be refused");
    } catch (error) {
      assert.is((error as TarballRefused).outcome, "tarball_entry_unsupported");
      assert.match((error as TarballRefused).detail, ".terraform/providers/registry.opentofu.org/hashicorp/random");
    }
  },
);

tarball("refuses a character device entry", async () => {
  const bytes = gunzipSync(
    await buildTarGz([
      { name: `${TOP}/`, type: "directory" },
      { name: `${TOP}/dev`, content: "" },
    ]),
  );
  // Turn the second entry into a character device ('3') and fix its checksum.
  const header = bytes.subarray(512, 1024);
  header[156] = "3".charCodeAt(0);
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of header) sum += b;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "latin1");
  const { gzipSync } = await import("node:zlib");
  try {
    await configurationFromGitHubTarball(gzipSync(bytes), "", LIMITS);
    assert.unreachable("a device entry must be refused");
  } catch (error) {
    assert.is((error as TarballRefused).outcome, "tarball_entry_unsupported");
  }
});

tarball("the size limit holds at exactly the limit and refuses one byte more (compressed and unpacked)", async () => {
  const bytes = await buildTarGz([
    { name: `${TOP}/`, type: "directory" },
    { name: `${TOP}/main.tf`, content: "x".repeat(10_000) },
  ]);
  await configurationFromGitHubTarball(bytes, "", {
    maxBytes: bytes.length,
    maxUnpackedBytes: LIMITS.maxUnpackedBytes,
  });
  try {
    await configurationFromGitHubTarball(bytes, "", {
      maxBytes: bytes.length - 1,
      maxUnpackedBytes: LIMITS.maxUnpackedBytes,
    });
    assert.unreachable("over the compressed limit");
  } catch (error) {
    assert.is((error as TarballRefused).outcome, "tarball_too_large");
  }
  const unpacked = gunzipSync(bytes).length;
  await configurationFromGitHubTarball(bytes, "", { maxBytes: LIMITS.maxBytes, maxUnpackedBytes: unpacked });
  try {
    await configurationFromGitHubTarball(bytes, "", { maxBytes: LIMITS.maxBytes, maxUnpackedBytes: unpacked - 1 });
    assert.unreachable("over the unpacked limit");
  } catch (error) {
    assert.is((error as TarballRefused).outcome, "tarball_too_large");
  }
});

tarball.run();
