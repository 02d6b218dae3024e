// The sandbox's isolation against real bubblewrap: bwrap's flags, what the command sees inside
// (read-only root, own PID namespace, hostname, only the given environment, no capabilities), that
// environment values stay off host command lines, and the network (only the API channel reaches the
// API). Files in and out, output, marks, the plan-diff and tofu are sandbox.test.ts; the uid/seccomp
// confinement cases sandbox-confinement.test.ts.
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openApiChannel, SANDBOX_API_PORT } from "./api-channel.ts";
import {
  bwrapArgs,
  isSandboxId,
  newSandboxId,
  SANDBOX_BASE_PROFILE,
  type SandboxOptions,
  type SandboxResult,
} from "./sandbox.ts";
import { attemptDirectoryPerCase, runCollecting, type CollectedResult } from "./sandbox-test-support.ts";

const node = process.execPath;

const test = suite("sandbox: isolation");
const tmpDir = attemptDirectoryPerCase(test, "stackship-sandbox-isolation-test-");

/** Runs in the sandbox, collecting stdout as text; attempts live under the case's directory. */
const run = (options: SandboxOptions): Promise<CollectedResult> => runCollecting({ tmpDir: tmpDir(), ...options });

/** Runs a node program inside the sandbox and parses the JSON it prints. */
async function probe<T = unknown>(
  program: string,
  options: Partial<SandboxOptions> = {},
): Promise<{ result: SandboxResult; value: T; stderr: string }> {
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
  for (const flag of [
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup",
    "--unshare-net",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
  ]) {
    assert.ok(args.includes(flag), flag);
  }
  const joined = args.join(" ");
  // As root: every capability but the three setpriv needs to switch uid, and setpriv clears those.
  assert.ok(joined.includes("--cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID --cap-add CAP_SETPCAP"));
  assert.ok(joined.includes("--seccomp 4"));
  assert.ok(joined.includes("--bind /host/fs/tmp /tmp"));
  assert.ok(
    joined.includes(
      "/usr/bin/setpriv --reuid=3000000123 --rgid=3000000123 --egid=65534 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- /usr/bin/node",
    ),
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
  assert.equal(args.slice(-6), [
    "/usr/bin/node",
    "/run/stackship/launcher.mjs",
    "--api-socket",
    "/run/stackship/channel/api.sock",
    "--api-port",
    "7480",
  ]);
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
  const { result, value } = await probe<Confinement>(program, {
    name: "ss-plan-test-1",
    env: { TF_IN_AUTOMATION: "1", SECRET_LIKE: "x y z" },
  });
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
  assert.equal(value.env, {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: "/work",
    TF_IN_AUTOMATION: "1",
    SECRET_LIKE: "x y z",
  });
  assert.is(value.capEff, "0000000000000000");
  assert.is(value.hostFiles, "ENOENT");
  // Only what a run needs is mounted: no /root, /home, /var, /srv, /mnt or the repository.
  const unexpected = value.home.filter(
    (d: string) =>
      !["bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run", "sbin", "tmp", "usr", "work"].includes(
        d,
      ),
  );
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
    const result = await run({
      argv: ["sh", "-c", 'sleep 0.4; test "$TOKEN" = "$EXPECTED"'],
      env: { TOKEN: secret, EXPECTED: secret },
    });
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
    const { result, value } = await probe<
      Record<"api" | "hostService" | "hostApiDirect" | "otherLoopbackPort" | "postgres" | "outside", string>
    >(program, {
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
  const channel = await openApiChannel({
    socketPath: path.join(channelDir, "api.sock"),
    target: { host: "127.0.0.1", port: apiPort },
  });
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
test.run();
