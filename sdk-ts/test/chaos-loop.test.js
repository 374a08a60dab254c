// runChaos runs the host testing library's chaos loop (the addon's
// NativeHost.runChaos calling the body once per seed on this thread, ADR
// 083): the body's verbs reach the host while the loop holds it between
// seeds, a throw of any value is the seed's failure with the value as its
// cause, and what the loop refuses it refuses by kind. The testee comes from
// `node scripts/build-guests.js`.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ChaosFailure, createTestHost, runChaos } from "@wasmkeep/actor/testing";
import { ops, testee } from "./fixtures/testee.js";

let host;
before(() => {
  host = createTestHost({ classes: { testee } });
});
after(() => host.close());

/** What runChaos threw (it must throw). */
function thrownBy(run) {
  try {
    run();
  } catch (e) {
    return e;
  }
  assert.fail("runChaos returned");
}

test("the seeds run in order, each after a reset, and a body may restart the whole host", (t) => {
  if (process.env.WASMKEEP_CHAOS_SEED) return t.skip("WASMKEEP_CHAOS_SEED is set for this run");
  const seen = [];
  const ran = runChaos(host, { seeds: [7, 2, 9] }, (h, seed) => {
    seen.push(seed);
    const a = h.actor("testee", "kept");
    assert.equal(a.exists(), false, "each seed starts from a reset");
    a.fetch("/", ops({ op: "exec-durable", sql: "CREATE TABLE IF NOT EXISTS t(x)" }));
    h.restartHost();
    assert.equal(a.exists(), true, "the host restarted on the same data");
    a.fetch("/", ops({ op: "exec", sql: "SELECT 1" }));
  });
  assert.equal(ran, 3);
  assert.deepEqual(seen, [7, 2, 9]);
  assert.deepEqual(host.native.endChaos().records, [], "no chaos left running");
});

test("a throw of any value fails the seed; the value is the failure's cause", (t) => {
  if (process.env.WASMKEEP_CHAOS_SEED) return t.skip("WASMKEEP_CHAOS_SEED is set for this run");
  const error = new RangeError("the invariant broke");
  const failure = thrownBy(() => runChaos(host, { seeds: [0, 1, 2] }, (_, seed) => {
    if (seed === 1) throw error;
  }));
  assert.ok(failure instanceof ChaosFailure, String(failure));
  assert.equal(failure.seed, 1);
  assert.equal(failure.cause, error, "the very value thrown");
  assert.match(failure.message, /^the test failed under seed 1 \(replay it alone with WASMKEEP_CHAOS_SEED=1\): the invariant broke$/m);

  const text = thrownBy(() => runChaos(host, { seeds: [3] }, () => {
    throw "a string";
  }));
  assert.ok(text instanceof ChaosFailure, String(text));
  assert.equal(text.cause, "a string");
  assert.match(text.message, /: a string \(thrown, not an Error\)$/m);
  assert.deepEqual(host.native.endChaos().records, [], "no chaos left running after a failure");
});

test("what the loop refuses, it refuses by kind, before a seed runs", (t) => {
  if (process.env.WASMKEEP_CHAOS_SEED) return t.skip("WASMKEEP_CHAOS_SEED is set for this run");
  let calls = 0;
  assert.throws(() => runChaos(host, { seeds: [1, 1.5] }, () => calls++), { code: "InvalidArg", message: /1\.5 is not a seed/ });
  assert.equal(calls, 0, "no seed ran");
  const closed = createTestHost({ classes: { testee } });
  closed.close();
  assert.throws(() => runChaos(closed, { seeds: 1 }, () => calls++), { code: "closed", message: /before seed 0/ });
  assert.equal(calls, 0);
});
