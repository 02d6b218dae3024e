// Shared by github-push-runs.test.ts and github-push-refusals.test.ts: a push suite with its GitHub
// API double, a connected repository, and a push delivered and settled.
import { suite } from "uvu";
import { GitHubDouble } from "./github-double.ts";
import { deliver, newSha, pushPayload, settled } from "./github.ts";
import { githubServerOptions } from "./github-source.ts";
import type { TestServer } from "./test-server.ts";

/** A suite whose GitHub API double starts before its tests and stops after them, with the server options for it. */
export function pushSuite(name: string) {
  const double = new GitHubDouble();
  const push = suite(name);
  push.before(async () => {
    await double.start();
  });
  push.after(() => double.stop());
  return { double, push, GITHUB: githubServerOptions(double) };
}

type Connected = { repository: string; installationId: number };

/** A push of `sha` to the connected repository, delivered (not waited for). */
export function deliverPush(
  server: TestServer,
  double: GitHubDouble,
  connected: Connected,
  sha: string,
  options?: Parameters<typeof pushPayload>[3],
) {
  return deliver(server, double, "push", pushPayload(connected.repository, connected.installationId, sha, options));
}

/** A push of `sha` to the connected repository, delivered and then settled. */
export async function pushSettled(
  server: TestServer,
  double: GitHubDouble,
  connected: { repository: string; installationId: number },
  sha: string,
  options?: Parameters<typeof pushPayload>[3],
) {
  return settled(server, (await deliverPush(server, double, connected, sha, options)).deliveryId);
}

/** `size` bytes that do not compress. */
export function newBytes(size: number): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i += 20) Buffer.from(newSha(), "hex").copy(out, i);
  return out;
}
