// The globals of mocha's bdd interface, as @web/test-runner sets them up in a component test's page
// (web/src/**/*.test.ts; test/support/fake-server.ts). Only the ones the tests use.
declare function describe(name: string, fn: () => void): void;
declare function it(name: string, fn: () => unknown): void;
declare function afterEach(fn: () => unknown): void;
