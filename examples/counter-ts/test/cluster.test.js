// The counter in a local cluster of two nodes: each actor is held by one
// node, the other forwards to it, and a node cut off is taken over from the
// shared bucket with the count it kept.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTestHost } from "@wasmkeep/actor/testing";

const component = process.env.COUNTER_WASM ?? fileURLToPath(new URL("../counter.wasm", import.meta.url));

let host;
afterEach((t) => {
  host?.printLogsIfFailed(t);
  host?.close();
});

test("node 2 serves the count node 1 kept once node 1 is cut off", () => {
  host = createTestHost({ classes: { counter: component }, nodes: 2 });
  assert.equal(host.nodes, 2);
  const c = host.actor("counter", "visits");
  assert.equal(c.onNode(1).post().text(), "1", "node 1 takes the actor");
  assert.equal(c.onNode(2).post().text(), "2", "node 2 forwards to node 1, its holder");
  host.cutOff(1);
  assert.equal(c.fetch("/", { node: 2 }).text(), "2", "node 2 takes over from the bucket, with the count kept");
  assert.equal(c.onNode(2).post().text(), "3");
});

test("a cluster's operator delete, idle expiry and app delete", () => {
  host = createTestHost({ classes: { counter: component }, nodes: 2 });
  const doomed = host.actor("counter", "doomed");
  doomed.onNode(1).post();
  assert.deepEqual(doomed.deletionStatus(), { status: "not-deleted" });
  assert.match(doomed.requestOperatorDelete(), /^[0-9a-f]+$/, "the request's id");
  const status = doomed.deletionStatus();
  assert.equal(status.status, "deleted");
  assert.equal(status.how, "operator");
  assert.ok(status.at instanceof Date);
  assert.equal(doomed.onNode(2).get().text(), "0", "the next request meets a new counter");

  host.setExpireAfterIdle("counter", 3_600_000);
  host.actor("counter", "idle").onNode(1).post();
  host.hibernateAll();
  host.advance(2 * 3_600_000); // the moving clock runs the expiry pass too
  host.runExpiryPasses();
  assert.equal(host.actor("counter", "idle").exists(), false, "an actor idle past its limit is deleted");
  assert.throws(() => host.setExpireAfterIdle("counter", 60_000), { code: "bad-argument" }, "a limit below an hour is refused");

  host.deleteApp();
  assert.throws(() => host.actor("counter", "after").onNode(2).post(), { code: "no-such-app" }, "a deleted app is served no more");
});
