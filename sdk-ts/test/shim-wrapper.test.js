// The `npx wasmkeep-shim` wrapper (bin/wasmkeep-shim.js), run with a
// stand-in for the host binary: signals reach the host, its status is the
// wrapper's, and a kill of npx (which reaches only its `sh -c`) stops the
// host too. And what a TypeScript user is told about a missing component.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTestHost } from "@wasmkeep/actor/testing";

const sdk = fileURLToPath(new URL("..", import.meta.url));

test("createTestHost names wasmkeep-build when a component is missing", () => {
  assert.throws(
    () => createTestHost({ classes: { gone: join(tmpdir(), "no-such-actor.wasm") } }),
    (e) => /class gone: the component .*no-such-actor\.wasm does not exist: build it first \(npx wasmkeep-build /.test(e.message) && !/cargo|wasmkeep-shim build/.test(e.message),
  );
});

const wrapper = join(sdk, "bin", "wasmkeep-shim.js");

/** A stand-in for the host binary: records its pid and the signals it gets, exits 3 on SIGTERM. */
function fakeHost(dir) {
  const exe = join(dir, "fake-shim");
  writeFileSync(
    exe,
    `#!${process.execPath}
const fs = require("node:fs");
const log = (s) => fs.appendFileSync(${JSON.stringify(join(dir, "log"))}, s + "\\n");
log("started " + process.pid + " " + process.ppid + " " + process.argv.slice(2).join(" "));
process.on("SIGTERM", () => { log("SIGTERM"); process.exit(3); });
process.on("SIGINT", () => { log("SIGINT"); process.exit(4); });
if (process.argv[2] === "die") process.kill(process.pid, "SIGKILL");
setInterval(() => {}, 1000);
`,
  );
  chmodSync(exe, 0o755);
  return exe;
}

const readLog = (dir) => (existsSync(join(dir, "log")) ? readFileSync(join(dir, "log"), "utf8") : "");

async function until(what, f, ms = 10_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (f()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function exited(child) {
  return new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
}

test("the wrapper passes SIGTERM and SIGINT on and exits with the host's status", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wasmkeep-shim-"));
  try {
    const env = { ...process.env, WASMKEEP_SHIM: fakeHost(dir) };
    for (const [signal, status] of [["SIGTERM", 3], ["SIGINT", 4]]) {
      rmSync(join(dir, "log"), { force: true });
      const w = spawn(process.execPath, [wrapper, "serve", "--listen", "x"], { env, stdio: "ignore" });
      const done = exited(w);
      await until("the host to start", () => readLog(dir).includes("started"));
      assert.match(readLog(dir), /started \d+ \d+ serve --listen x/);
      w.kill(signal);
      assert.deepEqual(await done, { code: status, signal: null });
      assert.match(readLog(dir), new RegExp(`^${signal}$`, "m"));
    }
    // A host that dies of a signal: the wrapper dies of the same one.
    const w = spawn(process.execPath, [wrapper, "die"], { env, stdio: "ignore" });
    assert.deepEqual(await exited(w), { code: null, signal: "SIGKILL" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("killing what started the wrapper (npx's `sh -c`) stops the host", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wasmkeep-shim-"));
  let pids = [];
  try {
    const env = { ...process.env, WASMKEEP_SHIM: fakeHost(dir) };
    // As npx runs a package's bin: through a shell, which dies of a SIGTERM without passing it on.
    const sh = spawn("sh", ["-c", `"${process.execPath}" "${wrapper}" serve; echo unreachable`], { env, stdio: "ignore" });
    const shDone = exited(sh);
    await until("the host to start", () => readLog(dir).includes("started"));
    const [, hostPid, wrapperPid] = /started (\d+) (\d+)/.exec(readLog(dir)).map(Number);
    pids = [hostPid, wrapperPid];
    sh.kill("SIGTERM");
    await shDone;
    await until("the host to get SIGTERM", () => /^SIGTERM$/m.test(readLog(dir)));
    await until("the host to exit", () => !alive(hostPid));
    await until("the wrapper to exit", () => !alive(wrapperPid));
  } finally {
    // Whatever the outcome, leave no orphan behind.
    for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the wrapper names wasmkeep-build for a manifest's missing component", () => {
  const dir = mkdtempSync(join(tmpdir(), "wasmkeep-shim-"));
  try {
    writeFileSync(join(dir, "wasmkeep.toml"), 'app = "me/x"\n\n[classes.hello]  # the greeter\ncomponent = "hello.wasm"\n');
    const r = spawnSync(process.execPath, [wrapper, "serve", "--manifest", join(dir, "wasmkeep.toml")], {
      env: { ...process.env, WASMKEEP_SHIM: fakeHost(dir) },
      encoding: "utf8",
      cwd: dir,
    });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /class hello: the component hello\.wasm does not exist\. Build it first:\n  npx wasmkeep-build src\/actor\.ts -o hello\.wasm/);
    assert.doesNotMatch(r.stderr, /cargo|Cargo\.toml/);
    assert.equal(readLog(dir), "", "the host was not started");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
