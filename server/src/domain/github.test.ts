import { suite } from "uvu";
import * as assert from "uvu/assert";
import fc from "fast-check";
import {
  changedPathsOfPush,
  checkRunStateKey,
  commitWebUrl,
  checkRunStateOf,
  compileGlob,
  globMatches,
  matchGlob,
  isForkPullRequest,
  pushConcernsWorkspace,
  PUSH_PAYLOAD_COMMIT_LIMIT,
} from "./github.ts";
import { RUN_STATUSES } from "./run.ts";

const rules = suite("GitHub pipeline rules");

rules("globs: * within a segment, ** across segments, ? one character", () => {
  assert.ok(globMatches("modules/**", "modules/a/b/c.tf"));
  assert.ok(globMatches("modules/**/*.tf", "modules/x.tf"));
  assert.ok(globMatches("modules/**/*.tf", "modules/a/b/x.tf"));
  assert.not.ok(globMatches("modules/*.tf", "modules/a/x.tf"));
  assert.ok(globMatches("v?.tf", "v1.tf"));
  assert.not.ok(globMatches("v?.tf", "v10.tf"));
  assert.not.ok(globMatches("a.tf", "aXtf"), "a dot is literal");
  assert.not.ok(globMatches("modules/**", "modules"), "a trailing ** needs the slash before it");
  assert.ok(globMatches("**/x", "x"));
  assert.ok(globMatches("a/**/b", "a/b"));
});

/** The regular expression the matcher replaced: the reference it must agree with (on inputs small enough for backtracking). */
function referenceRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*" && glob[i + 1] === "*") {
      if (glob[i + 2] === "/") {
        out += "(?:.*/)?";
        i += 2;
      } else {
        out += ".*";
        i += 1;
      }
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else out += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`, "s");
}

rules("the linear-time matcher agrees with the regular expression it replaced (property, small inputs)", () => {
  const piece = fc.constantFrom("a", "b", "/", "*", "**", "**/", "?", ".");
  const char = fc.constantFrom("a", "b", "/", ".");
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 8 }), fc.array(char, { maxLength: 12 }), (pieces, chars) => {
      const glob = pieces.join("");
      const path = chars.join("");
      return globMatches(glob, path) === referenceRegExp(glob).test(path);
    }),
    { numRuns: 5000 },
  );
});

rules("a pathological glob (twelve **/ then x) against a 22-segment path is answered at once, right", () => {
  const glob = `${"**/".repeat(12)}x`;
  const deep = Array.from({ length: 22 }, (_, i) => `d${i}`).join("/");
  assert.not.ok(globMatches(glob, `${deep}/y`));
  assert.ok(globMatches(glob, `${deep}/x`));
  const tokens = compileGlob(`${"**/".repeat(66)}x`);
  assert.not.ok(matchGlob(tokens, `${"a/".repeat(500)}b`));
});

rules("a push concerns a workspace when it changes something under its working directory or a trigger path", () => {
  assert.ok(pushConcernsWorkspace(["infra/main.tf"], "infra", []));
  assert.not.ok(
    pushConcernsWorkspace(["infra2/main.tf", "README.md"], "infra", []),
    "a sibling with the same prefix is not under it",
  );
  assert.ok(pushConcernsWorkspace(["modules/net/main.tf"], "infra", ["modules/**"]));
  assert.ok(pushConcernsWorkspace(["README.md"], "", []), "the root working directory sees everything");
  assert.ok(pushConcernsWorkspace(null, "infra", []), "a push the payload cannot describe is taken as relevant");
});

rules("changed paths come from the payload's commits, unless it cannot tell", () => {
  const commit = { added: ["a.tf"], removed: ["b.tf"], modified: ["c.tf"] };
  assert.equal(changedPathsOfPush({ commits: [commit, { modified: ["a.tf"] }] })?.sort(), ["a.tf", "b.tf", "c.tf"]);
  assert.is(changedPathsOfPush({ created: true, commits: [commit] }), null);
  assert.is(changedPathsOfPush({ forced: true, commits: [commit] }), null);
  assert.is(
    changedPathsOfPush({ commits: Array.from({ length: PUSH_PAYLOAD_COMMIT_LIMIT - 1 }, () => commit) })?.length,
    3,
  );
  assert.is(changedPathsOfPush({ commits: Array.from({ length: PUSH_PAYLOAD_COMMIT_LIMIT }, () => commit) }), null);
});

rules("a fork pull request is one whose head repository is not the base (or is gone)", () => {
  const base = { repo: { full_name: "acme/infra" } };
  assert.not.ok(isForkPullRequest({ head: { repo: { full_name: "ACME/infra" } }, base }));
  assert.ok(isForkPullRequest({ head: { repo: { full_name: "mallory/infra" } }, base }));
  assert.ok(isForkPullRequest({ head: { repo: null }, base }));
});

rules("check run states: every run status maps, with the conclusions of the issue", () => {
  const expected: Record<string, string> = {
    pending: "queued",
    planning: "in_progress",
    policy_checking: "in_progress",
    applying: "in_progress",
    awaiting_approval: "completed:action_required",
    policy_soft_failed: "completed:action_required",
    needs_recovery: "completed:action_required",
    planned_and_finished: "completed:success",
    applied: "completed:success",
    errored: "completed:failure",
    plan_credentials_required: "completed:failure",
    discarded: "completed:neutral",
    canceled: "completed:neutral",
    expired: "completed:neutral",
  };
  for (const status of RUN_STATUSES) assert.is(checkRunStateKey(checkRunStateOf({ status })), expected[status], status);
});

rules(
  "commitWebUrl: github.com for the public API, the server itself for GitHub Enterprise Server, nothing for bad input",
  () => {
    const sha = "0123456789abcdef0123456789abcdef01234567";
    assert.is(commitWebUrl("https://api.github.com", "acme/infra", sha), `https://github.com/acme/infra/commit/${sha}`);
    assert.is(
      commitWebUrl("https://ghe.example.com/api/v3", "acme/infra", sha),
      `https://ghe.example.com/acme/infra/commit/${sha}`,
    );
    assert.is(
      commitWebUrl("https://ghe.example.com/api/v3/", "acme/infra", sha),
      `https://ghe.example.com/acme/infra/commit/${sha}`,
    );
    assert.is(
      commitWebUrl("http://127.0.0.1:4000", "acme/infra", sha),
      `http://127.0.0.1:4000/acme/infra/commit/${sha}`,
    );
    assert.is(commitWebUrl("https://api.github.com", null, sha), null);
    assert.is(commitWebUrl("https://api.github.com", "acme/infra", null), null);
    assert.is(commitWebUrl("https://api.github.com", "acme/infra/../x", sha), null);
    assert.is(commitWebUrl("https://api.github.com", "acme/infra", sha.slice(0, 39)), null);
    assert.is(commitWebUrl("https://api.github.com", "acme/infra", "javascript:alert(1)"), null);
    assert.is(commitWebUrl("not a url", "acme/infra", sha), null);
  },
);

rules.run();
