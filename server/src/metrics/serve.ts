import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { renderMetrics } from "./database-gauges.ts";
import { METRICS_CONTENT_TYPE } from "./registry.ts";

/**
 * A runner-only process's own scrape endpoint (it has no API): GET /metrics on `port` (0 = any
 * free port) of `host`, this process's counters and histograms only; anything else is 404.
 */
export async function serveRunnerMetrics(host: string, port: number): Promise<{ server: Server; port: number }> {
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (path !== "/metrics" || (request.method !== "GET" && request.method !== "HEAD")) {
      response
        .writeHead(404, { "Content-Type": "text/plain; charset=utf-8" })
        .end("Only GET /metrics is served here.\n");
      return;
    }
    renderMetrics().then(
      (text) =>
        response
          .writeHead(200, { "Content-Type": METRICS_CONTENT_TYPE })
          .end(request.method === "HEAD" ? undefined : text),
      () =>
        response
          .writeHead(500, { "Content-Type": "text/plain; charset=utf-8" })
          .end("The metrics could not be collected.\n"),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  return { server, port: (server.address() as AddressInfo).port };
}
