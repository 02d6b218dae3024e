import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { apiOnlyEnv, spawnStackShip, type Spawned } from "../support/spawned.ts";

// `npm start` on a data directory with no user prints a one-time setup link; each start while no
// administrator exists prints a new one (the earlier one stops working); once the link has been
// used, no start prints one again.

const startup = suite("the setup link npm start prints");

const LINK = /(http:\/\/127\.0\.0\.1:\d+)\/setup\?token=(sst\.[\w-]+)$/;

async function started(env: Record<string, string>): Promise<{ process: Spawned; url: string }> {
  const process = spawnStackShip("main.ts", env);
  const [, url] = await process.line(/StackShip is listening on (http:\/\/\S+)/);
  // The cloud instructions come after the setup link (when there is one): the start has said everything.
  await process.line(/use StackShip from the tofu CLI/);
  return { process, url: url };
}

const setup = (url: string, token: string) =>
  fetch(`${url}/v1/setup`, {
    method: "POST",
    headers: { "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({
      data: {
        type: "setups",
        attributes: { token, email: "first@example.com", display_name: "First", password: "twelve chars" },
      },
    }),
  });

startup("a link each start while no administrator exists, the older one retired; none once setup is done", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "ss-setup-link-"));
  const env = apiOnlyEnv(dataDir);
  try {
    const first = await started(env);
    const firstLink = first.process.output.map((line) => line.trim().match(LINK)).find(Boolean);
    await first.process.kill("SIGTERM");
    assert.ok(firstLink, `the first start printed a setup link:\n${first.process.output.join("\n")}`);
    assert.is(firstLink[1], first.url, "the link is on the server's own address");
    assert.ok(
      first.process.output.some((line) => /valid until .*single use/.test(line)),
      "the link says it is single use and when it expires",
    );

    const second = await started(env);
    try {
      const secondLink = second.process.output.map((line) => line.trim().match(LINK)).find(Boolean);
      assert.ok(secondLink, "a start while no administrator exists prints a link again");
      assert.is.not(secondLink[2], firstLink[2], "a new token each start");
      assert.is((await setup(second.url, firstLink[2])).status, 422, "the earlier start's link no longer works");
      assert.is((await setup(second.url, secondLink[2])).status, 201);
    } finally {
      await second.process.kill("SIGTERM");
    }

    const third = await started(env);
    await third.process.kill("SIGTERM");
    assert.not.ok(
      third.process.output.some((line) => line.includes("/setup?token=")),
      `an administrator exists: no link printed:\n${third.process.output.join("\n")}`,
    );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

startup.run();
