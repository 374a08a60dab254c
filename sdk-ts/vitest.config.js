// `npx vitest run`: the harness's own tests (test/*.test.js, written for
// node:test) under vitest, to check that @wasmkeep/actor/testing works there
// too. node:test's `test`/`before`/`after`/... are mapped to vitest's.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.js"],
    // The addon and the host's threads live in the test process: one fork, no isolation tricks.
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 120_000,
    alias: { "node:test": fileURLToPath(new URL("vitest.node-test.js", import.meta.url)) },
  },
});
