// Faults that lose nothing (issue 31, part 5): the filesystem of the SQLite database full while a
// plan writes its log (and everything else it records). The database lives on a small tmpfs
// mounted for the test (root only; counted as skipped otherwise), filled to the last byte while
// the plan runs; once a write has failed with SQLite's "database or disk is full", space comes
// back. Expected: the run ends in a recorded state, and the same process plans again without a
// restart. SQLite only: PostgreSQL's own disk is the cluster's (see postgres-restart.test.ts).
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createStackShipClient } from "../../../client/src/index.ts";
import { loadConfig } from "../../src/config.ts";
import { RunnerEngine } from "../../src/runner/engine.ts";
import { createStackShip } from "../../src/server.ts";
import { createOrganizationWithToken, createWorkspace } from "../support/factories.ts";
import { fixture, readLog, startRun, waitForPlanned, waitForStatus } from "../support/runs.ts";
import type { TestServer } from "../support/test-server.ts";
import { skipTest } from "../support/skips.ts";
import { fillFilesystem } from "../support/files.ts";

const test = suite("the database's filesystem full during a plan");

const title =
  "a plan whose log writes fail on a full database filesystem ends recorded with its reason; the same process plans again";
// Found by this test: when a phase failed because the database refused writes, runner/engine.ts
// `execute` awaited `handleLost` in its catch, that write failed too (SQLITE_FULL), and the
// unhandled rejection ended the whole process. The runner now keeps such an ending and records it
// at its next sweeps, once the database takes writes again.
if (process.getuid?.() !== 0) {
  skipTest(test, title, "mounting a tmpfs needs root");
} else {
  test(title, async () => {
    const mount = await mkdtemp(join(tmpdir(), "ss-dbfs-"));
    const dataDir = await mkdtemp(join(tmpdir(), "ss-dbfs-data-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=32m,mode=0700", "tmpfs", mount]);
    // A process that dies mid-test still leaves no mount behind.
    const unmountOnExit = () => execFileSync("umount", ["--lazy", mount]);
    process.once("exit", unmountOnExit);
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString("utf8"));
        done();
      },
    });
    try {
      const config = {
        ...loadConfig({}),
        dataDir,
        databaseUrl: `sqlite://${join(mount, "stackship.db")}`,
        bootstrapToken: "ss0.database-disk-full-bootstrap-token-0123456789",
        validateResponses: true,
        logLevel: "warn",
        artifactStore: { kind: "local" as const, directory: join(dataDir, "artifacts") },
      };
      const stackship = await createStackShip(config, { logger: pino({ level: "warn" }, sink) });
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors
      const http: Server = createServer(stackship.app.callback());
      await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
      const port = (http.address() as AddressInfo).port;
      const baseUrl = `http://127.0.0.1:${port}`;
      const runner = new RunnerEngine(
        {
          services: stackship.services,
          api: { host: "127.0.0.1", port },
          phaseTimeoutMs: 120_000,
          sandboxLimits: config.sandboxLimits,
        },
        { pollIntervalMs: 50, heartbeatIntervalMs: 500 },
      );
      await runner.start();
      const server = {
        baseUrl,
        dataDir,
        services: stackship.services,
        db: stackship.services.db,
        bootstrapToken: config.bootstrapToken,
        admin: createStackShipClient({ baseUrl, token: config.bootstrapToken }),
        v1: (token?: string) => createStackShipClient({ baseUrl, token }),
      } as unknown as TestServer;
      try {
        const { token, organizationName } = await createOrganizationWithToken(server, "full-db");
        const workspace = await createWorkspace(server, token, organizationName, { name: "full" });
        const run = await startRun(server, token, workspace.id, fixture("basic"));
        await waitForStatus(server, token, run.id, ["planning", "awaiting_approval", "errored"]);
        const filler = fillFilesystem(mount);
        // Wait for the first refused write (no fixed sleep): the process logs it.
        const deadline = Date.now() + 60_000;
        while (!lines.some((line) => /SQLITE_FULL|disk is full/.test(line))) {
          assert.ok(Date.now() < deadline, `no write failed for a full disk; logged:\n${lines.join("")}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        rmSync(filler);
        const ended = await waitForStatus(
          server,
          token,
          run.id,
          ["awaiting_approval", "errored", "planned_and_finished", "needs_recovery"],
          120_000,
        );
        assert.ok(["awaiting_approval", "errored"].includes(ended.attributes.status), ended.attributes.status);
        if (ended.attributes.status === "errored") {
          assert.ok(ended.attributes.status_reason, "the run says why it ended");
          // The plan's log says why (it was empty: the held log never reached the database), and
          // when the runner ended it for the refused write, it names the storage error.
          const log = await readLog(server, token, run.id, "plan");
          assert.ok(log.trim().length > 0, "the plan's log says why it ended");
          if (log.includes("The plan ended:")) assert.match(log, /SQLITE_FULL|disk is full/);
        }
        const next = await startRun(
          server,
          token,
          (await createWorkspace(server, token, organizationName, { name: "after" })).id,
          fixture("basic"),
        );
        await waitForPlanned(server, token, next.id);
      } finally {
        await runner.stop({ interrupt: true });
        await stackship.live.close();
        await new Promise<void>((resolve) => http.close(() => resolve()));
        http.closeAllConnections();
        await stackship.close();
      }
    } finally {
      process.off("exit", unmountOnExit);
      execFileSync("umount", ["--lazy", mount]);
      await rm(mount, { recursive: true, force: true });
      await rm(dataDir, { recursive: true, force: true });
    }
  });
}

test.run();
