// The bank's rules, one at a time: idempotent operations, interest by alarm
// (after a take-over too), and a close by durable delete.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTestHost } from "@wasmkeep/actor/testing";

const component = process.env.BANK_WASM ?? fileURLToPath(new URL("../bank.wasm", import.meta.url));
const DAY_MS = 24 * 3600 * 1000;

let host;
const start = (nodes) => (host = createTestHost({ classes: { bank: component }, nodes }));
afterEach((t) => {
  host?.printLogsIfFailed(t);
  host?.close();
});

const statement = (a) => JSON.parse(a.get("/").text());

test("an operation id moves money once, and a retry answers the same", () => {
  start();
  const a = host.actor("bank", "acct");
  assert.equal(a.post("/deposit?op=d1&amount=100").text(), "100");
  assert.equal(a.post("/deposit?op=d1&amount=100").text(), "100", "a retry");
  assert.equal(a.post("/withdraw?op=w1&amount=500").status, 409);
  assert.equal(a.post("/withdraw?op=w2&amount=30").text(), "70");
  assert.equal(a.post("/withdraw?op=w1&amount=500").status, 409, "a refusal is kept for its id too");
  assert.deepEqual(statement(a), { balance: 70, interest: 0 });
  assert.equal(a.post("/deposit?amount=5").status, 400, "no op id");
});

test("interest is paid daily, and after a take-over by the new holder", () => {
  start(2);
  const a = host.actor("bank", "acct");
  assert.equal(a.onNode(1).post("/deposit?op=d1&amount=1000").text(), "1000");
  host.cutOff(1);
  assert.deepEqual(statement(a.onNode(2)), { balance: 1000, interest: 0 }, "node 2 takes the account over");
  host.advance(DAY_MS);
  assert.equal(host.runDueAlarms(), 1, "the alarm fires on node 2, the new holder");
  assert.deepEqual(statement(a.onNode(2)), { balance: 1010, interest: 10 });
  host.advance(DAY_MS);
  assert.equal(a.onNode(2).runAlarm(), true, "and again the next day, through node 2");
  assert.deepEqual(statement(a.onNode(2)), { balance: 1020, interest: 20 });
});

test("advance with { runDue: true } pays each day's interest", () => {
  start();
  const a = host.actor("bank", "acct");
  a.post("/deposit?op=d1&amount=1000");
  const before = host.now();
  assert.equal(host.advance(3 * DAY_MS + 3_600_000, { runDue: true }), before + 3 * DAY_MS + 3_600_000, "the new time");
  assert.deepEqual(statement(a), { balance: 1030, interest: 30 }, "one alarm a day, each at its time");
  // The plain advance runs nothing; runDueAlarms then runs the one alarm due.
  host.advance(2 * DAY_MS);
  assert.equal(host.runDueAlarms(), 1);
  assert.deepEqual(statement(a), { balance: 1040, interest: 40 });
});

test("the balance and the interest survive a restart of the host", () => {
  start();
  const a = host.actor("bank", "acct");
  a.post("/deposit?op=d1&amount=500");
  host.restartHost();
  host.advance(DAY_MS);
  assert.equal(host.runDueAlarms(), 1, "the alarm is still indexed");
  assert.deepEqual(statement(a), { balance: 505, interest: 5 });
});

test("a closed account starts again empty", () => {
  start();
  const a = host.actor("bank", "acct");
  a.post("/deposit?op=d1&amount=10");
  assert.equal(a.delete().text(), "closed");
  assert.deepEqual(statement(a), { balance: 0, interest: 0 });
});
