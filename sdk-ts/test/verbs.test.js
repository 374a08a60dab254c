// The harness's verbs over the host library's TestHost (issue 15): reset,
// restart, operator delete, deletion status, a cluster, seeded chaos, and the
// actor's log lines printed when a request answers 500 or more. The testee
// and the probe come from `node scripts/build-guests.js`.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { ChaosFailure, TestHost, createTestHost, runChaos } from "@wasmkeep/actor/testing";

const components = fileURLToPath(new URL("../../target/components/", import.meta.url));
const testee = `${components}conformance-testee-ts.wasm`;
const probe = `${components}sdk-ts-probe.wasm`;
const ops = (...list) => ({ json: { ops: list } });

let host;
before(() => {
  host = createTestHost({ classes: { testee, probe } });
});
after(() => host.close());

/** What the host printed to stderr while `run` ran. */
function stderrOf(run) {
  const write = process.stderr.write;
  let out = "";
  process.stderr.write = (chunk, ...rest) => {
    out += String(chunk);
    return typeof rest.at(-1) === "function" ? (rest.at(-1)(), true) : true;
  };
  try {
    run();
  } finally {
    process.stderr.write = write;
  }
  return out;
}

test("reset leaves no actor, socket, alarm or log line, and the clock back at its start", () => {
  const a = host.actor("testee", "r");
  a.fetch("/", ops({ op: "exec", sql: "CREATE TABLE t(x)" }, { op: "set-alarm", in: "60000" }, { op: "log", message: "before the reset" }));
  const socket = a.openSocket("/");
  host.advance(10_000);
  const before = host.now();
  host.faults.failRemoval(1);
  host.reset();
  assert.equal(a.exists(), false, "no actor is left");
  assert.ok(host.now() < before, "the clock is back at its start");
  assert.ok(!host.logs().some((l) => l.message === "before the reset"), "no log line is left");
  assert.throws(() => socket.send("hi"), { code: "no-such-socket" }, "the socket is gone");
  // The fault armed before the reset is gone too: this delete succeeds.
  const out = a.fetch("/", ops({ op: "delete-self-durable" })).json().outcomes;
  assert.deepEqual(out, [{ ok: null }]);
  assert.deepEqual(host.actors().filter((x) => x.name === "r" && x.alarm !== null), []);
  const closed = createTestHost({ classes: { testee } });
  closed.close();
  assert.throws(() => closed.reset(), { code: "closed" });
});

test("restart: what the actor kept in memory is gone, its database stays", () => {
  const a = host.actor("testee", "restarted");
  a.fetch("/", ops({ op: "exec", sql: "CREATE TABLE t(x)" }, { op: "exec", sql: "INSERT INTO t VALUES (1)" }));
  a.restart();
  assert.deepEqual(a.rows("t"), [{ x: 1 }]);
  assert.deepEqual(a.rows("init_log"), [{ n: 1 }], "on-init does not run again");
});

test("operatorDelete runs no guest code; deletionStatus tells it from positive evidence", () => {
  const a = host.actor("testee", "operated");
  assert.deepEqual(a.deletionStatus(), { status: "not-deleted" });
  a.fetch("/", ops({ op: "exec", sql: "CREATE TABLE t(x)" }));
  assert.equal(a.operatorDelete(), "deleted");
  assert.equal(a.operatorDelete(), "absent");
  const status = a.deletionStatus();
  assert.equal(status.status, "deleted");
  assert.equal(status.how, "operator");
  assert.equal(status.at.getTime(), host.now());
  assert.throws(() => a.requestOperatorDelete(), { code: "needs-cluster" }, "the cluster's verb says what it needs");
});

test("a cluster: a request names its node; a node cut off is taken over", () => {
  const cluster = createTestHost({ classes: { testee }, nodes: 3 });
  try {
    assert.equal(cluster.nodes, 3);
    const a = cluster.actor("testee", "c");
    a.onNode(2).fetch("/", ops({ op: "exec", sql: "CREATE TABLE t(x)" }, { op: "exec", sql: "INSERT INTO t VALUES (7)" }));
    cluster.cutOff(2);
    const read = a.fetch("/", { node: 3, ...ops({ op: "query", sql: "SELECT x FROM t" }) }).json().outcomes[0];
    assert.deepEqual(read.ok.rows, [[{ integer: "7" }]]);
    assert.throws(() => a.onNode(4).get(), { code: "no-such-node" });
    assert.throws(() => a.onNode(0), /numbered from 1/);
    assert.throws(() => cluster.setExpireAfterIdle("testee", 1000), { code: "bad-argument" });
  } finally {
    cluster.close();
  }
  assert.throws(() => createTestHost({ classes: { testee }, nodes: 0 }), /1 to 16 nodes/);
});

test("a request answering 500 prints what the actor logged", () => {
  const printed = stderrOf(() => assert.equal(host.actor("probe", "fails").fetch("/fail/error").status, 500));
  assert.match(printed, /GET \/fail\/error to test\/app:probe\/fails answered 500; what the actor logged/);
  assert.match(printed, /\[error test\/app:probe\/fails\] .*Error: boom/);
  assert.equal(stderrOf(() => host.actor("probe", "fine").fetch("/")), "", "nothing for a 200");
});

test("under runChaos a 5xx is explained only for the seed that fails", () => {
  const fails = (h) => h.actor("probe", "fails").fetch("/fail/error");
  const passing = stderrOf(() => assert.equal(runChaos(host, { seeds: [1, 2, 3] }, fails), 3));
  assert.doesNotMatch(passing, /answered 5/, "passing seeds print nothing");
  let failure;
  const failing = stderrOf(() => {
    try {
      runChaos(host, { seeds: [4] }, (h) => {
        fails(h);
        throw new Error("the body failed");
      });
    } catch (e) {
      failure = e;
    }
  });
  assert.ok(failure instanceof ChaosFailure, String(failure));
  assert.match(failing, /GET \/fail\/error to test\/app:probe\/fails answered 5/, "the failing seed's are printed");
  assert.match(failure.logs, /answered 5/, "and kept on the failure");
});

test("printLogsIfFailed prints only for a failed test", () => {
  host.actor("testee", "logger").fetch("/", ops({ op: "log", message: "a line to show" }));
  assert.equal(stderrOf(() => assert.equal(host.printLogsIfFailed({ passed: true, name: "ok" }), false)), "");
  const printed = stderrOf(() => assert.equal(host.printLogsIfFailed({ passed: false, name: "broken" }), true));
  assert.match(printed, /the test "broken" failed; what the host's actors logged/);
  assert.match(printed, /a line to show/);
});

test("runChaos: each seed after a reset, a failure reported with its seed and schedule, no chaos left", () => {
  const seen = [];
  const ran = runChaos(host, { seeds: [3, 5] }, (h, seed) => {
    assert.equal(h, host);
    seen.push(seed);
    assert.equal(h.actor("testee", "x").exists(), false, "each seed starts from a reset");
    h.actor("testee", "x").fetch("/", ops({ op: "exec", sql: "CREATE TABLE t(x)" }));
  });
  assert.equal(ran, 2);
  assert.deepEqual(seen, [3, 5]);

  let calls = 0;
  const failure = (() => {
    try {
      runChaos(host, { seeds: 50 }, (h) => {
        calls++;
        for (let i = 0; i < 4; i++) {
          const out = h.actor("testee", "x").fetch("/", ops({ op: "delete-self-durable" })).json().outcomes;
          // Fails once the schedule armed a failed removal before an event.
          assert.deepEqual(out, [{ ok: null }], "a quiet removal");
        }
      });
    } catch (e) {
      return e;
    }
  })();
  assert.ok(failure instanceof ChaosFailure, String(failure));
  assert.ok(failure.schedule.length > 0);
  assert.equal(calls, failure.seed + 1, "it stops at the first failing seed");
  assert.match(failure.message, new RegExp(`^the test failed under seed ${failure.seed} \\(replay it alone with WASMKEEP_CHAOS_SEED=${failure.seed}\\): a quiet removal`));
  assert.ok(failure.message.includes(failure.schedule[0].text), failure.message);
  assert.ok(failure.schedule.some((r) => r.step === "fail-removal" && r.actor === "test/app:testee/x" && r.node === 1));
  assert.ok(failure.cause instanceof assert.AssertionError);
  assert.deepEqual(host.native.endChaos().records, [], "no chaos left running after a failure");

  assert.throws(() => runChaos(host, { seeds: 1 }, () => Promise.resolve()), /must be synchronous/);
  assert.deepEqual(host.native.endChaos().records, [], "nor after a refused body");
  assert.throws(() => runChaos({}, { seeds: 1 }, () => {}), /host is a TestHost/);
  assert.throws(() => runChaos(host, { seeds: -1 }, () => {}), /give a count/);
});

test("runChaos on a cluster: the schedule picks each event's node and draws the cluster's steps", () => {
  const cluster = createTestHost({ classes: { testee }, nodes: 2 });
  try {
    const steps = new Set();
    const nodes = new Set();
    for (let seed = 0; seed < 6; seed++) {
      let statuses = [];
      const failure = (() => {
        try {
          runChaos(cluster, { seeds: [seed] }, (h) => {
            const a = h.actor("testee", "c");
            for (let i = 0; i < 8; i++) statuses.push(a.fetch("/", ops({ op: "exec-durable", sql: "CREATE TABLE IF NOT EXISTS t(x)" })).status);
            throw new Error("the end of the body");
          });
        } catch (e) {
          return e;
        }
      })();
      assert.ok(failure instanceof ChaosFailure, String(failure));
      for (const r of failure.schedule) {
        steps.add(r.step);
        nodes.add(r.node);
      }
      // A cluster's event may meet a cut-off node or a lost hold: 503, try again.
      assert.ok(statuses.every((s) => [200, 500, 503].includes(s)), `statuses ${statuses}`);
      statuses = [];
    }
    assert.deepEqual([...nodes].sort(), [1, 2], "events went to both nodes");
    assert.ok(["fail-upload", "upload-lands-but-fails", "lose-hold", "cut-off"].some((s) => steps.has(s)), `cluster steps drawn: ${[...steps]}`);
  } finally {
    cluster.close();
  }
});

test("WASMKEEP_CHAOS_SEED runs that seed alone, and a bad value says what to give", (t) => {
  if (process.env.WASMKEEP_CHAOS_SEED) return t.skip("WASMKEEP_CHAOS_SEED is set for this run");
  try {
    process.env.WASMKEEP_CHAOS_SEED = "42";
    const seen = [];
    assert.equal(runChaos(host, { seeds: 1000 }, (_, seed) => seen.push(seed)), 1);
    assert.deepEqual(seen, [42]);
    process.env.WASMKEEP_CHAOS_SEED = "forty-two";
    assert.throws(() => runChaos(host, { seeds: 3 }, () => {}), /WASMKEEP_CHAOS_SEED="forty-two" is not a seed: give the number a failure printed/);
  } finally {
    delete process.env.WASMKEEP_CHAOS_SEED;
  }
  assert.ok(host instanceof TestHost);
});

test("history and restore: back to a time, then the undo; refusals by code", () => {
  const without = host.actor("testee", "no-history");
  without.fetch("/", ops({ op: "exec", sql: "CREATE TABLE t(x)" }));
  assert.throws(() => without.history(), { code: "bad-argument" }, "a host started without history keeps none");
  assert.throws(() => without.restore({ time: host.now() }), { code: "bad-argument" });

  const back = createTestHost({ classes: { testee }, history: true });
  try {
    const a = back.actor("testee", "back");
    const count = () => a.fetch("/", ops({ op: "query", sql: "SELECT count(*) AS n FROM t" })).json().outcomes[0].ok.rows[0][0];
    a.fetch("/", ops({ op: "exec", sql: "CREATE TABLE t(x)" }, { op: "exec", sql: "INSERT INTO t VALUES (1)" }));
    back.advance(1_000);
    const one = back.now();
    back.advance(1_000);
    a.fetch("/", ops({ op: "exec", sql: "INSERT INTO t VALUES (2)" }));
    const history = a.history();
    assert.ok(history.length >= 2, JSON.stringify(history));
    assert.ok(history.every((p, i) => i === 0 || history[i - 1].bookmark < p.bookmark), "bookmarks sort as positions do");
    assert.equal(history.at(-1).head, true);
    assert.ok(history.some((p) => p.at <= one) && history.some((p) => p.at > one), JSON.stringify(history));

    const restored = a.restore({ time: one });
    assert.deepEqual(count(), { integer: "1" }, "the state at the time of the first row");
    assert.equal(a.history().at(-1).bookmark, restored.at, "the restore is the new head");
    const undone = a.restore({ bookmark: restored.undo });
    assert.deepEqual(count(), { integer: "2" }, "the undo brings the second row back");
    assert.equal(undone.undo, restored.at);

    assert.throws(() => a.restore({ bookmark: "yesterday" }), { code: "bad-argument" }, "a malformed bookmark");
    assert.throws(() => a.restore({ time: 1 }), { code: "bad-argument" }, "a time before the first state");
    assert.throws(() => back.actor("testee", "never").restore({ time: one }), { code: "no-such-actor" });
    assert.deepEqual(back.actor("testee", "never").history(), []);
    assert.throws(() => a.restore({}), TypeError, "neither a bookmark nor a time");
  } finally {
    back.close();
  }
});
