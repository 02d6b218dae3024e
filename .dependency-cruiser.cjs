// Layer rules for server/src (see server/src/README.md for the picture).
// Top to bottom:
//   entry    main.ts, runner-main.ts, keys-main.ts, audit-main.ts, server.ts, services.ts
//   surfaces http/ (Koa, middleware, operation binding), api/ (v1 + tfe handlers and
//            presenters), live/ (WebSocket gateway), runner/ (engine, sandbox, GitHub worker)
//   commands commands/ (the application layer: one file per use case, one transaction each;
//            services.ts is the dependency bag they receive)
//   adapters store/ (database), artifacts/ (object storage), metrics/ (Prometheus registry), github/ (GitHub App API client,
//            tarballs): outside systems behind plain functions and classes
//   domain   domain/ (pure: no I/O, no generated wire types)
// Nothing imports upward, nothing imports in a cycle, and no source file imports from server/test.
// Run: npm run lint:deps (CI: .ci/run). A violation prints the rule's name and fails.
const SRC = "^server/src/";
const ENTRY = `${SRC}(main|runner-main|keys-main|audit-main|server)\\.ts$`;
const SURFACES = `${SRC}(http|api|live|runner)/`;
const COMMANDS = `${SRC}commands/`;
const ADAPTERS = `${SRC}(store|artifacts|github|metrics)/`;
const DOMAIN = `${SRC}domain/`;
const TESTS = "[.]test[.]ts$";

/** One layer rule: a violation is an error that prints `name`. */
const forbid = (name, comment, from, to) => ({ name, severity: "error", comment, from, to });

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    forbid("no-circular", "Modules in server/src never import each other in a circle (type-only imports included).", { path: SRC }, { circular: true }),
    forbid(
      "domain-is-pure",
      "domain/ is pure: it imports only domain/ and node builtins, never store, artifacts, commands, surfaces or entry points.",
      { path: DOMAIN, pathNot: TESTS },
      { path: `${SRC}(?!domain/)` },
    ),
    forbid("domain-no-generated", "domain/ does not depend on generated wire types; presenters under api/ map domain values to them.", { path: DOMAIN }, { path: "^generated/" }),
    forbid(
      "domain-no-packages",
      "domain/ (tests aside) uses no npm packages: no database, no HTTP, no I/O libraries.",
      { path: DOMAIN, pathNot: TESTS },
      { dependencyTypes: ["npm", "npm-dev", "npm-optional", "npm-peer", "npm-no-pkg", "npm-unknown"] },
    ),
    forbid(
      "store-below-commands",
      "store/, artifacts/ and github/ are adapters below the application layer: they import domain/, each other and config.ts, never commands, surfaces or entry points.",
      { path: ADAPTERS },
      { path: `(${COMMANDS}|${SURFACES}|${ENTRY})` },
    ),
    forbid(
      "no-upward-from-commands",
      "commands/ (the application layer) imports store/, artifacts/ and domain/, never http/, api/, live/, runner/ or entry points.",
      { path: COMMANDS },
      { path: `(${SURFACES}|${ENTRY})` },
    ),
    forbid(
      "surfaces-below-entry",
      "http/, api/, live/ and runner/ never import the entry points (main, runner-main, keys-main, audit-main, server).",
      { path: SURFACES },
      { path: ENTRY },
    ),
    forbid(
      "runner-beside-http",
      "runner/ and the HTTP surfaces (http/, api/, live/) are siblings: neither imports the other; what both need lives in commands/ or below.",
      { path: `${SRC}runner/` },
      { path: `${SRC}(http|api|live)/` },
    ),
    forbid(
      "http-beside-runner",
      "http/, api/ and live/ never import runner/: they reach a running phase only through commands/ and the hooks in services.ts.",
      { path: `${SRC}(http|api|live)/` },
      { path: `${SRC}runner/` },
    ),
    forbid(
      "commands-no-generated",
      "commands/ return domain records; the wire shapes (generated types) are built by the presenters under api/.",
      { path: COMMANDS },
      { path: "^generated/" },
    ),
    forbid("store-no-generated", "store/, artifacts/ and github/ keep domain records, not generated wire types.", { path: ADAPTERS }, { path: "^generated/" }),
    forbid("src-not-from-test", "Production code never imports from server/test (tests may import anything).", { path: SRC, pathNot: TESTS }, { path: "^server/test/" }),
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
