import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createOrganizationWithToken, createVariable, createWorkspace } from "../support/factories.ts";
import { environOf, ourSandboxes, processTree, runningSandboxProcesses, sandboxNameOf } from "../support/processes.ts";
import { startRun, waitToSettle } from "../support/runs.ts";
import { testDialects } from "../support/databases.ts";
import { withTestServer } from "../support/test-server.ts";

const warm = suite("warm plan sandboxes");

for (const dialect of testDialects()) {
  warm(
    `each plan takes a pre-started sandbox of its own, gets the run's env only then, and engine stop leaves no sandbox running [${dialect}]`,
    async () => {
      const canary = `warm-env-canary-${Date.now()}`;
      const seen = new Set<string>();
      await withTestServer(
        dialect,
        async (server) => {
          // One sandbox per slot boots as the runner starts, before any run exists.
          const deadline = Date.now() + 20_000;
          while (ourSandboxes().length < 2 && Date.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 50));
          const idle = ourSandboxes();
          assert.is(idle.length, 2, "one warm sandbox per runner slot");
          const idleNames = idle.map((pid) => sandboxNameOf(pid)!);
          for (const name of idleNames) seen.add(name);

          const { token, organizationName } = await createOrganizationWithToken(server, "acme");
          const workspace = await createWorkspace(server, token, organizationName, { name: "warm" });
          await createVariable(server, token, workspace.id, { key: "WARM_CANARY", value: canary, category: "env" });
          const config = { "main.tf": 'resource "terraform_data" "x" {}\n' };
          const attempts = [];
          for (let i = 0; i < 3; i++) {
            const run = await startRun(server, token, workspace.id, config, "speculative");
            await waitToSettle(server, token, run.id, "planned_and_finished");
            const [attempt] = await server.services.stores.attempts.listByRun(run.id);
            assert.ok(
              await server.services.stores.artifacts.forRun(run.id, "plan_diff"),
              "the launcher built the plan-diff",
            );
            attempts.push(attempt);
          }
          const ids = attempts.map((a) => a.sandboxId!);
          assert.is(new Set(ids).size, 3, "every attempt ran in a sandbox of its own");
          for (const attempt of attempts) {
            assert.is(attempt.sandboxName, attempt.sandboxId, "a warm sandbox is named by its id");
            seen.add(attempt.sandboxId!);
          }
          // The first two plans took the sandboxes that were waiting before any run existed.
          assert.ok(idleNames.includes(ids[0]), JSON.stringify([idleNames, ids]));
          // The used sandboxes are gone; their replacements wait.
          assert.equal(runningSandboxProcesses(new Set(ids)), []);
          // The replacements hold nothing of the runs (the env goes to a command only at its handoff).
          for (const pid of ourSandboxes()) {
            seen.add(sandboxNameOf(pid)!);
            for (const inside of processTree(pid))
              assert.not.ok(environOf(inside).some((entry) => entry.includes(canary)));
          }
        },
        { runner: true },
      );
      // The engine stopped with the server: nothing of any sandbox it started still runs.
      assert.equal(runningSandboxProcesses(seen), []);
    },
  );
}

warm.run();
