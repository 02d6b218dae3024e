// The import law of server/src, client/src and web/src, checked by `npm run lint:deps` (CI: .ci/run).
// The layers and what each may import are written once, in the "Layers" table of README.md; this
// file reads that table and turns every row into one rule (`layer-<name>`), so the document and the
// check cannot disagree. The rules no table can say (cycles, npm packages in domain/, tests) are
// written here. A violation prints its rule's name and fails.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

const TESTS = "[.]test[.]ts$";
const escape = (text) => text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");

/** The README table: `| \`name\` | \`path\` \`path\` … | \`name\` … |`; a path ending in `/` is a folder, `*` any name. */
function readLayers() {
  const readme = readFileSync(join(__dirname, "README.md"), "utf8");
  const section = /^## Layers\n([\s\S]*?)(?=^## )/m.exec(readme);
  if (!section) throw new Error('README.md has no "## Layers" section: the layer law is read from it');
  const layers = [];
  for (const line of section[1].split("\n")) {
    const cells = line.split("|").slice(1, -1);
    if (cells.length !== 3) continue;
    const names = (cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    const [name] = names(cells[0]);
    if (!name || !/^[a-z][a-z-]*$/.test(name)) continue;
    const paths = names(cells[1]);
    const mayImport = names(cells[2]);
    layers.push({ name, paths, mayImport });
  }
  const known = new Set(layers.map((layer) => layer.name));
  for (const layer of layers) {
    for (const other of layer.mayImport)
      if (!known.has(other)) throw new Error(`README.md Layers: ${layer.name} may import an unknown layer "${other}"`);
    if (layer.paths.length === 0) throw new Error(`README.md Layers: ${layer.name} names no path`);
  }
  return layers;
}

/** A path of the table as an anchored regular expression. */
const patternOf = (path) => `^${escape(path).replace(/\*/g, "[^/]*")}${path.endsWith("/") ? "" : "$"}`;
/** The literal part of a path before any `*` (to tell a more specific path from a broader one). */
const literal = (path) => path.split("*")[0];
/** Paths of `others` that are more specific than (inside) `path`. */
const inside = (path, others) =>
  others.filter(
    (other) =>
      other !== path && literal(other).startsWith(literal(path)) && literal(other).length > literal(path).length,
  );

const layers = readLayers();
const allPaths = layers.flatMap((layer) => layer.paths);
const pathsOf = (names) => layers.filter((layer) => names.includes(layer.name)).flatMap((layer) => layer.paths);

const layerRules = layers.map((layer) => {
  const allowed = new Set([layer.name, ...layer.mayImport]);
  const ownOthers = allPaths.filter((path) => !layer.paths.includes(path));
  const forbiddenPaths = pathsOf(layers.filter((l) => !allowed.has(l.name)).map((l) => l.name));
  const allowedPaths = pathsOf([...allowed]);
  return {
    name: `layer-${layer.name}`,
    severity: "error",
    comment: `${layer.name} (${layer.paths.join(" ")}) may import ${layer.mayImport.length ? layer.mayImport.join(", ") : "nothing outside itself"} (README.md, Layers).`,
    from: {
      path: layer.paths.map(patternOf),
      pathNot: [TESTS, ...layer.paths.flatMap((path) => inside(path, ownOthers)).map(patternOf)],
    },
    to: {
      path: forbiddenPaths.map(patternOf),
      pathNot: forbiddenPaths.flatMap((path) => inside(path, allowedPaths)).map(patternOf),
    },
  };
});

const SOURCES = "^(server/src|client/src|web/src)/";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: "every-file-in-a-layer",
      severity: "error",
      comment: "Every source file belongs to a row of README.md's Layers table (add the row or the path there).",
      from: { path: SOURCES, pathNot: [TESTS, "[.]d[.]m?ts$", ...allPaths.map(patternOf)] },
      to: {},
    },
    {
      name: "no-circular",
      severity: "error",
      comment: "Modules never import each other in a circle (type-only imports included).",
      from: { path: SOURCES },
      to: { circular: true },
    },
    {
      name: "domain-no-packages",
      severity: "error",
      comment: "server/src/domain/ (tests aside) uses no npm packages: no database, no HTTP, no I/O libraries.",
      from: { path: "^server/src/domain/", pathNot: TESTS },
      to: { dependencyTypes: ["npm", "npm-dev", "npm-optional", "npm-peer", "npm-no-pkg", "npm-unknown"] },
    },
    {
      name: "src-not-from-test",
      severity: "error",
      comment: "Production code never imports from a test folder or a test file (tests may import anything).",
      from: { path: SOURCES, pathNot: TESTS },
      to: { path: ["^server/test/", "^web/test/", TESTS] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)node_modules/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
