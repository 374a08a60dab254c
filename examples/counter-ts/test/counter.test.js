// Runs the built counter (npm run build) in the wasmkeep host, in-process.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTestHost } from "@wasmkeep/actor/testing";

const component = process.env.COUNTER_WASM ?? fileURLToPath(new URL("../counter.wasm", import.meta.url));

// A new host per test: its own temporary storage and virtual clock.
let host;
const start = () => (host = createTestHost({ classes: { counter: component } }));
afterEach((t) => {
  host?.printLogsIfFailed(t); // a failed test shows what the actor logged
  host?.close();
});

test("counts, reads, and deletes", () => {
  start();
  const c = host.actor("counter", "visits");
  assert.equal(c.get().text(), "0");
  assert.equal(c.post().text(), "1");
  assert.equal(c.post().text(), "2");
  assert.deepEqual(c.rows("counter"), [{ id: 1, n: 2 }]);
  assert.equal(host.actor("counter", "other").get().text(), "0", "each counter is its own actor");

  const del = c.delete();
  assert.equal(del.status, 200);
  assert.equal(del.text(), "deleted");
  assert.equal(c.exists(), false);
  assert.equal(c.get().text(), "0", "the next request meets a new counter");
});

test("a failed durable delete answers 503 not-acknowledged, to be retried, and the counter starts again", () => {
  start();
  const c = host.actor("counter", "f");
  c.post();
  host.faults.failRemoval(1);
  const r = c.delete();
  // "internal": not known to be durable, and safe to send again (notKept).
  assert.equal(r.status, 503, r.text());
  assert.equal(r.header("wasmkeep-failure"), "not-acknowledged", r.text());
  assert.equal(r.header("retry-after"), "1", r.text());
  assert.equal(c.get().text(), "0", "the end of the event removed the files: a new counter");
});

test("other methods are refused", () => {
  start();
  assert.equal(host.actor("counter", "m").fetch("/", { method: "PUT" }).status, 405);
});
