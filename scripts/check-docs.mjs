// Checks that the documents say true things about the repository: every relative link, every
// backticked repository path (`server/src/runner/sandbox.ts`, `scripts/up`), every backticked file
// name (`sandbox.ts`) and every backticked code symbol (`applyRunEvent`, `recordRunEvent()`,
// `Sandbox.run`) named in a Markdown file of the repository exists. A path outside the repository
// is an error too: a reader of a clone cannot follow it. Prints one line per finding
// (`file:line: what`) and exits 1 when there is any; `node scripts/check-docs.mjs` in CI.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SKIP_DIRS = new Set(["node_modules", ".git", ".tools", ".stackship", ".stackship-test", "generated", "tmp"]);
const SOURCE = /\.(ts|mts|mjs|cjs|js|go|py|rego|sh|yaml|yml|json|sql)$/;
const FILE_NAME = /^[\w.@-]+\.(ts|mts|mjs|cjs|js|go|py|rego|sh|yaml|yml|json|md|env|toml|tsv|txt|html|css)$/;
// The top-level folders a repository path starts with.
const TOP = new Set(
  readdirSync(root).filter((name) => !name.startsWith(".") || name === ".ci" || name === ".dependency-cruiser.cjs"),
);

// What a clean clone holds: the tracked files plus new ones not ignored (so a check before a commit
// sees what CI will see). Build output (`web/dist/`) is absent from a clone; a path git ignores is
// named on purpose and counts as existing.
const listed = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], {
  cwd: root,
  encoding: "utf8",
  maxBuffer: 256 * 1024 * 1024,
})
  .split("\0")
  .filter((file) => file && existsSync(join(root, file)));
const inGenerated = (file) => file.startsWith("generated/");
const files = listed.filter((file) => !inGenerated(file) && !file.split("/").some((part) => SKIP_DIRS.has(part)));
// `generated/` is machine-written and not searched for documents, but paths into it count.
const generatedFiles = listed.filter(inGenerated);
const folders = new Set();
for (const file of listed) for (let dir = dirname(file); dir !== "."; dir = dirname(dir)) folders.add(dir);
const baseNames = new Set([...files, ...generatedFiles].map((file) => basename(file)));
const documents = files.filter((file) => file.endsWith(".md"));

// Every identifier that appears in the repository's own code, specs and configuration.
const identifiers = new Set();
for (const file of [...files, ...generatedFiles.filter((f) => /\.(ts|yaml)$/.test(f))]) {
  if (file === "scripts/check-docs.mjs") continue;
  if (!SOURCE.test(file) && !file.endsWith(".env") && !file.endsWith(".cjs") && basename(file) !== "Taskfile.yml")
    continue;
  const size = statSync(join(root, file)).size;
  if (size > 4_000_000) continue;
  for (const match of readFileSync(join(root, file), "utf8").matchAll(/[A-Za-z_$][\w$]*/g)) identifiers.add(match[0]);
}

const listedSet = new Set(listed);
const ignoredCache = new Map();
function ignored(path) {
  if (!ignoredCache.has(path)) {
    // A folder pattern (`dist/`) matches only a path written as a folder.
    const result = spawnSync("git", ["check-ignore", "--no-index", path, `${path}/`], { cwd: root });
    ignoredCache.set(path, result.status === 0);
  }
  return ignoredCache.get(path);
}
function exists(path) {
  const clean = path.replace(/\/$/, "");
  return clean === "" || listedSet.has(clean) || folders.has(clean) || ignored(clean);
}

const findings = [];
for (const doc of documents) {
  const text = readFileSync(join(root, doc), "utf8");
  const docDir = dirname(doc);
  let inFence = false;
  text.split("\n").forEach((line, index) => {
    if (/^\s*```/.test(line)) {
      inFence = !inFence;
      return;
    }
    if (inFence) return;
    const where = `${doc}:${index + 1}`;
    // Relative links: [text](path) — web links and in-page anchors are not checked.
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1].split("#")[0];
      if (!target || /^[a-z]+:/i.test(target)) continue;
      const full = resolve(root, docDir, target);
      const rel = relative(root, full);
      if (rel.startsWith("..")) findings.push(`${where}: links outside the repository: ${match[1]}`);
      else if (!exists(rel)) findings.push(`${where}: links to a path that does not exist: ${match[1]}`);
    }
    for (const match of line.matchAll(/`([^`\s]+)`/g)) check(where, docDir, match[1]);
  });
}

function check(where, docDir, raw) {
  const token = raw.replace(/[.,:;]+$/, "");
  if (/^\.\.\//.test(token)) {
    const rel = relative(root, resolve(root, docDir, token));
    if (rel.startsWith("..")) findings.push(`${where}: names a path outside the repository: ${token}`);
    else if (!exists(rel)) findings.push(`${where}: names a path that does not exist: ${token}`);
    return;
  }
  // A repository path: starts with a top-level entry, or is relative to the document's folder.
  const pathLike = /^[\w.@-]+(\/[\w.@*{}-]*)+$/.test(token);
  if (pathLike && !token.includes("*") && !token.includes("{")) {
    // Relative to the repository, the document's folder or one of its ancestors (`commands/x.ts` in server/src/runner/).
    const bare = token.replace(/\/$/, "");
    const bases = [""];
    for (let dir = docDir; dir !== "." && dir !== ""; dir = dirname(dir)) bases.push(dir);
    if (bases.some((base) => exists(join(base, bare)))) return;
    const first = token.split("/")[0];
    const named = TOP.has(first) || FILE_NAME.test(basename(bare));
    if (named) findings.push(`${where}: names a path that does not exist: ${token}`);
    return;
  }
  if (FILE_NAME.test(token)) {
    if (!baseNames.has(token) && !exists(join(docDir, token)))
      findings.push(`${where}: names a file that does not exist: ${token}`);
    return;
  }
  // A code symbol: camelCase or PascalCase with a lower-case letter, optionally called or qualified.
  const symbol = /^([A-Za-z_$][\w$]*)(\.[A-Za-z_$][\w$]*)?(\(\))?$/.exec(token);
  if (!symbol) return;
  const names = [symbol[1], symbol[2]?.slice(1)].filter(Boolean);
  for (const name of names) {
    const camel = /[a-z][A-Z]/.test(name) || (/^[A-Z][a-z]+[A-Z]/.test(name) && /[a-z]/.test(name));
    if (!camel && !symbol[3]) continue;
    if (!identifiers.has(name)) findings.push(`${where}: names a symbol found nowhere in the code: ${token}`);
  }
}

for (const finding of findings) process.stdout.write(`${finding}\n`);
process.stdout.write(`[check-docs] ${documents.length} documents, ${findings.length} finding(s)\n`);
process.exit(findings.length > 0 ? 1 : 0);
