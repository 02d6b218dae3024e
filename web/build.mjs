// Builds the dashboard with esbuild into web/dist: content-hashed bundles under dist/assets/ and
// an index.html naming them. The server serves dist/ at `/` (hashed files immutable, index.html
// no-cache).
//
//   node web/build.mjs             build once
//   node web/build.mjs --if-stale  build only when a source is newer than dist/index.html
//   node web/build.mjs --watch     rebuild on every change (npm run dev:web)
import { context, build } from "esbuild";
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const web = dirname(fileURLToPath(import.meta.url));
const root = join(web, "..");
const dist = join(web, "dist");
const sources = [join(web, "src"), join(root, "client/src"), join(root, "generated/v1/client"), join(web, "build.mjs")];

/** esbuild options shared by the one-shot build, the watch build and the benchmark. */
export const buildOptions = {
  entryPoints: { app: join(web, "src/main.ts") },
  bundle: true,
  format: "esm",
  target: "es2022",
  platform: "browser",
  minify: true,
  sourcemap: "linked",
  outdir: join(dist, "assets"),
  entryNames: "[name]-[hash]",
  chunkNames: "[name]-[hash]",
  metafile: true,
  logLevel: "warning",
  legalComments: "none",
};

function indexHtml(script) {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>StackShip</title>
<link rel="icon" href="data:,">
<style>html,body{margin:0;min-height:100%}body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif}</style>
<script type="module" src="/assets/${script}"></script>
</head>
<body>
<ss-app></ss-app>
</body>
</html>
`;
}

/** Writes <out>/index.html for a finished build and removes bundles older builds left behind. */
function finish(result, out = dist) {
  const names = Object.keys(result.metafile.outputs).map((file) => basename(file));
  const script = names.find((name) => /^app-[A-Z0-9]+\.js$/.test(name));
  if (!script) throw new Error(`the build produced no app bundle: ${names.join(", ")}`);
  for (const file of readdirSync(join(out, "assets")))
    if (!names.includes(file)) rmSync(join(out, "assets", file), { force: true });
  writeFileSync(join(out, "index.html"), indexHtml(script));
  return script;
}

function newestSource(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newestSource(join(path, entry))));
}

/** Whether dist/index.html is missing or older than any source. */
export function isStale() {
  const index = join(dist, "index.html");
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return sources.some((source) => existsSync(source) && newestSource(source) > built);
}

/** Builds once into `out` (web/dist by default; the e2e harness uses a private folder); returns the bundle's file name. */
export async function buildDashboard(out = dist) {
  mkdirSync(join(out, "assets"), { recursive: true });
  const result = await build({ ...buildOptions, outdir: join(out, "assets"), absWorkingDir: root });
  return finish(result, out);
}

async function main(mode) {
  if (mode === "--watch") {
    mkdirSync(join(dist, "assets"), { recursive: true });
    const ctx = await context({
      ...buildOptions,
      absWorkingDir: root,
      logLevel: "info",
      plugins: [
        {
          name: "index-html",
          setup(b) {
            b.onEnd((result) => {
              if (result.errors.length > 0) return;
              const script = finish(result);
              process.stdout.write(`[dashboard] built ${script} at ${new Date().toISOString()}\n`);
            });
          },
        },
      ],
    });
    await ctx.watch();
    process.stdout.write(
      "[dashboard] watching web/src, client/src and generated/v1/client; the server serves web/dist (reload the page)\n",
    );
  } else if (mode === "--if-stale" && !isStale()) {
    process.stdout.write("[dashboard] web/dist is up to date\n");
  } else {
    const started = Date.now();
    const script = await buildDashboard();
    process.stdout.write(`[dashboard] built web/dist (${script}) in ${Date.now() - started} ms\n`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv[2]).catch((error) => {
    process.stderr.write(`[dashboard] build failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
