// node:test's API as vitest's, for running test/*.test.js under vitest
// (vitest.config.js aliases `node:test` to this file).
export { test, describe, describe as suite, test as it, beforeAll as before, afterAll as after, beforeEach, afterEach } from "vitest";
