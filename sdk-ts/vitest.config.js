// `npx vitest run`: the harness's own tests (test/*.test.js, written for
// node:test) under vitest, to check that @wasmkeep/actor/testing works there
// too. node:test's `test`/`before`/`after`/... are mapped to vitest's.
import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.js"],
    // The replay check (200 chaos seeds on two nodes, 14 s) tests the host,
    // not the runner: node --test runs it once.
    exclude: [...configDefaults.exclude, "test/replay.test.js"],
    // The addon and the host's threads live in the test process: one fork, no isolation tricks.
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 120_000,
    alias: { "node:test": fileURLToPath(new URL("vitest.node-test.js", import.meta.url)) },
  },
});
