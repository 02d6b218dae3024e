import { execFileSync } from "node:child_process";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createHash, randomBytes } from "node:crypto";
import { sandboxReleasesSettled, startSandbox, SYNC_IO_MAX_BYTES } from "./sandbox.ts";
import { attemptDirectoryPerCase } from "./sandbox-test-support.ts";

// The read-only input directory (the plan's state file, plan-state.ts): written by the runner at
// the handoff, readable inside, not writable, not replaceable.
const input = suite("sandbox read-only input directory");
let tmpDir = "";
input.before(async () => {
  tmpDir = await mkdtemp(path.join(os.tmpdir(), "ss-input-"));
});
input.after(async () => {
  await rm(tmpDir, { recursive: true, force: true });
});

async function runIn(readOnlyFiles: Record<string, string> | undefined, script: string) {
  const sandbox = await startSandbox({ tmpDir, readOnlyInputDir: "/opt/stackship/state" });
  let output = "";
  const result = await sandbox.run({
    argv: ["sh", "-c", script],
    readOnlyFiles,
    timeoutMs: 30_000,
    onOutput: (chunk) => (output += chunk.toString("utf8")),
  });
  return { result, output };
}

input("the file is readable; writing, removing, chmod-ing it or adding a file next to it fails", async () => {
  const script = [
    "cat /opt/stackship/state/terraform.tfstate",
    "echo x >> /opt/stackship/state/terraform.tfstate && echo APPENDED",
    "rm -f /opt/stackship/state/terraform.tfstate && echo REMOVED",
    "chmod 0666 /opt/stackship/state/terraform.tfstate && echo CHMODDED",
    "touch /opt/stackship/state/other && echo CREATED",
    "cat /opt/stackship/state/terraform.tfstate",
  ].join("; ");
  const { result, output } = await runIn({ "terraform.tfstate": '{"serial":3}\n' }, script);
  assert.is(result.exitCode, 0, output);
  assert.is(output.split('{"serial":3}').length, 3, output);
  for (const word of ["APPENDED", "REMOVED", "CHMODDED", "CREATED"]) assert.not.match(output, word);
});

input(
  "without files the directory is empty; a name that is not a plain file name is refused before the command",
  async () => {
    const { result, output } = await runIn(undefined, "ls -A /opt/stackship/state; echo END");
    assert.is(output.trim(), "END");
    assert.is(result.exitCode, 0);
    try {
      await runIn({ "../escape": "x" }, "true");
      assert.unreachable("a path was accepted");
    } catch (error) {
      assert.match((error as Error).message, "is not a plain file name");
    }
  },
);

input.run();

// The configuration unpacked by the launcher before the command (sandbox-unpack.mjs), as the
// sandbox's uid; when it cannot, the command finds no directory and its own tar takes over.
const unpacking = suite("sandbox: the launcher unpacks the configuration");
const unpackDir = attemptDirectoryPerCase(unpacking, "ss-unpack-");

async function unpackIn(tarball: Buffer) {
  const sandbox = await startSandbox({ tmpDir: unpackDir() });
  let output = "";
  const result = await sandbox.run({
    argv: [
      "sh",
      "-c",
      "if [ -d /work/cfg ]; then cd /work/cfg/env && ls -ln && cat main.tf staged.tf; else echo NOT UNPACKED; fi",
    ],
    files: { "config.tar.gz": tarball, "staged/staged.tf": "# staged\n" },
    unpack: {
      archive: "/work/config.tar.gz",
      into: "/work/cfg",
      workingDirectory: "env",
      copy: ["/work/staged/staged.tf"],
    },
    timeoutMs: 30_000,
    onOutput: (chunk) => (output += chunk.toString("utf8")),
  });
  return { result, output, marks: result.timings.marks.map((m) => m.name) };
}

unpacking(
  "a configuration is unpacked into the working directory before the command starts, owned by the sandbox",
  async () => {
    const src = await mkdtemp(path.join(os.tmpdir(), "ss-unpack-src-"));
    await mkdir(path.join(src, "env"), { recursive: true });
    await writeFile(path.join(src, "env", "main.tf"), "# main\n");
    const tarball = execFileSync("tar", ["-cz", "-C", src, "."]);
    await rm(src, { recursive: true, force: true });
    const { result, output, marks } = await unpackIn(tarball);
    assert.is(result.exitCode, 0, output);
    assert.match(output, "# main\n# staged\n");
    assert.ok(marks.includes("launcher-unpacked"), marks.join(","));
    const owners = output
      .split("\n")
      .filter((line) => line.startsWith("-"))
      .map((line) => line.split(/\s+/)[2]);
    assert.equal(new Set(owners).size, 1, output);
    if (process.getuid?.() === 0) assert.is.not(owners[0], "0", "the files are the sandbox uid's, not root's");
  },
);

unpacking("an archive the launcher does not take leaves no directory behind for the command", async () => {
  const { result, output, marks } = await unpackIn(Buffer.from("not a tarball"));
  assert.is(result.exitCode, 0, output);
  assert.is(output.trim(), "NOT UNPACKED");
  assert.ok(marks.includes("launcher-unpack-skipped"), marks.join(","));
});

unpacking.run();

// Files handed over (up to SYNC_IO_MAX_BYTES in all) and collected (each up to it) are written and
// read with synchronous calls, larger ones through the thread pool: both sides of the size arrive
// whole, and what the runner wrote is the sandbox's.
const sizes = suite("sandbox: files in and out on both sides of the synchronous-I/O size");
const sizesDir = attemptDirectoryPerCase(sizes, "ss-sizes-");
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

sizes("handed over in all up to the size and one byte more: whole, owned by the sandbox", async () => {
  for (const total of [SYNC_IO_MAX_BYTES, SYNC_IO_MAX_BYTES + 1]) {
    const big = randomBytes(total - 5);
    const sandbox = await startSandbox({ tmpDir: sizesDir() });
    let output = "";
    const result = await sandbox.run({
      argv: ["sh", "-c", "stat -c '%u %s' d/big small; sha256sum d/big small"],
      files: { "d/big": big, small: "small" },
      timeoutMs: 30_000,
      onOutput: (chunk) => (output += chunk.toString("utf8")),
    });
    assert.is(result.exitCode, 0, output);
    const [bigStat, smallStat, bigSum, smallSum] = output.trim().split("\n");
    assert.is(bigStat.split(" ")[1], String(total - 5), output);
    assert.is(smallStat.split(" ")[1], "5", output);
    if (process.getuid?.() === 0)
      assert.ok(
        bigStat.split(" ")[0] !== "0" && smallStat.split(" ")[0] !== "0",
        `the sandbox's, not root's: ${output}`,
      );
    assert.is(bigSum.split(" ")[0], sha(big));
    assert.is(smallSum.split(" ")[0], sha(Buffer.from("small")));
  }
});

sizes("collected files of the size and one byte more: whole", async () => {
  const sandbox = await startSandbox({ tmpDir: sizesDir() });
  let output = "";
  const result = await sandbox.run({
    argv: [
      "sh",
      "-c",
      `head -c ${SYNC_IO_MAX_BYTES} /dev/urandom > at; head -c ${SYNC_IO_MAX_BYTES + 1} /dev/urandom > over; : > empty; sha256sum at over`,
    ],
    collect: ["at", "over", "empty"],
    timeoutMs: 30_000,
    onOutput: (chunk) => (output += chunk.toString("utf8")),
  });
  assert.is(result.exitCode, 0, output);
  const sums = Object.fromEntries(
    output
      .trim()
      .split("\n")
      .map((line) => line.split(/\s+/).reverse() as [string, string]),
  );
  assert.is(result.files.at?.length, SYNC_IO_MAX_BYTES);
  assert.is(result.files.over?.length, SYNC_IO_MAX_BYTES + 1);
  assert.is(sha(result.files.at!), sums.at);
  assert.is(sha(result.files.over!), sums.over);
  assert.is(result.files.empty?.length, 0);
});

sizes.run();

// onMark: each step mark as the command writes it, with a reader of /work at that moment (the plan
// phase stores the plan early from it, and uses that only if the collected files are the same).
const marks = suite("sandbox: step marks reach the runner while the command runs");
const marksDir = attemptDirectoryPerCase(marks, "ss-marks-");

marks(
  "a mark's reader sees the file as it was then; the collected file is what the command left at its end",
  async () => {
    const sandbox = await startSandbox({ tmpDir: marksDir() });
    const seen: Promise<string | null>[] = [];
    const result = await sandbox.run({
      argv: ["sh", "-c", "echo one > /work/f; echo shown >&3; sleep 0.5; echo two > /work/f"],
      collect: ["f"],
      timeoutMs: 30_000,
      onMark: (name, read) => {
        if (name === "shown") seen.push(read("f").then((bytes) => bytes?.toString("utf8") ?? null));
      },
    });
    assert.is(result.exitCode, 0);
    assert.equal(await Promise.all(seen), ["one\n"]);
    assert.is(result.files.f?.toString("utf8"), "two\n");
  },
);

marks("a mark's reader refuses a path outside /work and reads a missing file as null", async () => {
  const sandbox = await startSandbox({ tmpDir: marksDir() });
  const reads: Promise<unknown>[] = [];
  await sandbox.run({
    argv: ["sh", "-c", "echo m >&3; sleep 0.3"],
    timeoutMs: 30_000,
    onMark: (_name, read) => {
      reads.push(
        read("../etc/passwd").then(
          () => "read",
          (error: Error) => error.message,
        ),
      );
      reads.push(read("missing"));
    },
  });
  const [outside, missing] = await Promise.all(reads);
  assert.match(String(outside), "is not a relative path inside the work directory");
  assert.is(missing, null);
});

marks.run();

// A phase's sandbox (`releaseLater`) returns once the output the exit report counts has arrived,
// not when bwrap has ended: every byte the command wrote is still there, on both streams.
const output = suite("sandbox: the attempt's whole output, without waiting for the teardown");
const outputDir = attemptDirectoryPerCase(output, "ss-output-");

async function released(script: string) {
  const sandbox = await startSandbox({ tmpDir: outputDir() });
  const streams = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  const result = await sandbox.run(
    { argv: ["sh", "-c", script], timeoutMs: 30_000, onOutput: (chunk, stream) => streams[stream].push(chunk) },
    { releaseLater: true },
  );
  // The release in the background removes the sandbox's host side (checked after each case).
  await sandboxReleasesSettled();
  return {
    result,
    stdout: Buffer.concat(streams.stdout).toString("utf8"),
    stderr: Buffer.concat(streams.stderr).toString("utf8"),
  };
}

output("megabytes on both streams, the last line right before the exit: all of it arrives", async () => {
  const { result, stdout, stderr } = await released(
    "i=0; while [ $i -lt 3000 ]; do echo out-$i-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; echo err-$i >&2; i=$((i+1)); done; echo LAST; echo LAST-ERR >&2",
  );
  assert.is(result.exitCode, 0);
  const lines = stdout.trimEnd().split("\n");
  assert.is(lines.length, 3001);
  assert.is(lines[2999].slice(0, 9), "out-2999-");
  assert.is(lines.at(-1), "LAST");
  assert.is(stderr.trimEnd().split("\n").length, 3001);
  assert.ok(stderr.endsWith("err-2999\nLAST-ERR\n"));
});

// The launcher forwards the command's output through its own stdout and stderr, whose writes queue
// in it while the runner reads slower than the command wrote (a loaded host): the exit report
// waits until they left it. A consumer that hashes each chunk many times is always the slower one.
output(
  "a burst of megabytes on both streams, read slowly by the runner, then the exit: every byte arrives",
  async () => {
    const bytes = 4 * 1024 * 1024;
    const script = `head -c ${bytes} /dev/zero; echo END; head -c ${bytes} /dev/zero >&2; echo END-ERR >&2`;
    const lost: string[] = [];
    for (const releaseLater of [true, false, true]) {
      const sandbox = await startSandbox({ tmpDir: outputDir() });
      const received = { stdout: 0, stderr: 0 };
      const tails = { stdout: "", stderr: "" };
      const result = await sandbox.run(
        {
          argv: ["sh", "-c", script],
          timeoutMs: 60_000,
          onOutput: (chunk, stream) => {
            received[stream] += chunk.length;
            tails[stream] = (tails[stream] + chunk.toString("latin1")).slice(-16);
            for (let i = 0; i < 20; i++) createHash("sha256").update(chunk).digest();
          },
        },
        { releaseLater },
      );
      await sandboxReleasesSettled();
      assert.is(result.exitCode, 0);
      if (
        received.stdout !== bytes + 4 ||
        received.stderr !== bytes + 8 ||
        !tails.stdout.endsWith("\0END\n") ||
        !tails.stderr.endsWith("\0END-ERR\n")
      ) {
        lost.push(
          `releaseLater ${releaseLater}: stdout ${received.stdout}/${bytes + 4}, stderr ${received.stderr}/${bytes + 8}`,
        );
      }
    }
    assert.equal(lost, []);
  },
);

output(
  "a process the command left behind, even in a session of its own, does not hold the result back; what was written before the exit is there",
  async () => {
    const { result, stdout } = await released(
      "(sleep 30 &); setsid sleep 30 > /dev/null 2>&1 < /dev/null & setsid sh -c 'sleep 30' & echo done",
    );
    assert.is(result.exitCode, 0);
    assert.is(stdout, "done\n");
  },
);

output.run();
