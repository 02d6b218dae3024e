import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { tfeSurface } from "../../src/api/tfe/index.ts";
import { v1Surface } from "../../src/api/v1/index.ts";
import { buildApp } from "../../src/http/app.ts";
import { ensureLocalTls } from "../../src/http/tls.ts";
import { cliProject, testEachCliServer, transcript } from "./cli.ts";

const https = suite("tofu over HTTPS service discovery, trusting the generated local CA");

testEachCliServer(
  https,
  "discovers the API at https://localhost:<port>, creates the workspace at init and plans with https upload and log URLs",
  async (server) => {
    const tls = ensureLocalTls(server.dataDir);
    assert.ok(tls.created);
    // The same services behind an HTTPS listener, as the embedded default serves them.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors (ctx.onerror)
    const listener: Server = createServer(
      { cert: tls.cert, key: tls.key },
      buildApp(server.services, [tfeSurface, v1Surface]).callback(),
    );
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const port = (listener.address() as AddressInfo).port;
    const project = await cliProject(server, {
      https: { port, caBundleFile: tls.bundleFile, cert: tls.cert, key: tls.key },
    });
    try {
      const init = await project.tofu(["init"]);
      assert.is(init.code, 0, transcript(init));
      assert.ok(await project.workspace(), "tofu init created the workspace");

      const plan = await project.tofu(["plan"]);
      assert.is(plan.code, 0, transcript(plan));
      assert.match(plan.stdout, "Plan: 1 to add, 0 to change, 0 to destroy.", transcript(plan));
      const [run] = await project.runs();
      assert.is(run.status, "planned_and_finished");

      // A second start reuses the CA and certificate.
      assert.is(ensureLocalTls(server.dataDir).created, false);
    } finally {
      await project.cleanup();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      listener.closeAllConnections();
    }
  },
  { runner: true },
);

https.run();
