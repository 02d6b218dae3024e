import type { Run } from "./records.ts";

/**
 * Pure rules of the GitHub App source pipeline: which pushes change a workspace, what a pull
 * request is, and what the check run on GitHub says about a run. No I/O.
 */

/** GitHub puts at most this many commits in a push payload; a push with more may change anything. */
export const PUSH_PAYLOAD_COMMIT_LIMIT = 20;

/** One step of a compiled glob. */
type GlobToken =
  | { kind: "literal"; char: string }
  /** `?`: one character other than `/`. */
  | { kind: "one" }
  /** `*`: any run of characters other than `/`. */
  | { kind: "segment" }
  /** `**` not followed by `/`: any run of characters. */
  | { kind: "any" }
  /** `**` followed by `/`: nothing, or any run of characters ending with `/`. */
  | { kind: "directories" };

/** A glob (`*` within a segment, `**` across segments, `?` one character) compiled for matchGlob. */
export function compileGlob(glob: string): GlobToken[] {
  const tokens: GlobToken[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*" && glob[i + 1] === "*") {
      if (glob[i + 2] === "/") {
        tokens.push({ kind: "directories" });
        i += 2;
      } else {
        tokens.push({ kind: "any" });
        i += 1;
      }
    } else if (c === "*") tokens.push({ kind: "segment" });
    else if (c === "?") tokens.push({ kind: "one" });
    else tokens.push({ kind: "literal", char: c });
  }
  return tokens;
}

/**
 * Whether `path` matches the compiled glob: a simulation of the glob's automaton over the set of
 * positions it may be at, one character of the path at a time, so the time is at most the
 * product of the two lengths whatever the pattern (no backtracking: twelve `**` against a deep
 * path cost the same as one).
 */
export function matchGlob(tokens: readonly GlobToken[], path: string): boolean {
  const m = tokens.length;
  // at[i]: before token i; inside[i]: within a `**/` (token i) that has consumed characters and
  // must still end with a `/`.
  let at = new Uint8Array(m + 1);
  let inside = new Uint8Array(m);
  let nextAt = new Uint8Array(m + 1);
  let nextInside = new Uint8Array(m);
  // A token that may match nothing leads on to the next one (in order, so chains close at once).
  const close = (set: Uint8Array) => {
    for (let i = 0; i < m; i++) {
      const kind = tokens[i].kind;
      if (set[i] && (kind === "segment" || kind === "any" || kind === "directories")) set[i + 1] = 1;
    }
  };
  at[0] = 1;
  close(at);
  for (const c of path) {
    nextAt.fill(0);
    nextInside.fill(0);
    let alive = false;
    for (let i = 0; i < m; i++) {
      const token = tokens[i];
      if (token.kind === "directories") {
        if (at[i] || inside[i]) {
          nextInside[i] = 1;
          if (c === "/") nextAt[i + 1] = 1;
        }
        continue;
      }
      if (!at[i]) continue;
      switch (token.kind) {
        case "literal":
          if (token.char === c) nextAt[i + 1] = 1;
          break;
        case "one":
          if (c !== "/") nextAt[i + 1] = 1;
          break;
        case "segment":
          if (c !== "/") nextAt[i] = 1;
          break;
        case "any":
          nextAt[i] = 1;
          break;
      }
    }
    close(nextAt);
    for (let i = 0; i <= m && !alive; i++) if (nextAt[i] || (i < m && nextInside[i])) alive = true;
    if (!alive) return false;
    [at, nextAt] = [nextAt, at];
    [inside, nextInside] = [nextInside, inside];
  }
  return at[m] === 1;
}

/** Whether `path` matches `glob` (compiled each time; see compileGlob and matchGlob). */
export function globMatches(glob: string, path: string): boolean {
  return matchGlob(compileGlob(glob), path);
}

/** The working directory as a path prefix: "" for the root, else `dir/`. */
function directoryPrefix(workingDirectory: string): string {
  const trimmed = workingDirectory.replace(/^\/+|\/+$/g, "");
  return trimmed === "" ? "" : `${trimmed}/`;
}

/** Whether a changed file (repository-relative) concerns a workspace: under its working directory or matching a trigger path. */
export function pathTriggers(path: string, workingDirectory: string, triggerPaths: readonly string[]): boolean {
  const prefix = directoryPrefix(workingDirectory);
  if (path.startsWith(prefix)) return true;
  return triggerPaths.some((glob) => globMatches(glob, path));
}

/** The files a push payload says changed, or null when the payload cannot tell (too many commits, a new or deleted branch). */
export function changedPathsOfPush(payload: {
  created?: boolean;
  deleted?: boolean;
  forced?: boolean;
  commits?: ReadonlyArray<{ added?: readonly string[]; removed?: readonly string[]; modified?: readonly string[] }>;
}): string[] | null {
  const commits = payload.commits ?? [];
  if (payload.created || payload.forced || commits.length === 0 || commits.length >= PUSH_PAYLOAD_COMMIT_LIMIT)
    return null;
  const paths = new Set<string>();
  for (const commit of commits)
    for (const path of [...(commit.added ?? []), ...(commit.removed ?? []), ...(commit.modified ?? [])])
      paths.add(path);
  return [...paths];
}

/** Whether a push changed anything a workspace reads (true when the payload cannot tell). */
export function pushConcernsWorkspace(
  changed: readonly string[] | null,
  workingDirectory: string,
  triggerPaths: readonly string[],
): boolean {
  if (changed === null) return true;
  return changed.some((path) => pathTriggers(path, workingDirectory, triggerPaths));
}

/** The branch a `refs/heads/<branch>` ref names, or null for tags and anything else. */
export function branchOfRef(ref: string): string | null {
  return ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : null;
}

/** A pull request from a fork: its head repository is not its base repository (or is gone). */
export function isForkPullRequest(pullRequest: {
  head: { repo: { full_name: string } | null };
  base: { repo: { full_name: string } };
}): boolean {
  const head = pullRequest.head.repo?.full_name;
  return head === undefined || head.toLowerCase() !== pullRequest.base.repo.full_name.toLowerCase();
}

/** What the check run on GitHub says: its status and, once completed, its conclusion. */
export type CheckRunState =
  | { status: "queued" | "in_progress" }
  | { status: "completed"; conclusion: "success" | "action_required" | "failure" | "neutral" };

/**
 * The check run state of a run: queued before anything ran, in progress while it plans, checks
 * policy or applies; completed with success for a finished plan (or an applied one),
 * action_required while it waits on a person (approval, a soft policy failure, a recovery),
 * failure for errors and policy failures, neutral for discarded, canceled and expired runs.
 */
export function checkRunStateOf(run: Pick<Run, "status">): CheckRunState {
  switch (run.status) {
    case "pending":
      return { status: "queued" };
    case "planning":
    case "policy_checking":
    case "applying":
      return { status: "in_progress" };
    case "awaiting_approval":
    case "policy_soft_failed":
    case "needs_recovery":
      return { status: "completed", conclusion: "action_required" };
    case "planned_and_finished":
    case "applied":
      return { status: "completed", conclusion: "success" };
    case "errored":
    case "plan_credentials_required":
      return { status: "completed", conclusion: "failure" };
    case "discarded":
    case "canceled":
    case "expired":
      return { status: "completed", conclusion: "neutral" };
  }
}

/** The state as one string (what the check-run record keeps as sent). */
export function checkRunStateKey(state: CheckRunState): string {
  return state.status === "completed" ? `completed:${state.conclusion}` : state.status;
}

/** The check run's title and summary (Markdown): the run's status, plan counts and policy outcome. */
export function checkRunOutput(run: Pick<Run, "id" | "kind" | "status" | "execution">): {
  title: string;
  summary: string;
} {
  const x = run.execution;
  const counts = x.planCounts
    ? `${x.planCounts.create} to add, ${x.planCounts.change} to change, ${x.planCounts.destroy} to destroy`
    : "plan not finished";
  const policy = x.policyOutcome === null ? "not evaluated yet" : x.policyOutcome.replace(/_/g, " ");
  const title = x.planCounts ? `${run.status.replace(/_/g, " ")}: ${counts}` : run.status.replace(/_/g, " ");
  const summary = [
    `**Run** \`${run.id}\` (${run.kind.replace(/_/g, " ")}): **${run.status.replace(/_/g, " ")}**${x.statusReason ? ` (${x.statusReason})` : ""}`,
    "",
    `- Plan: ${counts}`,
    `- Policy: ${policy}`,
  ].join("\n");
  return { title, summary };
}

/**
 * The web page of a commit on the GitHub whose API is `apiUrl`: github.com for
 * `https://api.github.com`, the server itself for a GitHub Enterprise Server (`https://host/api/v3`).
 * Null unless the repository is `owner/name` and the SHA a full hex object id.
 */
export function commitWebUrl(
  apiUrl: string,
  repository: string | null | undefined,
  sha: string | null | undefined,
): string | null {
  if (
    !repository ||
    !sha ||
    !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repository) ||
    !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha)
  )
    return null;
  let web: URL;
  try {
    web = new URL(apiUrl);
  } catch {
    return null;
  }
  if (web.hostname === "api.github.com") web = new URL("https://github.com");
  else web.pathname = web.pathname.replace(/\/api\/v3\/?$/, "/");
  return `${web.origin}${web.pathname.replace(/\/+$/, "")}/${repository}/commit/${sha}`;
}
