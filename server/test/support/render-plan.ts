// The render-plan test tool (server/test/tools/render-plan/main.go): the pinned OpenTofu's own
// `jsonformat` decoder and renderer, the code the CLI runs on json-output-redacted. Built on first
// use into .tools/build/render-plan against the module OpenTofu's build already downloaded
// (GOPROXY=off, its go.sum) with that build's Go flags (which scripts/bootstrap-tools records in
// .tools/build/go-build.env), so it costs seconds once tofu was built.
// Both test shards may build it at once: each builds in its own directory and renames the binary
// into place, so neither sees the other's half-written go.mod or binary.
import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/config.ts";

const SOURCE = join(REPO_ROOT, "server/test/tools/render-plan/main.go");
const BUILD = join(REPO_ROOT, ".tools/build/render-plan");
const BINARY = join(BUILD, "render-plan");
const GO_BUILD_ENV = join(REPO_ROOT, ".tools/build/go-build.env");

let built: string | null | undefined;

/** Why the tool cannot be built here, or null once it is (cached by the source's mtime). */
export function renderPlanUnavailable(): string | null {
  if (built !== undefined) return built;
  built = build();
  return built;
}

function build(): string | null {
  try {
    if (existsSync(BINARY) && statSync(BINARY).mtimeMs >= statSync(SOURCE).mtimeMs) return null;
    const version = readFileSync(join(REPO_ROOT, ".tools/bin/.tofu.version"), "utf8").trim();
    if (!existsSync(GO_BUILD_ENV))
      return "scripts/bootstrap-tools has not recorded its Go build flags (.tools/build/go-build.env)";
    // The flags and cgo setting of the tofu build, so that Go's build cache already holds every
    // OpenTofu package this imports: only main.go is compiled.
    const goBuild = Object.fromEntries(
      readFileSync(GO_BUILD_ENV, "utf8")
        .split("\n")
        .filter((line) => line.includes("="))
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
    const tofuBuild = join(REPO_ROOT, `.tools/build/tofu-${version}`);
    if (!existsSync(join(tofuBuild, "go.sum")))
      return "OpenTofu was not built from source here (.tools/build/tofu-*/go.sum missing)";
    // Under OpenTofu's module path, so it may import OpenTofu's internal packages.
    const replace = readFileSync(join(tofuBuild, "go.mod"), "utf8")
      .split("\n")
      .filter((line) => line.startsWith("replace "))
      .join("\n");
    const work = `${BUILD}.${process.pid}`;
    mkdirSync(work, { recursive: true });
    try {
      writeFileSync(
        join(work, "go.mod"),
        `module github.com/opentofu/opentofu/stackshiprenderplan\n\ngo 1.26\n\nrequire github.com/opentofu/opentofu v${version}\n\n${replace}\n`,
      );
      copyFileSync(join(tofuBuild, "go.sum"), join(work, "go.sum"));
      copyFileSync(SOURCE, join(work, "main.go"));
      execFileSync("go", ["build", "-o", "render-plan", "."], {
        cwd: work,
        env: { ...process.env, ...goBuild, GOPROXY: "off" },
        stdio: ["ignore", "ignore", "pipe"],
        timeout: 600_000,
      });
      mkdirSync(BUILD, { recursive: true });
      renameSync(join(work, "render-plan"), BINARY);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    return null;
  } catch (error) {
    return `render-plan could not be built: ${(error as Error).message.split("\n")[0]}`;
  }
}

/** The text the CLI renders from a redacted plan document; throws with the tool's error when it does not decode. */
export function renderRedacted(document: string | Buffer): string {
  const result = spawnSync(BINARY, ["redacted"], { input: document, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`render-plan redacted: ${result.stderr}`);
  return result.stdout;
}

/** The same rendering from the unredacted plan JSON and provider schemas (files), as `tofu plan` shows locally. */
export function renderLocal(planJsonFile: string, schemasFile: string): string {
  const result = spawnSync(BINARY, ["local", planJsonFile, schemasFile], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`render-plan local: ${result.stderr}`);
  return result.stdout;
}
