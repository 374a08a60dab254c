// @wasmkeep/actor/testing: run built actors in the wasmkeep host, in-process,
// from node --test or vitest. The host is the wasmkeep-host library
// (host/runtime in the wasmkeep repository, the same one `wasmkeep-shim
// serve` runs) driven through wasmkeep-host-testing's TestHost and its chaos
// loop, loaded as the native addon wasmkeep-node-harness
// (sdk-ts/native/harness). tsc compiles these files to dist/testing/, the
// JavaScript and the declarations the package ships.

/**
 * `@wasmkeep/actor/testing`: run built actor components in the wasmkeep host,
 * in-process, from `node --test` or vitest. The host is the `wasmkeep-host`
 * library (the one `wasmkeep-shim serve` runs) loaded as a native addon, with
 * a virtual clock and its own temporary data directory per {@link TestHost}.
 *
 * ```ts
 * import { test } from "node:test";
 * import assert from "node:assert/strict";
 * import { createTestHost } from "@wasmkeep/actor/testing";
 *
 * test("counts", () => {
 *   const host = createTestHost({ classes: { counter: "counter.wasm" } });
 *   const c = host.actor("counter", "a");
 *   assert.equal(c.post("/").text(), "1");
 *   assert.deepEqual(c.rows("counter"), [{ id: 1, n: 1 }]);
 *   host.close(); // or `using host = ...` on Node 22+
 * });
 * ```
 * @module
 */

export { TestActor } from "./actor.js";
export { ChaosFailure, runChaos } from "./chaos.js";
export { TestHost, createTestHost, hostVersion } from "./host.js";
export { CallFailure, TestResponse, TestSocket } from "./response.js";
export type {
  AdvanceOptions,
  ChaosOptions,
  ChaosRecord,
  ClassInit,
  DeletionStatus,
  FetchInit,
  Faults,
  HistoryPosition,
  HostErrorCode,
  LogLine,
  OperatorDeleted,
  RestoreTo,
  Restored,
  SocketReceived,
  TableValue,
  TestHostOptions,
} from "./types.js";
