import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { LocalObjectBackend } from "../../src/artifacts/backends/local.ts";
import { apiOnlyEnv, spawnStackShip } from "../support/spawned.ts";

// Other local users must not read the data directory: the SQLite database (with its -wal and -shm),
// the master key, the bootstrap token, the local CA's keys and the local artifacts. A start makes
// the directory 0700 and its files 0600 where this process owns them, and warns where it does not.

const modes = suite("data directory file modes");

const mode = (path: string) => (lstatSync(path).mode & 0o777).toString(8).padStart(4, "0");

/** Every directory and file under `root` (itself included) with its mode. */
function tree(root: string): Record<string, string> {
  const found: Record<string, string> = {};
  const visit = (path: string, name: string) => {
    found[name] = mode(path);
    if (lstatSync(path).isDirectory())
      for (const entry of readdirSync(path)) visit(join(path, entry), name === "." ? entry : `${name}/${entry}`);
  };
  visit(root, ".");
  return found;
}

/** Entries that are not private: a directory other than 0700, a file other than 0600. */
function notPrivate(root: string, except: string[] = []): Array<[string, string]> {
  return Object.entries(tree(root)).filter(
    ([name, m]) => !except.includes(name) && m !== (lstatSync(join(root, name)).isDirectory() ? "0700" : "0600"),
  );
}

function openUp(root: string): void {
  for (const [name] of Object.entries(tree(root))) {
    const path = join(root, name);
    chmodSync(path, lstatSync(path).isDirectory() ? 0o755 : 0o644);
  }
}

modes(
  "a start on a data directory left 0755/0644 makes it 0700 and every file 0600 (database, WAL, keys, token, CA, artifacts); another owner's file is warned about",
  async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "ss-modes-"));
    const env = apiOnlyEnv(dataDir);
    try {
      // A first start creates everything; it is then opened up as an older StackShip (or a careless
      // copy) left it, with a local artifact and a file that belongs to someone else.
      const first = spawnStackShip("main.ts", env);
      try {
        await first.line(/StackShip is listening on/);
        // A fresh data directory is private from the start.
        assert.equal(notPrivate(dataDir), [], "a fresh start creates nothing readable by others");
      } finally {
        await first.kill("SIGTERM");
      }
      mkdirSync(join(dataDir, "artifacts/ab/cd"), { recursive: true });
      writeFileSync(join(dataDir, "artifacts/ab/cd/object"), "sealed bytes");
      writeFileSync(join(dataDir, "foreign.txt"), "not ours");
      openUp(dataDir);
      const before = tree(dataDir);
      for (const name of [
        ".",
        "stackship.db",
        "keys",
        "keys/master.key",
        "bootstrap-token",
        "tls",
        "tls/ca.key",
        "tls/server.key",
        "artifacts/ab/cd/object",
      ]) {
        assert.ok(name in before, `${name} exists (found: ${Object.keys(before).join(", ")})`);
        assert.ok(before[name] === "0755" || before[name] === "0644", `${name} was opened up`);
      }
      if (process.getuid?.() === 0) chownSync(join(dataDir, "foreign.txt"), 65534, 65534);

      const second = spawnStackShip("main.ts", env);
      try {
        await second.line(/StackShip is listening on/);
        const after = tree(dataDir);
        assert.ok("stackship.db-wal" in after && "stackship.db-shm" in after, Object.keys(after).join(", "));
        assert.equal(notPrivate(dataDir, ["foreign.txt"]), [], "every directory 0700, every file 0600");
        assert.ok(
          second.output.some((line) => /made \d+ data path\(s\) private/.test(line)),
          second.output.join("\n"),
        );
        if (process.getuid?.() === 0) {
          assert.is(after["foreign.txt"], "0644", "another owner's file is left alone…");
          assert.ok(
            second.output.some(
              (line) => line.includes("WARNING") && line.includes("foreign.txt") && line.includes("uid 65534"),
            ),
            `…and warned about:\n${second.output.join("\n")}`,
          );
        }
      } finally {
        await second.kill("SIGTERM");
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  },
);

modes("a new local artifact is 0600 in 0700 directories, whatever the process's umask", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ss-modes-artifacts-"));
  const previous = process.umask(0o022);
  try {
    const backend = new LocalObjectBackend(join(dir, "artifacts"));
    await backend.write("runs/run-1/plan", Readable.from([Buffer.from("streamed")]));
    await backend.writeWhole("runs/run-2/log", Buffer.from("whole"));
    assert.equal(tree(join(dir, "artifacts")), {
      ".": "0700",
      runs: "0700",
      "runs/run-1": "0700",
      "runs/run-1/plan": "0600",
      "runs/run-2": "0700",
      "runs/run-2/log": "0600",
    });
  } finally {
    process.umask(previous);
    await rm(dir, { recursive: true, force: true });
  }
});

modes.run();
