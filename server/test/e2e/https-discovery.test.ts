import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ensureLocalTls } from "../../src/http/tls.ts";
import { listenOverHttps } from "../support/https-listener.ts";
import { cliProject, testEachCliServer, transcript } from "./cli.ts";

const https = suite("tofu over HTTPS service discovery, trusting the generated local CA");

testEachCliServer(
  https,
  "discovers the API at https://localhost:<port>, creates the workspace at init and plans with https upload and log URLs",
  async (server) => {
    // The same services behind an HTTPS listener, as the embedded default serves them.
    const listener = await listenOverHttps(server);
    const { tls, port } = listener;
    assert.ok(tls.created);
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
      await listener.close();
    }
  },
  { runner: true },
);

https.run();
