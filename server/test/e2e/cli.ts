// Drives the real `tofu` binary (.tools/bin/tofu) against a test server through a `cloud` block.
// Discovery is skipped with a CLI-config `host` block (contract §2.4 option 2), so the whole API,
// upload and log URLs included, is plain HTTP on loopback.
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/config.ts";
import type { Test } from "uvu";
import * as assert from "uvu/assert";
import type { Run, Workspace } from "../../src/domain/records.ts";
import { createOrganizationWithToken, type Role } from "../support/factories.ts";
import { testDialects } from "../support/databases.ts";
import { withTestServer, type TestServer, type TestServerOptions } from "../support/test-server.ts";
import { fixture, startRun, waitForStatus } from "../support/runs.ts";
import { describeViolations, startContractProxy, type ContractProxy } from "./contract-proxy.ts";

/** A test server, possibly in contract mode: every CLI project then talks to it through prism. */
export type CliServer = TestServer & { contract?: ContractProxy[] };

/**
 * Registers a CLI scenario: once per test dialect against the server directly, and once more
 * (SQLite only, to bound CI time: prism is an extra process and an extra hop per request, and the
 * contract does not depend on the database) with the CLI talking to the server through
 * `prism proxy --errors` on the bundled spec/tfe (see contract-proxy.ts for which paths are
 * validated). A response prism refuses fails the case with prism's explanation, even if the
 * scenario's own assertions passed.
 *
 * STACKSHIP_TEST_PRISM=skip leaves the prism pass out, =only runs nothing else;
 * STACKSHIP_TEST_PRISM_TRACE=1 prints each case's duration and what went through prism.
 */
export function testEachCliServer<T>(
  test: Test<T>,
  title: string,
  fn: (server: CliServer) => Promise<void>,
  options: TestServerOptions = {},
): void {
  const mode = process.env.STACKSHIP_TEST_PRISM ?? "";
  const trace = Boolean(process.env.STACKSHIP_TEST_PRISM_TRACE);
  const timed = (name: string, body: () => Promise<void>) =>
    test(name, async () => {
      const started = Date.now();
      try {
        await body();
      } finally {
        if (trace) console.error(`${name}: ${Date.now() - started} ms`);
      }
    });
  if (mode !== "only") {
    for (const dialect of testDialects()) timed(`${title} [${dialect}]`, () => withTestServer(dialect, fn, options));
  }
  if (mode === "skip") return;
  timed(`${title} [sqlite, through prism]`, () =>
    withTestServer(
      "sqlite",
      async (server) => {
        const contract: ContractProxy[] = [];
        let failure: unknown = null;
        try {
          await fn({ ...server, contract });
        } catch (error) {
          failure = error;
        } finally {
          await Promise.all(contract.map((proxy) => proxy.close()));
        }
        if (trace) {
          for (const proxy of contract)
            console.error(
              `through prism:\n  ${proxy.validated.join("\n  ")}\ndirect:\n  ${proxy.direct.join("\n  ")}\n${proxy.output()}`,
            );
        }
        const refused = contract.filter((proxy) => proxy.violations.length > 0);
        if (refused.length > 0) {
          const scenario = failure instanceof Error ? `\n--- the scenario's own failure ---\n${failure.message}` : "";
          throw new Error(`${refused.map(describeViolations).join("\n")}${scenario}`);
        }
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what was caught, as it was
        if (failure) throw failure;
        if (contract.length > 0 && contract.every((proxy) => proxy.validated.length === 0)) {
          throw new Error("contract mode: no request went through prism");
        }
      },
      options,
    ),
  );
}

/** The pinned tofu binary. */
export const TOFU = join(REPO_ROOT, ".tools/bin/tofu");
/** The Terraform CLI, a client like tofu (scripts/bootstrap-tools --with-test-tools builds it). */
export const TERRAFORM = join(REPO_ROOT, ".tools/bin/terraform");

/** The configuration every CLI scenario plans: one built-in resource, no providers to download. */
export const CONFIGURATION = `resource "terraform_data" "greeting" {
  input = "hello"
}

output "greeting" {
  value = terraform_data.greeting.output
}
`;

/** What one tofu invocation did. */
export interface TofuResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A working directory with a `cloud` block pointed at the test server, and the CLI config to reach it. */
export interface CliProject {
  dir: string;
  organizationName: string;
  workspaceName: string;
  token: string;
  /** Runs `tofu <args>` there with a cleared environment; `stdin` is written and closed. */
  tofu(args: string[], options?: { stdin?: string; timeoutMs?: number }): Promise<TofuResult>;
  /** The workspace as stored (undefined until `tofu init` created it). */
  workspace(): Promise<Workspace | undefined>;
  /** The workspace's runs, newest first. */
  runs(): Promise<Run[]>;
  cleanup(): Promise<void>;
}

/** Sets up an organization, a token of `role` and a project directory using it. */
export async function cliProject(
  server: CliServer,
  options: {
    role?: Role;
    workspaceName?: string;
    project?: string;
    configuration?: string;
    /** An HTTPS listener of the server; `cert` and `key` let the contract mode serve the same certificate in front of prism. */
    https?: { port: number; caBundleFile: string; cert?: string | Buffer; key?: string | Buffer };
    /** Select workspaces by these tags (the tags strategy) instead of by name. */
    tags?: string[];
    /** The CLI binary `tofu()` runs: OpenTofu unless said (TERRAFORM). */
    cli?: string;
  } = {},
): Promise<CliProject> {
  const { organizationName, organizationId, token } = await createOrganizationWithToken(
    server,
    "acme",
    options.role ?? "admin",
  );
  const workspaceName = options.workspaceName ?? "app";
  let port = options.https ? String(options.https.port) : new URL(server.baseUrl).port;
  if (server.contract) {
    const { https } = options;
    if (https && (!https.cert || !https.key))
      throw new Error("cliProject: contract mode over HTTPS needs the listener's cert and key");
    const proxy = await startContractProxy(
      https
        ? {
            upstream: `https://127.0.0.1:${https.port}`,
            tls: { cert: https.cert!, key: https.key!, caBundleFile: https.caBundleFile },
          }
        : { upstream: server.baseUrl },
    );
    server.contract.push(proxy);
    port = String(proxy.port);
  }
  const host = `localhost:${port}`;
  const root = await mkdtemp(join(tmpdir(), "ss-cli-"));
  const dir = join(root, "project");
  const home = join(root, "home");
  await import("node:fs/promises").then((fs) => Promise.all([fs.mkdir(dir), fs.mkdir(home)]));
  const cliConfig = join(root, "tofu.rc");
  // Over HTTPS the CLI discovers the services itself (GET /.well-known/terraform.json); over
  // HTTP a `host` block names them, because discovery is HTTPS only.
  const hostBlock = options.https
    ? ""
    : `host "${host}" {\n  services = {\n    "tfe.v2" = "http://${host}/api/v2/"\n  }\n}\n\n`;
  await writeFile(cliConfig, `${hostBlock}credentials "${host}" {\n  token = "${token}"\n}\n`);
  await writeFile(
    join(dir, "main.tf"),
    `terraform {\n  cloud {\n    hostname     = "${host}"\n    organization = "${organizationName}"\n    workspaces {\n      ${options.tags ? `tags = ${JSON.stringify(options.tags)}` : `name = "${workspaceName}"`}\n${options.project ? `      project = "${options.project}"\n` : ""}    }\n  }\n}\n\n${options.configuration ?? CONFIGURATION}`,
  );
  const env: Record<string, string> = {
    PATH: "/usr/bin:/bin",
    HOME: home,
    TF_CLI_CONFIG_FILE: cliConfig,
    CHECKPOINT_DISABLE: "1",
    TF_LOG: process.env.STACKSHIP_TEST_TF_LOG ?? "",
  };
  // Go on Linux reads SSL_CERT_FILE instead of the system store (contract §2.4).
  if (options.https) env.SSL_CERT_FILE = options.https.caBundleFile;
  return {
    dir,
    organizationName,
    workspaceName,
    token,
    tofu: (args, { stdin = "", timeoutMs = 120_000 } = {}) =>
      new Promise<TofuResult>((resolve, reject) => {
        // -no-color goes after the (sub)command: `tofu state -no-color pull` would print usage.
        const command = args[0] === "state" || args[0] === "workspace" ? 2 : 1;
        const child = spawn(options.cli ?? TOFU, [...args.slice(0, command), "-no-color", ...args.slice(command)], {
          cwd: dir,
          env,
          stdio: ["pipe", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(
            new Error(`tofu ${args.join(" ")} timed out after ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`),
          );
        }, timeoutMs);
        child.on("error", (error) => {
          clearTimeout(timer);
          reject(error);
        });
        child.on("close", (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
        child.stdin.end(stdin);
      }),
    workspace: () => server.services.stores.workspaces.getByName(organizationId, workspaceName),
    runs: async () => {
      const workspace = await server.services.stores.workspaces.getByName(organizationId, workspaceName);
      if (!workspace) return [];
      return (await server.services.stores.runs.listByWorkspace(workspace.id, { limit: 100 })).runs;
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** A failure message with everything tofu printed. */
export function transcript(result: TofuResult): string {
  return `exit ${result.code}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
}

/**
 * Registers a CLI scenario (as testEachCliServer) on a project whose `tofu init` succeeded, so the
 * scenario states only what it does after init; the project is cleaned up however it ends.
 */
export function testEachInitializedProject<T>(
  test: Test<T>,
  title: string,
  fn: (server: CliServer, project: CliProject) => Promise<void>,
  options: TestServerOptions & {
    project?: Parameters<typeof cliProject>[1];
    beforeInit?: (project: CliProject) => Promise<void>;
  } = {},
): void {
  const { project: projectOptions, beforeInit, ...serverOptions } = options;
  testEachCliServer(
    test,
    title,
    async (server) => {
      const project = await cliProject(server, projectOptions);
      try {
        await beforeInit?.(project);
        const init = await project.tofu(["init"]);
        assert.is(init.code, 0, transcript(init));
        await fn(server, project);
      } finally {
        await project.cleanup();
      }
    },
    serverOptions,
  );
}

/** Another run (the basic fixture) in the project's workspace, awaiting approval, so it holds the workspace lock. */
export async function holdWorkspace(server: CliServer, project: CliProject) {
  const workspace = (await project.workspace())!;
  const holder = await startRun(server, project.token, workspace.id, fixture("basic"));
  await waitForStatus(server, project.token, holder.id, ["awaiting_approval"]);
  return { workspace, holder };
}

/** The project's workspace has no state and no lock: nothing was applied or left holding it. */
export async function expectNothingApplied(server: CliServer, project: CliProject): Promise<void> {
  const workspace = await project.workspace();
  assert.is(await server.services.stores.stateVersions.current(workspace!.id), undefined);
  assert.is(await server.services.stores.workspaceLocks.current(workspace!.id), undefined);
}
