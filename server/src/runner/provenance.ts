import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../config.ts";
import type { AttemptProvenance } from "../domain/records.ts";
import type { ExecutionContext } from "./execution.ts";
import {
  DEFAULT_SANDBOX_LIMITS,
  DEFAULT_SECCOMP_FILTER,
  SANDBOX_BASE_PROFILE,
  SANDBOX_SOURCE_FILES,
} from "./sandbox.ts";
import { sha256Hex } from "../domain/canonical-json.ts";

/**
 * What an attempt runs on, recorded when it starts (run_attempts.provenance) and shown by the
 * review's evidence: the runner job, the StackShip build, the runner release, a digest of the
 * sandbox profile and of the OpenTofu binary. Anything that cannot be determined is null, and the
 * review says "not recorded".
 */

function git(args: string[]): string | null {
  try {
    const out = execFileSync("git", args, {
      cwd: REPO_ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 5000,
    }).trim();
    return out === "" ? null : out;
  } catch {
    return null;
  }
}

function fileDigest(path: string): string | null {
  try {
    return sha256Hex(readFileSync(path));
  } catch {
    return null;
  }
}

let build: { buildSha: string | null; runnerRelease: string | null; jobEngineBuild: string | null } | undefined;

function jobEngineBuild(): string | null {
  try {
    const { version } = JSON.parse(
      readFileSync(join(REPO_ROOT, "node_modules/graphile-worker/package.json"), "utf8"),
    ) as { version?: string };
    return version ? `graphile-worker@${version}` : null;
  } catch {
    return null;
  }
}

/** The StackShip build, determined once per process: STACKSHIP_BUILD_SHA (set by an image build), else the checkout's HEAD. */
export function buildIdentity(env: NodeJS.ProcessEnv = process.env): {
  buildSha: string | null;
  runnerRelease: string | null;
  jobEngineBuild: string | null;
} {
  if (!build) {
    const buildSha = env.STACKSHIP_BUILD_SHA?.trim() || git(["rev-parse", "HEAD"]);
    const runnerRelease =
      env.STACKSHIP_RUNNER_RELEASE?.trim() || git(["describe", "--tags", "--always", "--dirty"]) || buildSha;
    build = { buildSha, runnerRelease, jobEngineBuild: jobEngineBuild() };
  }
  return build;
}

// The source that turns a profile into bwrap's arguments (and the launcher inside the sandbox).
const SANDBOX_SOURCES = SANDBOX_SOURCE_FILES;

/** The SHA-256 of the sandbox profile an attempt runs under: base profile, seccomp filter, limits, bwrap argument source. */
export function sandboxProfileDigest(ctx: Pick<ExecutionContext, "sandboxLimits">): string {
  return sha256Hex(
    JSON.stringify({
      base_profile: SANDBOX_BASE_PROFILE,
      seccomp_filter: fileDigest(DEFAULT_SECCOMP_FILTER),
      limits: { ...DEFAULT_SANDBOX_LIMITS, ...(ctx.sandboxLimits ?? {}) },
      sources: SANDBOX_SOURCES.map(fileDigest),
    }),
  );
}

/** The provenance of an attempt starting now. */
export function attemptProvenance(ctx: ExecutionContext): AttemptProvenance {
  const { buildSha, runnerRelease, jobEngineBuild } = buildIdentity();
  return {
    jobId: ctx.jobId ?? null,
    buildSha,
    runnerRelease,
    sandboxProfileDigest: sandboxProfileDigest(ctx),
    opentofuBinaryDigest: fileDigest(join(ctx.toolsDir ?? join(REPO_ROOT, ".tools"), "bin", "tofu")),
    jobEngineBuild,
  };
}
