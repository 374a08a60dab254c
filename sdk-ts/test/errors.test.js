// What a failing actor shows its author, on each engine: the probe actor
// (test/probe/actor.ts, built by `node scripts/build-guests.js` into
// target/components/sdk-ts-probe.wasm with QuickJS and
// sdk-ts-probe-starlingmonkey.wasm) fails in every way a handler can, and a failed event's answer (the guest's
// output, then the host's one line) must start with `Name: message`, then the
// actor's own stack frames, once. Also: a build with storage at module scope.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { CallFailure, createTestHost } from "@wasmkeep/actor/testing";

const sdk = fileURLToPath(new URL("..", import.meta.url));
const components = join(sdk, "..", "target", "components");
const PROBES = { quickjs: join(components, "sdk-ts-probe.wasm"), starlingmonkey: join(components, "sdk-ts-probe-starlingmonkey.wasm") };

for (const [engine, probe] of Object.entries(PROBES)) describe(engine, () => {
  let host;
  before(() => {
    host = createTestHost({ classes: { probe } });
  });
  after(() => host.close());

  /** The lines of a failed request's answer. */
  function failure(path, name = path.replace(/\W/g, "-")) {
    const r = host.actor("probe", name).fetch(path);
    assert.equal(r.status, 500, r.text());
    const lines = r.text().split("\n");
    assert.match(lines.at(-1), /^the event trapped \(/, "the host's line comes last");
    assert.ok(!lines.some((l) => l === "Stack:"), `the engine's own dump is not there:\n${r.text()}`);
    assert.ok(!lines.some((l) => /__wasmkeepEvent|duringEvent|\bguard\b|initializer\.js/.test(l)), `the SDK's frames are left out:\n${r.text()}`);
    return lines;
  }

  const frame = /^    at \S/;

  test("a thrown Error: `Error: message` first, then the actor's frames, once", () => {
    const lines = failure("/fail/error");
    assert.equal(lines[0], "Error: boom");
    assert.match(lines[1], frame);
    assert.match(lines[1], /fail/, "the innermost frame is the actor's function that threw");
    // On both engines the SDK reports the failure through the WIT
    // (context.report-failure): the host answers with that report, not with
    // what the engine printed (StarlingMonkey's trap value, QuickJS's panic line).
    assert.equal(lines.filter((l) => l.includes("boom")).length, 1, `the message once:\n${lines.join("\n")}`);
    assert.ok(!lines.some((l) => l.startsWith("Failed to call") || l.includes("onRequest failed")), `no engine wrapping:\n${lines.join("\n")}`);
  });

  test("an error's own name comes first (a subclass, the SDK's TypeError, SqlError)", () => {
    assert.equal(failure("/fail/named")[0], "NamedError: named boom");
    assert.equal(failure("/fail/sdk-type-error")[0], "TypeError: parameter 1: cannot bind a object ([object Object]) as an SQL value");
    const sql = failure("/fail/sql");
    assert.match(sql[0], /^SqlError: near "SELEC": syntax error/);
    assert.match(sql[1], frame);
  });

  test("json(undefined) throws a TypeError instead of answering an empty body", () => {
    const lines = failure("/fail/json-undefined");
    assert.match(lines[0], /^TypeError: json\(undefined\): the value has no JSON form/);
    assert.match(lines[1], /^    at json/);
  });

  test("values that are not Errors say what was thrown", () => {
    assert.equal(failure("/fail/string")[0], '"a string" thrown (a string, not an Error: no stack)');
    assert.equal(failure("/fail/object")[0], '{"code":7} thrown (an object, not an Error: no stack)');
    assert.equal(failure("/fail/undefined")[0], "undefined thrown (not an Error: no stack)");
    assert.equal(failure("/fail/null")[0], "null thrown (not an Error: no stack)");
  });

  test("an Error without a stack still says `Error: message`", () => {
    const lines = failure("/fail/no-stack");
    assert.equal(lines[0], "Error: no stack here");
    assert.doesNotMatch(lines[1], frame);
  });

  test("an answer of the wrong type is a TypeError that says what an answer is", () => {
    assert.match(failure("/fail/bad-answer")[0], /^TypeError: the answer is a number: answer with a string, text\(\.\.\.\), json\(\.\.\.\)/);
    assert.match(failure("/fail/bad-body")[0], /^TypeError: the response's body is an object: a body is a string or a Uint8Array/);
    assert.match(failure("/fail/bad-status")[0], /^TypeError: /);
  });

  test("a send taken off the responder still sends", () => {
    const r = host.actor("probe", "sent-by").fetch("/sent-by");
    assert.equal(r.status, 200, r.text());
    assert.equal(r.text(), "sent by a detached send; sent = false");
  });

  test("json() writes bigints as numbers, or as their digits where the engine has no JSON.rawJSON", () => {
    const r = host.actor("probe", "json-bigint").fetch("/json-bigint");
    assert.equal(r.status, 200, r.text());
    const asNumbers = '{"small":1,"big":12345678901234567890,"list":[2,"x",null],"at":7}';
    const asDigits = '{"small":"1","big":"12345678901234567890","list":["2","x",null],"at":7}';
    assert.ok([asNumbers, asDigits].includes(r.text()), r.text());
  });

  test("a handler gets exactly its event's arguments", () => {
    const r = host.actor("probe", "arity").fetch("/arity");
    assert.equal(r.status, 200, r.text());
    assert.equal(r.text(), "2");
  });

  test("onInit: its failure answers the request with `Name: message` first (after the host's one line about on-init)", () => {
    const lines = failure("/", "init-fails");
    assert.match(lines[0], /^on-init failed, .*: RangeError: onInit boom$/);
    assert.match(lines[1], /^    at onInit/);
  });

  function logged(prefix) {
    return host.logs().find((l) => l.message.startsWith(prefix));
  }

  test("onAlarm, onSocketMessage and onCall failures reach the host's log as `Name: message` and the stack", () => {
    const a = host.actor("probe", "alarm");
    a.fetch("/alarm");
    host.advance(1);
    a.runAlarm();
    const alarm = logged("onAlarm threw (the event failed): Error: onAlarm boom\n");
    assert.ok(alarm, JSON.stringify(host.logs()));
    assert.match(alarm.message.split("\n")[1], /^    at onAlarm/);

    const s = host.actor("probe", "socket").openSocket("/");
    s.send("throw");
    host.actor("probe", "socket").settle();
    assert.ok(logged("onSocketMessage threw (the event failed): TypeError: onSocketMessage boom\n"), JSON.stringify(host.logs()));

    assert.throws(() => host.actor("probe", "callee").call("throw"), (e) => e instanceof CallFailure && e.code === "rejected" && e.message.includes("onCall boom"));
    assert.ok(logged('onCall threw (the caller gets CallError "rejected"): Error: onCall boom\n'));
    assert.throws(() => host.actor("probe", "callee").call("throw-string"), (e) => e instanceof CallFailure && e.code === "rejected" && e.message.includes("onCall string"));
  });

  test("log.error(error) writes `Name: message` and the stack, not the stack alone", () => {
    assert.equal(host.actor("probe", "log").fetch("/fail/log-error").status, 200);
    const l = logged("logged: TypeError: logged type error\n");
    assert.ok(l, JSON.stringify(host.logs()));
    assert.match(l.message.split("\n")[1], frame);
  });

  test("console.log, warn and error work (on QuickJS they go to the host's log, by level)", () => {
    assert.equal(host.actor("probe", "console").fetch("/fail/console").text(), "printed");
    if (engine !== "quickjs") return;
    const mine = host.logs().filter((l) => l.message.startsWith("console."));
    assert.deepEqual(
      mine.map((l) => [l.level, l.message.split("\n")[0]]),
      [["info", 'console.log 1 {"a":"2"}'], ["warn", "console.warn"], ["error", "console.error RangeError: console range"]],
    );
    assert.match(mine[2].message.split("\n")[1], frame);
  });

  test("a Request offers what the README lists", () => {
    const r = host.actor("probe", "req").fetch("/request/x?a=1&b=two%20words&a=3", {
      method: "PUT",
      headers: { "X-Probe": "yes", "content-type": "application/json" },
      body: '{"n":1}',
    });
    assert.equal(r.status, 200, r.text());
    const got = r.json();
    assert.equal(got.method, "PUT");
    assert.equal(got.path, "/request/x?a=1&b=two%20words&a=3");
    assert.equal(got.pathname, "/request/x");
    assert.deepEqual(got.query, { a: "1", b: "two words" });
    assert.ok(got.headers.some(([k, v]) => k.toLowerCase() === "x-probe" && v === "yes"));
    assert.equal(got.header, "yes");
    assert.equal(got.text, '{"n":1}');
    assert.deepEqual(got.json, { n: 1 });
    assert.equal(got.bodyBytes, 7);
  });
});

test("storage at module scope fails the build, saying to move it into onInit or a handler", () => {
  const dir = mkdtempSync(join(tmpdir(), "wasmkeep-build-"));
  try {
    // QuickJS: the same check as StarlingMonkey's (both run the module's top level at build time), in 2 s instead of 10.
    const r = spawnSync(
      process.execPath,
      [join(sdk, "bin", "wasmkeep-build.js"), join(sdk, "test", "fixtures", "module-scope.ts"), "-o", join(dir, "x.wasm"), "--backend", "quickjs", "--cache-dir", dir, "-q"],
      { encoding: "utf8", cwd: sdk },
    );
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /module-scope\.ts calls storage\.exec\(\) at module scope/);
    assert.match(r.stderr, /at test\/fixtures\/module-scope\.ts: .*exec\("CREATE TABLE IF NOT EXISTS visits/);
    assert.match(r.stderr, /Move the call into onInit .* or into a handler/);
    assert.doesNotMatch(r.stderr, /wizer|backtrace|componentize\.js/i, "not the engine's trace");
    assert.ok(r.stderr.trim().split("\n").length <= 4, r.stderr);
    assert.equal(existsSync(join(dir, "x.wasm")), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
