// One suite of the sandbox's behaviour cases against real bubblewrap (bwrap's flags, filesystem,
// network, environment, files in and out, output, marks, the plan-diff, tofu), all on the same
// run/probe helpers and per-case temporary directory. Timeout and abort are
// sandbox-signals.test.ts, warm sandboxes and the pool sandbox-warm.test.ts, the uid/seccomp
// confinement cases sandbox-confinement.test.ts.
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openApiChannel, SANDBOX_API_PORT } from "./api-channel.ts";
import { bwrapArgs, isSandboxId, newSandboxId, runInSandbox, SANDBOX_BASE_PROFILE, SANDBOX_TOOLS_DIR, startSandbox, type SandboxOptions, type SandboxResult } from "./sandbox.ts";
import { buildPlanDiff } from "../domain/plan-diff/plan-diff.mjs";
import { planDiffBinds, SANDBOX_PLAN_DIFF_BUILDER } from "./tofu-files.ts";
import { attemptDirectoryPerCase, catEvidence, runCollecting, type CollectedResult } from "./sandbox-test-support.ts";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const toolsDir = path.join(repoRoot, ".tools");
const fixtures = path.join(repoRoot, "server/test/fixtures/configs");
const node = process.execPath;

const test = suite("sandbox");
const tmpDir = attemptDirectoryPerCase(test, "stackship-sandbox-test-");

/** Runs in the sandbox, collecting stdout as text; attempts live under the case's directory. */
const run = (options: SandboxOptions): Promise<CollectedResult> => runCollecting({ tmpDir: tmpDir(), ...options });

/** Runs a node program inside the sandbox and parses the JSON it prints. */
async function probe<T = unknown>(program: string, options: Partial<SandboxOptions> = {}): Promise<{ result: SandboxResult; value: T; stderr: string }> {
  const result = await run({ argv: [node, "-e", program], ...options });
  let value: unknown;
  try {
    value = JSON.parse(result.stdout);
  } catch {
    assert.unreachable(`probe printed no JSON: stdout=${result.stdout} stderr=${result.stderr} error=${result.error}`);
  }
  return { result, value: value as T, stderr: result.stderr };
}

/** What the confinement probe prints. */
interface Confinement {
  etc: string;
  usr: string;
  root: string;
  work: string;
  tmp: string;
  cwd: string;
  pid: number;
  processes: number;
  hostname: string;
  env: Record<string, string>;
  capEff: string;
  hostFiles: string;
  home: string[];
}

/** A resource change of the plan JSON (`tofu show -json`): the members these checks read. */
interface PlanChange {
  actions: string[];
  after: Record<string, unknown>;
  after_sensitive: { result?: unknown };
  after_unknown: { result?: unknown; input?: { password?: unknown } };
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

test("sandbox ids and the bwrap flag list", () => {
  const id = newSandboxId();
  assert.ok(isSandboxId(id), id);
  assert.is.not(newSandboxId(), id);
  const args = bwrapArgs({
    name: "sbx-name",
    workDir: "/host/work",
    etcDir: "/host/etc",
    launcherPath: "/host/launcher.mjs",
    nodePath: "/usr/bin/node",
    apiSocketDir: "/host/channel",
    readOnlyBinds: [{ source: "/host/tools", target: "/opt/stackship/tools" }],
    uid: 3000000123,
    tmpDir: "/host/fs/tmp",
    seccomp: true,
  });
  for (const flag of ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup", "--unshare-net", "--die-with-parent", "--new-session", "--clearenv"]) {
    assert.ok(args.includes(flag), flag);
  }
  const joined = args.join(" ");
  // As root: every capability but the three setpriv needs to switch uid, and setpriv clears those.
  assert.ok(joined.includes("--cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID --cap-add CAP_SETPCAP"));
  assert.ok(joined.includes("--seccomp 4"));
  assert.ok(joined.includes("--bind /host/fs/tmp /tmp"));
  assert.ok(
    joined.includes("/usr/bin/setpriv --reuid=3000000123 --rgid=3000000123 --egid=65534 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- /usr/bin/node"),
  );
  assert.ok(joined.includes("--hostname sbx-name"));
  assert.ok(joined.includes("--bind /host/work /work"));
  assert.ok(joined.includes("--ro-bind /host/tools /opt/stackship/tools"));
  assert.ok(joined.includes("--ro-bind /host/channel /run/stackship/channel"));
  assert.ok(joined.includes("--proc /proc") && joined.includes("--dev /dev"));
  assert.not.ok(
    args.some((a) => a === "/" && args[args.indexOf(a) - 1] === "--bind"),
    "no writable root",
  );
  // The root is made read-only after every mount is in place, right before the command.
  assert.ok(args.indexOf("--remount-ro") > args.lastIndexOf("--ro-bind"));
  assert.equal(args.slice(-6), ["/usr/bin/node", "/run/stackship/launcher.mjs", "--api-socket", "/run/stackship/channel/api.sock", "--api-port", "7480"]);
});

test("inside: read-only root, writable /work, own PID namespace, hostname, only the given env, no capabilities", async () => {
  const program = `
    const fs = require('fs');
    const os = require('os');
    const attempt = (fn) => { try { fn(); return 'ok'; } catch (e) { return e.code; } };
    console.log(JSON.stringify({
      etc: attempt(() => fs.writeFileSync('/etc/x', '1')),
      usr: attempt(() => fs.writeFileSync('/usr/x', '1')),
      root: attempt(() => fs.mkdirSync('/x')),
      work: attempt(() => fs.writeFileSync('/work/x', '1')),
      tmp: attempt(() => fs.writeFileSync('/tmp/x', '1')),
      cwd: process.cwd(),
      pid: process.pid,
      processes: fs.readdirSync('/proc').filter((p) => /^[0-9]+$/.test(p)).length,
      hostname: os.hostname(),
      env: process.env,
      capEff: /CapEff:\\s*(\\S+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1],
      hostFiles: attempt(() => fs.readFileSync('/etc/shadow')),
      home: fs.readdirSync('/').sort(),
    }));
  `;
  const { result, value } = await probe<Confinement>(program, { name: "ss-plan-test-1", env: { TF_IN_AUTOMATION: "1", SECRET_LIKE: "x y z" } });
  assert.is(result.exitCode, 0);
  assert.is(result.signal, null);
  assert.ok(result.started);
  assert.is(result.name, "ss-plan-test-1");
  assert.is(result.baseProfile, SANDBOX_BASE_PROFILE);
  assert.ok(isSandboxId(result.sandboxId));
  assert.is(value.etc, "EROFS");
  assert.is(value.usr, "EROFS");
  assert.is(value.root, "EROFS");
  assert.is(value.work, "ok");
  assert.is(value.tmp, "ok");
  assert.is(value.cwd, "/work");
  assert.ok(value.pid < 20, `pid ${value.pid}`);
  // bwrap's init, the launcher and the probe (node may still be tearing down a helper).
  assert.ok(value.processes <= 5, `${value.processes} processes visible`);
  assert.is(value.hostname, "ss-plan-test-1");
  assert.equal(value.env, { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/work", TF_IN_AUTOMATION: "1", SECRET_LIKE: "x y z" });
  assert.is(value.capEff, "0000000000000000");
  assert.is(value.hostFiles, "ENOENT");
  // Only what a run needs is mounted: no /root, /home, /var, /srv, /mnt or the repository.
  const unexpected = value.home.filter((d: string) => !["bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run", "sbin", "tmp", "usr", "work"].includes(d));
  assert.equal(unexpected, []);
});

test("environment values never appear on a host command line", async () => {
  const secret = `s3cr3t-${newSandboxId()}`;
  const seen: string[] = [];
  const watcher = setInterval(() => {
    for (const pid of readdirSync("/proc").filter((p) => /^[0-9]+$/.test(p))) {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
        if (cmdline.includes(secret)) seen.push(cmdline);
      } catch {
        // The process ended.
      }
    }
  }, 50);
  try {
    const result = await run({ argv: ["sh", "-c", 'sleep 0.4; test "$TOKEN" = "$EXPECTED"'], env: { TOKEN: secret, EXPECTED: secret } });
    assert.is(result.exitCode, 0);
  } finally {
    clearInterval(watcher);
  }
  assert.equal(seen, []);
});

test("network: the API channel reaches the API; the host and any other port do not", async () => {
  const api = http.createServer((req, res) => res.end(`stackship api: ${req.url}`));
  const apiPort = await listen(api);
  const other = net.createServer((socket) => socket.end("host service\n"));
  const otherPort = await listen(other);
  const program = `
    const net = require('net');
    const http = require('http');
    const connect = (port) => new Promise((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port });
      s.once('connect', () => { s.destroy(); resolve('connected'); });
      s.once('error', (e) => resolve(e.code));
    });
    const get = (url) => new Promise((resolve) => {
      http.get(url, (res) => { let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => resolve(res.statusCode + ' ' + b)); })
        .on('error', (e) => resolve(e.code));
    });
    (async () => {
      console.log(JSON.stringify({
        api: await get('http://127.0.0.1:${SANDBOX_API_PORT}/api/v2/ping'),
        hostService: await connect(${otherPort}),
        hostApiDirect: await connect(${apiPort}),
        otherLoopbackPort: await connect(${SANDBOX_API_PORT + 1}),
        postgres: await connect(5432),
        outside: await new Promise((resolve) => {
          const s = net.connect({ host: '1.1.1.1', port: 443 });
          s.once('connect', () => { s.destroy(); resolve('connected'); });
          s.once('error', (e) => resolve(e.code));
        }),
      }));
    })();
  `;
  try {
    const { result, value } = await probe<Record<"api" | "hostService" | "hostApiDirect" | "otherLoopbackPort" | "postgres" | "outside", string>>(program, {
      api: { host: "127.0.0.1", port: apiPort },
    });
    assert.is(result.exitCode, 0);
    assert.is(value.api, "200 stackship api: /api/v2/ping");
    assert.is(value.hostService, "ECONNREFUSED");
    assert.is(value.hostApiDirect, "ECONNREFUSED");
    assert.is(value.otherLoopbackPort, "ECONNREFUSED");
    assert.is(value.postgres, "ECONNREFUSED");
    assert.is(value.outside, "ENETUNREACH");
  } finally {
    api.close();
    other.close();
  }
});

test("a caller-managed API channel socket works the same way", async () => {
  const api = http.createServer((_req, res) => res.end("managed channel"));
  const apiPort = await listen(api);
  const channelDir = await mkdtemp(path.join(os.tmpdir(), "stackship-channel-"));
  const channel = await openApiChannel({ socketPath: path.join(channelDir, "api.sock"), target: { host: "127.0.0.1", port: apiPort } });
  try {
    const { result, value } = await probe(
      `
      require('http').get('http://127.0.0.1:${SANDBOX_API_PORT}/api/v2/ping', (res) => {
        let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => console.log(JSON.stringify(b)));
      }).on('error', (e) => console.log(JSON.stringify(e.code)));
    `,
      { apiSocketPath: channel.socketPath },
    );
    assert.is(result.exitCode, 0);
    assert.is(value, "managed channel");
    assert.is(channel.connectionCount, 1);
  } finally {
    await channel.close();
    api.close();
    await rm(channelDir, { recursive: true, force: true });
  }
});

test("without an API channel nothing listens inside", async () => {
  const { value } = await probe(`
    const s = require('net').connect({ host: '127.0.0.1', port: ${SANDBOX_API_PORT} });
    s.once('connect', () => { console.log(JSON.stringify('connected')); s.destroy(); });
    s.once('error', (e) => console.log(JSON.stringify(e.code)));
  `);
  assert.is(value, "ECONNREFUSED");
});

test("files in and out; the host work dir is removed afterwards", async () => {
  const result = await run({
    argv: ["sh", "-c", "cat in.txt nested/deeper.txt main.tf > out.txt; mkdir -p results; echo done > results/status; wc -c < out.txt"],
    copyDir: path.join(fixtures, "basic"),
    files: { "in.txt": "first\n", "nested/deeper.txt": Buffer.from("second\n") },
    collect: ["out.txt", "results/status", "missing.txt"],
  });
  assert.is(result.exitCode, 0, result.stderr);
  const out = result.files["out.txt"]!.toString("utf8");
  assert.ok(out.startsWith("first\nsecond\n"));
  assert.ok(out.includes('resource "terraform_data" "greeting"'));
  assert.is(result.files["results/status"]!.toString("utf8"), "done\n");
  assert.is(result.files["missing.txt"], null);
  assert.is(result.stdout.trim(), String(Buffer.byteLength(out)));
  // test.after.each checks that tmpDir is empty again.
});

test("collect does not follow symlinks the sandbox planted", async () => {
  const result = await run({
    argv: ["sh", "-c", "ln -s /etc/hostname leak.txt; mkdir d; ln -s /etc d/etc; ln -s / up"],
    collect: ["leak.txt", "d/etc/hostname", "up/etc/hostname"],
  });
  assert.is(result.exitCode, 0);
  assert.equal(result.files, { "leak.txt": null, "d/etc/hostname": null, "up/etc/hostname": null });
});

test("paths outside the work dir are refused before anything starts", async () => {
  const refused: Record<string, string>[] = [{ "../escape": "x" }, { "/etc/passwd": "x" }, { "a/../../b": "x" }];
  for (const files of refused) {
    let message = "";
    await runInSandbox({ argv: ["true"], files, tmpDir: tmpDir() }).catch((error: Error) => (message = error.message));
    assert.match(message, /not a relative path inside the work directory/);
  }
  let message = "";
  await runInSandbox({ argv: ["true"], readOnlyBinds: [{ source: toolsDir, target: "/work/tools" }], tmpDir: tmpDir() }).catch((error: Error) => (message = error.message));
  assert.match(message, /would cover/);
});

test("exit codes, stderr and a missing command", async () => {
  const failing = await run({ argv: ["sh", "-c", "echo to-stderr >&2; exit 3"] });
  assert.is(failing.exitCode, 3);
  assert.is(failing.stderr, "to-stderr\n");
  assert.is(failing.error, undefined);

  const missing = await run({ argv: ["no-such-command-anywhere"] });
  assert.not.ok(missing.started);
  assert.is(missing.exitCode, 127);
  assert.match(missing.error ?? "", /ENOENT/);

  const noBwrap = await run({ argv: ["true"], bwrapPath: "/nonexistent/bwrap" });
  assert.not.ok(noBwrap.started);
  assert.match(noBwrap.error ?? "", /ENOENT/);
});

test("an onOutput callback that throws fails the run after cleanup", async () => {
  let message = "";
  await runInSandbox({
    argv: ["echo", "hi"],
    tmpDir: tmpDir(),
    onOutput: () => {
      throw new Error("consumer broke");
    },
  }).catch((error: Error) => (message = error.message));
  assert.is(message, "consumer broke");
});

test("steps the command marks on its fd 3 come back as timings", async () => {
  const result = await run({ argv: ["sh", "-c", "echo one >&3; sleep 0.05; echo two >&3; echo out"] });
  assert.is(result.exitCode, 0);
  assert.equal(
    result.timings.marks.map((m) => m.name),
    ["one", "two"],
  );
  const [one, two] = result.timings.marks;
  // Order only: the gap between the marks depends on the machine's load (no timed assertions).
  assert.ok(result.timings.startedAt! <= one.at && one.at <= two.at && two.at <= result.timings.exitedAt!);
});

test("plan-diff: the launcher builds it inside the sandbox after the command, with the builder loaded at boot", async () => {
  const secret = "lt-sandbox-secret-0451";
  const plan = {
    format_version: "1.2",
    terraform_version: "1.12.6",
    errored: false,
    resource_changes: [
      {
        address: "terraform_data.a",
        mode: "managed",
        type: "terraform_data",
        name: "a",
        provider_name: "terraform.io/builtin/terraform",
        change: { actions: ["create"], before: null, after: { input: secret }, after_unknown: { id: true }, before_sensitive: false, after_sensitive: {} },
      },
    ],
  };
  const shape = { tmpDir: tmpDir(), readOnlyBinds: planDiffBinds(), planDiffBuilder: SANDBOX_PLAN_DIFF_BUILDER };
  const request = catEvidence("run-0123456789abcdef", ["PD_SECRET"]);
  const sandbox = await startSandbox(shape);
  assert.ok(await sandbox.ready, "ready once the builder is loaded");
  const withFile = await sandbox.run({
    argv: ["true"],
    files: { "plan.tfplan": JSON.stringify(plan) },
    env: { PD_SECRET: secret },
    evidence: request,
    collect: ["plan-diff.json"],
  });
  assert.is(withFile.exitCode, 0, withFile.error);
  assert.equal(
    withFile.timings.marks.map((m) => m.name),
    ["evidence", "show", "plan-diff"],
  );
  const text = withFile.artifacts["plan-diff.json"].toString("utf8");
  assert.not.match(text, secret, "a value named by secretEnv stays redacted");
  assert.equal(JSON.parse(text), buildPlanDiff(plan, { runId: "run-0123456789abcdef", knownSecrets: [secret] }).artifact);
  assert.is(withFile.files["plan-diff.json"], null, "nothing is written to /work");

  // Not a plan: no artifact, a line in the log that does not quote the input, and the attempt still succeeds.
  let log = "";
  const refused = await runInSandbox({
    ...shape,
    argv: ["true"],
    files: { "plan.tfplan": '{"password": "hunter2", oops' },
    evidence: request,
    onOutput: (chunk) => (log += chunk.toString()),
  });
  assert.is(refused.exitCode, 0);
  assert.is(refused.artifacts["plan-diff.json"], undefined);
  assert.match(log, /could not build the redacted plan changes/);
  assert.not.match(log, "hunter2");

  // A failed command: no plan-diff at all.
  const failed = await runInSandbox({ ...shape, argv: ["sh", "-c", "exit 4"], files: { "plan.tfplan": JSON.stringify(plan) }, evidence: request });
  assert.is(failed.exitCode, 4);
  assert.equal(failed.artifacts, {});
});

test("tofu: offline init from the provider mirror, plan -out, show -json", async () => {
  const cliConfig = `provider_installation {
  filesystem_mirror {
    path    = "${SANDBOX_TOOLS_DIR}/providers"
    include = ["registry.opentofu.org/*/*"]
  }
}
`;
  const script = ["set -e", "tofu init -input=false -no-color", "tofu plan -input=false -no-color -lock=false -out=plan.tfplan", "tofu show -json plan.tfplan > plan.json"].join(
    "\n",
  );
  const result = await run({
    argv: ["sh", "-c", script],
    name: "ss-plan-tofu",
    copyDir: path.join(fixtures, "random"),
    files: { ".tofurc": cliConfig },
    env: {
      PATH: `${SANDBOX_TOOLS_DIR}/bin:/usr/bin:/bin`,
      TF_CLI_CONFIG_FILE: "/work/.tofurc",
      TF_IN_AUTOMATION: "1",
      CHECKPOINT_DISABLE: "1",
    },
    readOnlyBinds: [{ source: toolsDir, target: SANDBOX_TOOLS_DIR }],
    timeoutMs: 60_000,
    collect: ["plan.tfplan", "plan.json", ".terraform.lock.hcl"],
  });
  assert.is(result.exitCode, 0, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  assert.match(result.stdout, /Installed hashicorp\/random v3\.9\.0/);
  assert.match(result.stdout, /Plan: 2 to add, 0 to change, 0 to destroy\./);
  assert.ok(result.files["plan.tfplan"]!.length > 0);
  assert.match(result.files[".terraform.lock.hcl"]!.toString("utf8"), /registry\.opentofu\.org\/hashicorp\/random/);

  const plan = JSON.parse(result.files["plan.json"]!.toString("utf8")) as {
    errored: boolean;
    terraform_version: string;
    resource_changes: Array<{ address: string; change: PlanChange }>;
  };
  assert.is(plan.errored, false);
  const changes = Object.fromEntries(plan.resource_changes.map((c) => [c.address, c.change]));
  assert.equal(Object.keys(changes).sort(), ["random_password.db", "terraform_data.app"]);
  assert.equal(changes["random_password.db"].actions, ["create"]);
  assert.equal(changes["terraform_data.app"].actions, ["create"]);
  // The provider marks result sensitive; at plan time it is also unknown, so `after` omits it.
  assert.is(changes["random_password.db"].after_sensitive.result, true);
  assert.is(changes["random_password.db"].after_unknown.result, true);
  assert.not.ok("result" in changes["random_password.db"].after);
  assert.is(changes["terraform_data.app"].after_unknown.input?.password, true);
  // tofu ran the pinned version.
  assert.is(plan.terraform_version, readFileSync(path.join(repoRoot, "scripts/tool-versions.env"), "utf8").match(/^OPENTOFU_VERSION=(.*)$/m)![1]);
});

test.run();
