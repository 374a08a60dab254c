// The harness's own tests: the conformance testee driven through
// @wasmkeep/actor/testing. Build the components first
// (node scripts/build-guests.js) and the addon (cargo build -p wasmkeep-node-harness).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { CallFailure, createTestHost } from "@wasmkeep/actor/testing";
import { ops, testee } from "./fixtures/testee.js";

let host;
before(() => {
  host = createTestHost({ classes: { testee } });
});
after(() => host.close());

test("requests run through the actor and storage is readable", () => {
  const a = host.actor("testee", "storage");
  const r = a.fetch("/", ops({ op: "exec", sql: "CREATE TABLE t(x, y)" }, { op: "exec", sql: "INSERT INTO t VALUES (?, ?)", params: [{ integer: "7" }, { text: "seven" }] }));
  assert.equal(r.status, 200);
  assert.deepEqual(r.json().outcomes, [{ ok: { changed: 0 } }, { ok: { changed: 1 } }]);
  assert.deepEqual(a.rows("t"), [{ x: 7, y: "seven" }]);
  assert.deepEqual(a.rows("init_log"), [{ n: 1 }]);
  assert.equal(a.exists(), true);
  assert.equal(host.actor("testee", "nobody").exists(), false);
});

test("each host has its own storage", () => {
  const other = createTestHost({ classes: { testee } });
  try {
    assert.notEqual(other.dataDir, host.dataDir);
    assert.equal(other.actor("testee", "storage").exists(), false);
  } finally {
    other.close();
  }
});

test("the virtual clock drives alarms; runAlarm tells whether one ran", () => {
  const a = host.actor("testee", "alarm");
  a.fetch("/", ops({ op: "set-alarm", in: "60000" }));
  assert.ok(a.alarm instanceof Date);
  assert.equal(a.runAlarm(), false, "not due yet");
  host.advance(60_000);
  assert.equal(a.runAlarm(), true);
  assert.equal(a.runAlarm(), false, "it fires once");
  assert.equal(a.rows("alarm_log").length, 1);
  assert.equal(a.alarm, null);
});

test("runDueAlarms runs every due alarm", () => {
  for (const n of ["d1", "d2"]) host.actor("testee", n).fetch("/", ops({ op: "set-alarm", in: "10" }));
  host.advance(10);
  assert.equal(host.runDueAlarms(), 2);
});

test("faults: a failed removal makes deleteSelfDurable throw internal", () => {
  const a = host.actor("testee", "fault");
  host.faults.failRemoval(1);
  const out = a.fetch("/", ops({ op: "delete-self-durable" }, { op: "delete-self-durable" })).json().outcomes;
  assert.equal(out[0].err.kind, "internal");
  assert.deepEqual(out[1], { ok: null });
  a.settle();
  assert.equal(a.exists(), false);
});

test("calls run onCall; failures carry their kind", () => {
  const a = host.actor("testee", "callee");
  const answer = JSON.parse(a.callText(JSON.stringify({ ops: [{ op: "now" }] })));
  assert.equal(answer.outcomes[0].ok.now, String(host.now()));
  assert.throws(() => a.call("not json"), (e) => e instanceof CallFailure && e.code === "rejected");
});

test("sockets: open, echo, close by the actor", () => {
  const a = host.actor("testee", "ws");
  const s = a.openSocket("/room");
  s.send("echo:hello");
  a.settle();
  assert.deepEqual(s.received(), ["hello"]);
  a.fetch("/", ops({ op: "close", socket: String(s.id), code: 4000, reason: "bye" }));
  assert.deepEqual(s.received(), [{ close: { code: 4000, reason: "bye" } }]);
  a.settle();
  assert.deepEqual(a.rows("socket_log").map((r) => r.event), ["open", "message", "close"]);
});

test("logs and metrics are readable", () => {
  host.actor("testee", "log").fetch("/", ops({ op: "log", message: "hi there" }));
  assert.ok(host.logs().some((l) => l.message === "hi there" && l.level === "info"));
  assert.match(host.metrics(), /wasmkeep_events_total/);
});
