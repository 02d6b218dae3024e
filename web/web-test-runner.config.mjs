// Component tests of the dashboard (web/src/**/*.test.ts) in Debian's Chromium through
// playwright-core: `npx web-test-runner --config web/web-test-runner.config.mjs` from the root
// (npm test runs it through scripts/run-tests.mjs). TypeScript (standard decorators) is compiled by esbuild.
import { esbuildPlugin } from "@web/dev-server-esbuild";
import { playwrightLauncher } from "@web/test-runner-playwright";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const web = dirname(fileURLToPath(import.meta.url));
const executablePath = process.env.STACKSHIP_CHROMIUM || "/usr/lib/chromium/chromium";

export default {
  rootDir: join(web, ".."),
  files: [join(web, "src/**/*.test.ts")],
  nodeResolve: { exportConditions: ["browser", "development"] },
  plugins: [esbuildPlugin({ ts: true, target: "es2022", tsconfig: join(web, "tsconfig.json") })],
  browsers: [
    playwrightLauncher({
      product: "chromium",
      launchOptions: {
        executablePath,
        headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
      },
    }),
  ],
  concurrency: 1,
  // A test fails past 30 s; its waits (`until`) give up after 10 s each, naming what they waited for.
  testFramework: { config: { timeout: 30_000 } },
  testsFinishTimeout: 120000,
};
