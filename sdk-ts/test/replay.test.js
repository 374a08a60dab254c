// A chaos seed replays exactly on two nodes (issue 58, ADR 080): 100 seeds
// of the bank's life (examples/bank-ts: deposits and withdrawals with
// operation ids, a statement after each, every 5xx retried) run twice on one
// two-node host, each seed after host.reset() under the seed's schedule (the
// pieces of runChaos's loop: native.startChaos, native.endChaos), and each
// seed's record must be the same both times: every answer the client got
// (retries included), how the body ended, and the schedule. Runs on
// BANK_WASM (scripts/test.sh sets it), else the repository's
// target/components/bank-ts.wasm.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTestHost } from "@wasmkeep/actor/testing";

const SEEDS = 100;
const bank = process.env.BANK_WASM ?? fileURLToPath(new URL("../../target/components/bank-ts.wasm", import.meta.url));

let host;
before(() => {
  host = createTestHost({ classes: { bank }, nodes: 2 });
});
after(() => host?.close());

/** The bank's life, as its chaos test lives it; each answer is noted in `record`. */
function life(host, record) {
  const a = host.actor("bank", "acct");
  const answered = (method, path) => {
    let status = 0;
    for (let tries = 0; tries < 30; tries++) {
      const r = method === "POST" ? a.post(path) : a.get(path);
      record.push(`${method} ${path}: ${r.status} ${r.text()}`);
      status = r.status;
      if (status < 500) break;
    }
    return status;
  };
  for (let i = 1; i <= 10; i++) {
    const path = i % 4 === 0 ? `/withdraw?op=w${i}&amount=${i * 5}` : `/deposit?op=d${i}&amount=${i * 10}`;
    if (answered("POST", path) !== 200) return record.push("ended: an operation was not acknowledged");
    if (answered("GET", "/") !== 200) return record.push("ended: no statement");
  }
  record.push("ended: every operation acknowledged");
}

function runSeeds() {
  const records = [];
  for (let seed = 0; seed < SEEDS; seed++) {
    host.reset();
    host.native.startChaos(seed);
    const record = [];
    try {
      life(host, record);
    } finally {
      const { records: schedule } = host.native.endChaos();
      record.push("the schedule:", ...schedule.map((r) => r.text));
    }
    records.push(record);
  }
  return records;
}

test("100 two-node seeds replay their schedule and every answer", () => {
  const first = runSeeds();
  const second = runSeeds();
  const differ = [];
  for (let seed = 0; seed < SEEDS; seed++) {
    if (JSON.stringify(first[seed]) !== JSON.stringify(second[seed])) differ.push(seed);
  }
  const shown = differ
    .slice(0, 3)
    .map((s) => `seed ${s}, first run:\n  ${first[s].join("\n  ")}\nsecond run:\n  ${second[s].join("\n  ")}`)
    .join("\n");
  assert.deepEqual(differ, [], `${differ.length} of ${SEEDS} two-node seeds did not replay\n${shown}`);
});
