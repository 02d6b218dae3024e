import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  linkSync,
  writeFileSync,
  chmodSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
// @ts-expect-error -- a plain ES module of the sandbox launcher, without types
import { unpackConfiguration, warmUpUnpack } from "./sandbox-unpack.mjs";

/**
 * The launcher's unpacker against GNU tar itself: for every archive format tar writes (gnu, pax,
 * ustar, v7), the tree it unpacks (names, kinds, contents, modes, link targets) is the one
 * `tar -xzf --no-same-owner --no-same-permissions` unpacks under `umask 077`; for what it does not
 * handle it leaves nothing behind and says so, so that the phase script's tar takes over.
 */
const test = suite("sandbox unpack");
const unpack = unpackConfiguration as (request: {
  archive: string;
  into: string;
  workingDirectory: string;
  copy: readonly string[];
}) => Promise<boolean>;

let root = "";
test.before.each(() => {
  root = mkdtempSync(path.join(tmpdir(), "stackship-unpack-test-"));
});
test.after.each(() => rmSync(root, { recursive: true, force: true }));

/** A configuration tree with what uploads hold: nested directories, modes, a symlink, a hard link, long names. */
function sourceTree(
  dir: string,
  { bigFile = false, names = "long" }: { bigFile?: boolean; names?: NameLength } = {},
): void {
  // Long names need GNU or pax headers; ustar splits a path into a prefix and a name; v7 has 99 characters.
  const long =
    names === "short" ? "long-dir" : "a-very-long-directory-name-that-goes-on-and-on".repeat(names === "long" ? 3 : 1);
  const file = names === "short" ? "f.tf" : `${"f".repeat(names === "long" ? 120 : 90)}.tf`;
  mkdirSync(path.join(dir, "modules", long, "nested"), { recursive: true });
  writeFileSync(path.join(dir, "main.tf"), 'module "m" { source = "./modules/m" }\n');
  writeFileSync(path.join(dir, "modules", long, "nested", file), "# long name\n");
  writeFileSync(path.join(dir, "run.sh"), "#!/bin/sh\necho hi\n");
  chmodSync(path.join(dir, "run.sh"), 0o755);
  writeFileSync(path.join(dir, "readonly.txt"), "ro\n");
  chmodSync(path.join(dir, "readonly.txt"), 0o444);
  mkdirSync(path.join(dir, "modules", "m"));
  writeFileSync(path.join(dir, "modules", "m", "main.tf"), 'output "x" { value = 1 }\n');
  symlinkSync("m", path.join(dir, "modules", "alias"));
  linkSync(path.join(dir, "main.tf"), path.join(dir, "hardlink.tf"));
  mkdirSync(path.join(dir, "env", "prod"), { recursive: true });
  writeFileSync(path.join(dir, "env", "prod", "main.tf"), "# prod\n");
  writeFileSync(path.join(dir, "env", "prod", "zzzz_stackship.auto.tfvars"), "# the configuration's own, replaced\n");
  if (bigFile) writeFileSync(path.join(dir, "blob.bin"), randomBytes(3 * 1024 * 1024));
}

type NameLength = "long" | "prefixed" | "short";
const NAMES: Record<string, NameLength> = { gnu: "long", pax: "long", ustar: "prefixed", v7: "short" };

function tarball(format: string, options: { bigFile?: boolean } = {}): string {
  const src = path.join(root, `src-${format}`);
  mkdirSync(src);
  sourceTree(src, { ...options, names: NAMES[format] });
  const archive = path.join(root, `config-${format}.tar.gz`);
  execFileSync("tar", ["-czf", archive, `--format=${format}`, "-C", src, "."]);
  return archive;
}

/** Every entry below `dir`: kind, mode, contents or link target. */
function describe(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (relative: string) => {
    for (const name of readdirSync(path.join(dir, relative)).sort()) {
      const entry = path.join(relative, name);
      const stat = lstatSync(path.join(dir, entry));
      const mode = (stat.mode & 0o7777).toString(8);
      if (stat.isSymbolicLink()) out[entry] = `symlink -> ${readlinkSync(path.join(dir, entry))}`;
      else if (stat.isDirectory()) {
        out[entry] = `dir ${mode}`;
        walk(entry);
      } else
        out[entry] =
          `file ${mode} ${stat.nlink} ${readFileSync(path.join(dir, entry)).toString("base64").slice(0, 40)} ${stat.size}`;
    }
  };
  walk("");
  return out;
}

function staged(): string[] {
  const dir = path.join(root, "staged");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "zzzz_stackship_override.tf"), "terraform {}\n");
  writeFileSync(path.join(dir, "zzzz_stackship.auto.tfvars"), 'x = "1"\n');
  return [path.join(dir, "zzzz_stackship_override.tf"), path.join(dir, "zzzz_stackship.auto.tfvars")];
}

/** What the phase script's fallback does: tar under umask 077, then cp of the staged files. */
function byTar(archive: string, workingDirectory: string, copy: string[]): string {
  const into = path.join(root, "by-tar");
  mkdirSync(into);
  execFileSync("sh", [
    "-c",
    `umask 077 && tar -xzf "$1" -C "$2" --no-same-owner --no-same-permissions && cd "$2/$3" && cp "$4" "$5" ./`,
    "sh",
    archive,
    into,
    workingDirectory,
    ...copy,
  ]);
  return into;
}

for (const format of ["gnu", "pax", "ustar", "v7"]) {
  test(`a ${format} archive unpacks to exactly the tree tar unpacks, the staged files copied into the working directory`, async () => {
    const archive = tarball(format);
    const copy = staged();
    const into = path.join(root, "cfg");
    assert.is(await unpack({ archive, into, workingDirectory: "env/prod", copy }), true);
    const expected = describe(byTar(archive, "env/prod", copy));
    assert.equal(describe(into), expected);
    assert.is(
      readFileSync(path.join(into, "env/prod/zzzz_stackship.auto.tfvars"), "utf8"),
      'x = "1"\n',
      "the staged file wins over the configuration's own",
    );
    assert.not.ok(existsSync(`${into}.partial`));
  });
}

test("an archive over 1 MiB is streamed, with the same result", async () => {
  const archive = tarball("pax", { bigFile: true });
  assert.ok(lstatSync(archive).size > 1024 * 1024);
  const copy = staged();
  const into = path.join(root, "cfg");
  assert.is(await unpack({ archive, into, workingDirectory: "", copy }), true);
  assert.equal(describe(into), describe(byTar(archive, "", copy)));
});

/** A hand-made tar entry (ustar), for what GNU tar would not write from a directory. */
function entry(name: string, type: string, body = Buffer.alloc(0), linkname = ""): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 100, "utf8");
  header.write("0000644\0", 100);
  header.write("0000000\0", 108);
  header.write("0000000\0", 116);
  header.write(`${body.length.toString(8).padStart(11, "0")}\0`, 124);
  header.write("00000000000\0", 136);
  header.write(type, 156);
  header.write(linkname, 157, 100, "utf8");
  header.write("ustar\0", 257);
  header.write("00", 263);
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return Buffer.concat([header, body, Buffer.alloc((512 - (body.length % 512)) % 512)]);
}

function handMade(...entries: Buffer[]): string {
  const archive = path.join(root, `hand-${randomBytes(4).toString("hex")}.tar.gz`);
  writeFileSync(path.join(root, "plain.tar"), Buffer.concat([...entries, Buffer.alloc(1024)]));
  execFileSync("gzip", ["-f", path.join(root, "plain.tar")]);
  execFileSync("mv", [path.join(root, "plain.tar.gz"), archive]);
  return archive;
}

const refusals: [string, () => string][] = [
  ["a FIFO", () => handMade(entry("main.tf", "0", Buffer.from("#\n")), entry("pipe", "6"))],
  ["a device", () => handMade(entry("dev", "3"))],
  ["a path with ..", () => handMade(entry("../escape.tf", "0", Buffer.from("#\n")))],
  ["an absolute path", () => handMade(entry("/etc/escape.tf", "0", Buffer.from("#\n")))],
  [
    "a truncated archive",
    () => {
      const archive = handMade(entry("main.tf", "0", Buffer.alloc(4096, 0x61)));
      const whole = execFileSync("gzip", ["-dc", archive]);
      writeFileSync(path.join(root, "cut.tar"), whole.subarray(0, 1024));
      execFileSync("gzip", ["-f", path.join(root, "cut.tar")]);
      return path.join(root, "cut.tar.gz");
    },
  ],
  [
    "not gzip",
    () => {
      writeFileSync(path.join(root, "not.tar.gz"), "plain text");
      return path.join(root, "not.tar.gz");
    },
  ],
  [
    "the same file twice",
    () => handMade(entry("main.tf", "0", Buffer.from("1\n")), entry("main.tf", "0", Buffer.from("2\n"))),
  ],
];
for (const [what, make] of refusals) {
  test(`${what}: nothing is left behind and the script's tar takes over`, async () => {
    const into = path.join(root, "cfg");
    assert.is(await unpack({ archive: make(), into, workingDirectory: "", copy: staged() }), false);
    assert.not.ok(existsSync(into));
    assert.not.ok(existsSync(`${into}.partial`));
  });
}

test("a working directory the archive does not have: nothing is left behind (the script's cd says so)", async () => {
  const into = path.join(root, "cfg");
  assert.is(await unpack({ archive: tarball("gnu"), into, workingDirectory: "env/staging", copy: staged() }), false);
  assert.not.ok(existsSync(into));
  assert.not.ok(existsSync(`${into}.partial`));
});

test("a working directory that is a file of the archive is refused too", async () => {
  const into = path.join(root, "cfg");
  assert.is(await unpack({ archive: tarball("gnu"), into, workingDirectory: "main.tf", copy: staged() }), false);
  assert.not.ok(existsSync(into));
});

test("the launcher's warm-up sample unpacks (a directory, a file, a symlink, a copied file) and leaves nothing behind", async () => {
  const warmUp = warmUpUnpack as (scratch: string) => Promise<boolean>;
  assert.is(await warmUp(path.join(root, "warm-up")), true);
  assert.equal(readdirSync(root), []);
});

test.run();
