import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { gunzipSync } from "node:zlib";
import { tarArchive, type TarEntry } from "../../test/support/tar.ts";
import { TarInspector, UploadRefusal } from "./tar-inspection.ts";

/** Feeds `tar` in chunks of `chunk` bytes (odd sizes split headers across pushes). */
function inspect(tar: Buffer, chunk = 777, maxEntries = 1000) {
  const inspector = new TarInspector(maxEntries);
  for (let offset = 0; offset < tar.length; offset += chunk) inspector.push(tar.subarray(offset, offset + chunk));
  return inspector.finish();
}

function refusal(tar: Buffer, chunk?: number, maxEntries?: number): string {
  try {
    inspect(tar, chunk, maxEntries);
  } catch (error) {
    assert.instance(error, UploadRefusal);
    return (error as Error).message;
  }
  assert.unreachable("the archive was accepted");
  return "";
}

/** A .tar made by the system tar from a directory the callback fills. */
function systemTar(fill: (dir: string) => void, options: string[] = []): Buffer {
  const root = mkdtempSync(join(tmpdir(), "ss-tar-"));
  try {
    const source = join(root, "src");
    mkdirSync(source);
    fill(source);
    execFileSync("tar", ["-czf", join(root, "a.tgz"), ...options, "-C", source, "."]);
    return gunzipSync(readFileSync(join(root, "a.tgz")));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const file = (name: string, data = "x"): TarEntry => ({ name, data });

const accepted = suite("tar inspection: accepted archives");

accepted("a configuration from the system tar, fed in odd chunk sizes and in one piece", () => {
  const tar = systemTar((dir) => {
    writeFileSync(join(dir, "main.tf"), 'resource "terraform_data" "x" {}\n');
    mkdirSync(join(dir, "modules/net"), { recursive: true });
    writeFileSync(join(dir, "modules/net/main.tf"), "# net\n");
  });
  for (const chunk of [1, 511, 512, 513, 4096, tar.length]) assert.is(inspect(tar, chunk).entries, 5, `chunk ${chunk}`);
});

accepted(
  "inside links: a relative symlink to a sibling, one up into the root, and a hard link to an earlier file (system tar)",
  () => {
    const tar = systemTar((dir) => {
      mkdirSync(join(dir, "env"));
      writeFileSync(join(dir, "shared.tf"), "# shared\n");
      symlinkSync("../shared.tf", join(dir, "env/shared.tf"));
      symlinkSync("shared.tf", join(dir, "alias.tf"));
      linkSync(join(dir, "shared.tf"), join(dir, "hard.tf"));
    });
    assert.ok(tar.includes(Buffer.from("../shared.tf")), "the archive holds the relative symlink");
    assert.is(inspect(tar).entries, 6);
  },
);

accepted("long names: GNU long-name headers and pax headers (system tar, both formats)", () => {
  const deep = `${"d".repeat(90)}/${"e".repeat(90)}/${"f".repeat(90)}`;
  for (const format of ["gnu", "pax"]) {
    const tar = systemTar(
      (dir) => {
        mkdirSync(join(dir, deep), { recursive: true });
        writeFileSync(join(dir, deep, `${"n".repeat(120)}.tf`), "# long\n");
        symlinkSync(`${"n".repeat(120)}.tf`, join(dir, deep, "link.tf"));
      },
      [`--format=${format}`],
    );
    assert.is(inspect(tar).entries, 6, format);
  }
});

accepted("an empty archive (only the end-of-archive blocks)", () => {
  assert.is(inspect(tarArchive([])).entries, 0);
});

const refused = suite("tar inspection: refused archives");

refused("path traversal: '..' anywhere in a member name", () => {
  for (const name of ["../evil.tf", "a/../../evil.tf", "./../x", "a/b/.."])
    assert.match(refusal(tarArchive([file(name)])), "path traversal", name);
});

refused("absolute paths", () => {
  for (const name of ["/etc/passwd", "//x"]) assert.match(refusal(tarArchive([file(name)])), "absolute path", name);
});

refused("absolute paths and traversal hidden in a pax path record (the header name looks harmless)", () => {
  const pax = (path: string) => {
    const record = (body: string) => {
      let length = body.length + 3;
      while (`${length} ${body}\n`.length !== length) length += 1;
      return `${length} ${body}\n`;
    };
    return tarArchive([{ name: "PaxHeader", type: "x", data: record(`path=${path}`) }, file("harmless.tf")]);
  };
  assert.match(refusal(pax("/etc/cron.d/x")), "absolute path");
  assert.match(refusal(pax("../../x")), "path traversal");
});

refused("symlinks that leave the root: absolute, '..' past the root, through another symlink, a loop", () => {
  assert.match(refusal(tarArchive([{ name: "a", type: "2", linkname: "/etc/passwd" }])), "absolute path");
  assert.match(refusal(tarArchive([{ name: "a", type: "2", linkname: "../outside" }])), "points outside");
  assert.match(refusal(tarArchive([{ name: "d/a", type: "2", linkname: "../../outside" }])), "points outside");
  // Each link alone stays inside: "up" is the root itself, and "up/.." is then the root's parent.
  assert.match(
    refusal(
      tarArchive([
        { name: "up", type: "2", linkname: "." },
        { name: "sub/b", type: "2", linkname: "../up/.." },
      ]),
    ),
    "points outside",
  );
  assert.match(
    refusal(
      tarArchive([
        { name: "x", type: "2", linkname: "y" },
        { name: "y", type: "2", linkname: "x/z" },
      ]),
    ),
    "points outside",
  );
});

refused("writing through a symlink of the archive, and replacing one", () => {
  assert.match(refusal(tarArchive([{ name: "d", type: "2", linkname: "sub" }, file("d/x.tf")])), "inside the symlink");
  assert.match(refusal(tarArchive([{ name: "d", type: "2", linkname: "sub" }, file("d")])), "replaces a symlink");
});

refused("hard links to anything but an earlier regular file of the archive", () => {
  assert.match(refusal(tarArchive([{ name: "h", type: "1", linkname: "/etc/shadow" }])), "absolute path");
  assert.match(refusal(tarArchive([{ name: "h", type: "1", linkname: "../x" }])), "path traversal");
  assert.match(
    refusal(tarArchive([{ name: "h", type: "1", linkname: "later.tf" }, file("later.tf")])),
    "not a regular file earlier",
  );
  assert.match(
    refusal(
      tarArchive([
        { name: "d", type: "5" },
        { name: "h", type: "1", linkname: "d" },
      ]),
    ),
    "not a regular file earlier",
  );
  assert.match(
    refusal(
      tarArchive([
        { name: "s", type: "2", linkname: "x" },
        { name: "h", type: "1", linkname: "s" },
      ]),
    ),
    "not a regular file earlier",
  );
});

refused(
  "tofu's working data: anything in a .terraform directory at any depth but its modules (a provider there would run as installed); the lock file is fine",
  () => {
    const provider =
      ".terraform/providers/registry.opentofu.org/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0";
    assert.match(refusal(tarArchive([file("main.tf"), file(provider)])), "inside a .terraform directory");
    assert.match(
      refusal(tarArchive([file("modules/net/.terraform/providers/p")])),
      '"modules/net/.terraform/providers/p"',
    );
    assert.match(
      refusal(tarArchive([file(".terraform/plugins/linux_amd64/terraform-provider-x")])),
      "inside a .terraform directory",
    );
    assert.match(refusal(tarArchive([file(".terraform/terraform.tfstate")])), "inside a .terraform directory");
    assert.match(refusal(tarArchive([file(".terraform")])), "inside a .terraform directory");
    assert.match(
      refusal(tarArchive([{ name: "./.terraform", type: "2", linkname: "cache" }])),
      "inside a .terraform directory",
    );
    assert.match(
      refusal(tarArchive([file(".terraform/modules/m/.terraform/providers/p")])),
      "inside a .terraform directory",
    );
    assert.match(
      refusal(systemTar((dir) => mkdirSync(join(dir, ".terraform/providers"), { recursive: true }))),
      "inside a .terraform directory",
    );
    // What the CLI uploads (go-slug keeps .terraform/modules/), and the lock file.
    inspect(
      tarArchive([
        { name: ".terraform/", type: "5" },
        { name: ".terraform/modules/", type: "5" },
        file(".terraform/modules/modules.json"),
        file(".terraform/modules/vpc/main.tf"),
      ]),
    );
    inspect(tarArchive([file(".terraform.lock.hcl"), file("terraform.tfvars"), file("x.terraform/a")]));
  },
);

refused("device files and FIFOs", () => {
  assert.match(refusal(tarArchive([{ name: "null", type: "3" }])), "device file");
  assert.match(refusal(tarArchive([{ name: "sda", type: "4" }])), "device file");
  assert.match(refusal(tarArchive([{ name: "pipe", type: "6" }])), "FIFO");
});

refused("not a tar: no ustar magic, a wrong checksum, a length that is not whole blocks, nothing at all", () => {
  const good = tarArchive([file("a.tf")]);
  const noMagic = Buffer.from(good);
  noMagic.write("xxxxx", 257);
  assert.match(refusal(noMagic), "not a tar archive");
  const badSum = Buffer.from(good);
  badSum[0] = "b".charCodeAt(0);
  assert.match(refusal(badSum), "not a tar archive");
  assert.match(refusal(good.subarray(0, good.length - 1)), "not a tar archive");
  assert.match(refusal(Buffer.alloc(0)), "not a tar archive");
});

refused("a truncated archive: an entry's data ends early", () => {
  const tar = tarArchive([file("a.tf", "y".repeat(2000))]);
  assert.match(refusal(tar.subarray(0, 1024)), "truncated");
});

refused("more entries than allowed: the limit itself is accepted, one more is refused", () => {
  const entries = Array.from({ length: 10 }, (_, i) => file(`f${i}.tf`));
  assert.is(inspect(tarArchive(entries), 777, 10).entries, 10);
  assert.match(refusal(tarArchive([...entries, file("f10.tf")]), 777, 10), "more than 10 entries");
});

refused("nothing after the first zero block is looked at (tar -x stops there too)", () => {
  const tar = Buffer.concat([tarArchive([file("a.tf")]), Buffer.alloc(512, 0x41)]);
  assert.is(inspect(tar).entries, 1);
});

accepted.run();
refused.run();
