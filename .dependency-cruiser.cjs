// Layer rules for server/src (see server/src/README.md for the picture).
// Top to bottom:
//   entry    main.ts, runner-main.ts, keys-main.ts, server.ts, services.ts
//   surfaces http/ (Koa, middleware, operation binding), api/ (v1 + tfe handlers and
//            presenters), live/ (WebSocket gateway), runner/ (engine, sandbox, GitHub worker)
//   commands commands/ (the application layer: one file per use case, one transaction each;
//            services.ts is the dependency bag they receive)
//   adapters store/ (database), artifacts/ (object storage), github/ (GitHub App API client,
//            tarballs): outside systems behind plain functions and classes
//   domain   domain/ (pure: no I/O, no generated wire types)
// Nothing imports upward, nothing imports in a cycle, and no source file imports from server/test.
// Run: npm run lint:deps (CI: .ci/run). A violation prints the rule's name and fails.
const SRC = '^server/src/';
const ENTRY = `${SRC}(main|runner-main|keys-main|server)\\.ts$`;
const SURFACES = `${SRC}(http|api|live|runner)/`;
const COMMANDS = `${SRC}commands/`;
const ADAPTERS = `${SRC}(store|artifacts|github)/`;
const DOMAIN = `${SRC}domain/`;
const TESTS = '[.]test[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules in server/src never import each other in a circle (type-only imports included).',
      from: { path: SRC },
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment:
        'domain/ is pure: it imports only domain/ and node builtins, never store, artifacts, commands, surfaces or entry points.',
      from: { path: DOMAIN, pathNot: TESTS },
      to: { path: `${SRC}(?!domain/)` },
    },
    {
      name: 'domain-no-generated',
      severity: 'error',
      comment: 'domain/ does not depend on generated wire types; presenters under api/ map domain values to them.',
      from: { path: DOMAIN },
      to: { path: '^generated/' },
    },
    {
      name: 'domain-no-packages',
      severity: 'error',
      comment: 'domain/ (tests aside) uses no npm packages: no database, no HTTP, no I/O libraries.',
      from: { path: DOMAIN, pathNot: TESTS },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'store-below-commands',
      severity: 'error',
      comment:
        'store/, artifacts/ and github/ are adapters below the application layer: they import domain/, each other and config.ts, never commands, surfaces or entry points.',
      from: { path: ADAPTERS },
      to: { path: `(${COMMANDS}|${SURFACES}|${ENTRY})` },
    },
    {
      name: 'no-upward-from-commands',
      severity: 'error',
      comment:
        'commands/ (the application layer) imports store/, artifacts/ and domain/, never http/, api/, live/, runner/ or entry points.',
      from: { path: COMMANDS },
      to: { path: `(${SURFACES}|${ENTRY})` },
    },
    {
      name: 'surfaces-below-entry',
      severity: 'error',
      comment: 'http/, api/, live/ and runner/ never import the entry points (main, runner-main, keys-main, server).',
      from: { path: SURFACES },
      to: { path: ENTRY },
    },
    {
      name: 'runner-beside-http',
      severity: 'error',
      comment:
        'runner/ and the HTTP surfaces (http/, api/, live/) are siblings: neither imports the other; what both need lives in commands/ or below.',
      from: { path: `${SRC}runner/` },
      to: { path: `${SRC}(http|api|live)/` },
    },
    {
      name: 'http-beside-runner',
      severity: 'error',
      comment: 'http/, api/ and live/ never import runner/: they reach a running phase only through commands/ and the hooks in services.ts.',
      from: { path: `${SRC}(http|api|live)/` },
      to: { path: `${SRC}runner/` },
    },
    {
      name: 'store-no-generated',
      severity: 'error',
      comment: 'store/, artifacts/ and github/ keep domain records, not generated wire types.',
      from: { path: ADAPTERS },
      to: { path: '^generated/' },
    },
    {
      name: 'src-not-from-test',
      severity: 'error',
      comment: 'Production code never imports from server/test (tests may import anything).',
      from: { path: SRC, pathNot: TESTS },
      to: { path: '^server/test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
