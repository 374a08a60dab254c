// The bank under seeded chaos, on one node and on two: a client deposits and
// withdraws with operation ids, retrying every 5xx (a lost answer, a failed
// upload, a node cut off) until it is answered, and after every answer the
// balance is exactly what the acknowledged operations and the interest paid
// make it. A variant whose deposits record their id only after the answer
// went out is caught on both (on one node by the step that crashes the host
// right after an answer), and a failing seed replays the identical record 20
// times.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { ChaosFailure, createTestHost, runChaos } from "@wasmkeep/actor/testing";

const component = process.env.BANK_WASM ?? fileURLToPath(new URL("../bank.wasm", import.meta.url));
const broken = process.env.BANK_BROKEN_WASM ?? fileURLToPath(new URL("../bank-broken.wasm", import.meta.url));

function answered(send) {
  for (let i = 0; i < 30; i++) {
    const r = send();
    if (r.status < 500) return r;
  }
  assert.fail("still failing after 30 tries");
}

function life(host) {
  const a = host.actor("bank", "acct");
  let moved = 0;
  for (let i = 1; i <= 10; i++) {
    const withdraw = i % 4 === 0;
    const path = withdraw ? `/withdraw?op=w${i}&amount=${i * 5}` : `/deposit?op=d${i}&amount=${i * 10}`;
    const r = answered(() => a.post(path));
    assert.equal(r.status, 200, `${path}: ${r.status} ${r.text()}`);
    moved += withdraw ? -i * 5 : i * 10;
    const { balance, interest } = JSON.parse(answered(() => a.get("/")).text());
    assert.equal(balance, moved + interest, `after ${path}: balance ${balance}, expected ${moved + interest} (${moved} moved + ${interest} interest)`);
  }
}

function caught(run) {
  try {
    run();
  } catch (e) {
    if (e instanceof ChaosFailure) return e;
    throw e;
  }
  assert.fail("the broken variant was not caught");
}

for (const nodes of [1, 2]) {
  test(`every acknowledged operation is kept on ${nodes} node(s), under 100 seeds`, () => {
    const host = createTestHost({ classes: { bank: component }, nodes });
    try {
      const ran = runChaos(host, { seeds: 100 }, life);
      assert.equal(ran, process.env.WASMKEEP_CHAOS_SEED ? 1 : 100);
    } finally {
      host.close();
    }
  });

  test(`deposits that record their id after the answer are caught on ${nodes} node(s), and the seed replays exactly`, (t) => {
    if (process.env.WASMKEEP_CHAOS_SEED) return t.skip("WASMKEEP_CHAOS_SEED replays one seed of the test above");
    const host = createTestHost({ classes: { bank: broken }, nodes });
    try {
      const failure = caught(() => runChaos(host, { seeds: 100 }, life));
      for (let i = 0; i < 20; i++) {
        const again = caught(() => runChaos(host, { seeds: [failure.seed] }, life));
        assert.deepEqual(again.schedule, failure.schedule, "the schedule replays");
        assert.equal(again.message, failure.message, "the outcome replays");
      }
    } finally {
      host.close();
    }
  });
}
