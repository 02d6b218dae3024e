// The test server's services behind an HTTPS listener with the local CA's certificate, as the
// embedded default serves them when STACKSHIP_HTTPS_PORT is set.
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tfeSurface } from "../../src/api/tfe/index.ts";
import { v1Surface } from "../../src/api/v1/index.ts";
import type { Services } from "../../src/commands/services.ts";
import { buildApp } from "../../src/http/app.ts";
import { ensureLocalTls, type LocalTls } from "../../src/http/tls.ts";

export interface HttpsListener {
  /** The local CA and server certificate the listener presents (created on first use). */
  tls: LocalTls;
  port: number;
  close(): Promise<void>;
}

/** Listens on an ephemeral 127.0.0.1 port; `close` ends open connections too. */
export async function listenOverHttps(server: { services: Services; dataDir: string }): Promise<HttpsListener> {
  const tls = ensureLocalTls(server.dataDir);
  const app = buildApp(server.services, [tfeSurface, v1Surface]);
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback catches its own errors (ctx.onerror)
  const listener: Server = createServer({ cert: tls.cert, key: tls.key }, app.callback());
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  return {
    tls,
    port: (listener.address() as AddressInfo).port,
    async close() {
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      listener.closeAllConnections();
    },
  };
}
