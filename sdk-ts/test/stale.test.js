// Tests never run a stale component: a class whose component is older than
// its sources is built first (its build command, from the class, the
// wasmkeep.toml or the package.json), or the host refuses to start saying
// which command builds it. The builds here copy the testee (a real build is
// wasmkeep-build's, tested by the new-user trial).
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTestHost } from "@wasmkeep/actor/testing";
import { testee } from "./fixtures/testee.js";

let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "wasmkeep-stale-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A project in `dir/name`: src/actor.ts written at `srcAt`, actor.wasm (a copy of the testee) at `builtAt` (seconds). */
function project(name, { srcAt, builtAt }) {
  const p = join(dir, name);
  mkdirSync(join(p, "src"), { recursive: true });
  writeFileSync(join(p, "src", "actor.ts"), "// the actor\n");
  utimesSync(join(p, "src", "actor.ts"), srcAt, srcAt);
  if (builtAt !== undefined) {
    copyFileSync(testee, join(p, "actor.wasm"));
    utimesSync(join(p, "actor.wasm"), builtAt, builtAt);
  }
  return p;
}

/** A build command for `p`: a script that copies the testee into actor.wasm. */
function copyBuild(p) {
  writeFileSync(join(p, "build.cjs"), `require("fs").copyFileSync(${JSON.stringify(testee)}, "actor.wasm");\n`);
  return "node build.cjs";
}

/** What the harness wrote to stderr while `run` ran, and what it returned or threw. */
function stderrOf(run) {
  const write = process.stderr.write;
  let out = "";
  process.stderr.write = (chunk) => ((out += String(chunk)), true);
  try {
    return { value: run(), out };
  } catch (error) {
    return { error, out };
  } finally {
    process.stderr.write = write;
  }
}

function manifest(p, extra) {
  writeFileSync(join(p, "wasmkeep.toml"), `app = "t/stale"\n\n[classes.testee]  # the testee\ncomponent = "actor.wasm"\n${extra}`);
  return join(p, "wasmkeep.toml");
}

test("a component newer than its sources loads without a build", () => {
  const p = project("fresh", { srcAt: 1000, builtAt: 2000 });
  const host = createTestHost({ classes: { testee: { component: join(p, "actor.wasm"), sources: join(p, "src"), build: "exit 3" } } });
  host.close();
});

test("a stale component is built first with the class's build command", () => {
  const p = project("stale", { srcAt: 2000, builtAt: 1000 });
  const { value: host, error, out } = stderrOf(() =>
    createTestHost({ manifest: manifest(p, `build = ${JSON.stringify(copyBuild(p))}\nwatch = ["src"]\n`) }),
  );
  assert.ifError(error);
  try {
    assert.match(out, /class testee: the component .*actor\.wasm is older than its sources \(.*src\/actor\.ts changed since it was built\): building it with `node build\.cjs` in .*stale \(from .*wasmkeep\.toml\)/);
    assert.equal(host.actor("testee", "a").fetch("/", { json: { ops: [] } }).status, 200);
  } finally {
    host.close();
  }
});

test("a missing component with a known build command is built", () => {
  const p = project("missing", { srcAt: 2000 });
  manifest(p, `build = ${JSON.stringify(copyBuild(p))}\n`);
  // The class is given by path: the wasmkeep.toml beside it names it, with its build.
  const { value: host, error, out } = stderrOf(() => createTestHost({ classes: { testee: join(p, "actor.wasm") } }));
  assert.ifError(error);
  assert.match(out, /the component .*actor\.wasm does not exist: building it with `node build\.cjs` in .*missing \(from .*wasmkeep\.toml\)/);
  host.close();
});

test("staleComponents: \"fail\" refuses a stale component, naming the command that builds it", () => {
  const p = project("fail", { srcAt: 2000, builtAt: 1000 });
  manifest(p, `build = "npm run build --silent"\nwatch = ["src"]\n`);
  assert.throws(
    () => createTestHost({ classes: { testee: join(p, "actor.wasm") }, staleComponents: "fail" }),
    /class testee: the component .*actor\.wasm is older than its sources \(.*src\/actor\.ts changed since it was built\): build it with `npm run build --silent` in .*fail before testing/,
  );
});

test("a package.json whose build script writes the component: its entry's directory are the sources", () => {
  const p = project("package", { srcAt: 2000, builtAt: 1000 });
  writeFileSync(join(p, "package.json"), JSON.stringify({ scripts: { build: "wasmkeep-build src/actor.ts -o actor.wasm" } }));
  writeFileSync(join(p, "test.js"), "");
  assert.throws(
    () => createTestHost({ classes: { testee: join(p, "actor.wasm") }, staleComponents: "fail" }),
    /src\/actor\.ts changed since it was built\): build it with `npm run build --silent` in /,
  );
  // Tests and other files outside the entry's directory are not its sources.
  utimesSync(join(p, "src", "actor.ts"), 500, 500);
  createTestHost({ classes: { testee: join(p, "actor.wasm") }, staleComponents: "fail" }).close();
});

test("a failed build, or one that does not write the component, stops the host with what to do", () => {
  const p = project("broken", { srcAt: 2000, builtAt: 1000 });
  const failing = stderrOf(() => createTestHost({ classes: { testee: { component: join(p, "actor.wasm"), sources: join(p, "src"), build: "echo compile error >&2; exit 4" } } }));
  assert.match(failing.error?.message ?? "", /building .*actor\.wasm with `echo compile error >&2; exit 4` failed \(4\); its output is above/);
  const idle = stderrOf(() => createTestHost({ classes: { testee: { component: join(p, "actor.wasm"), sources: join(p, "src"), build: "true" } } }));
  assert.match(idle.error?.message ?? "", /`true` ran, but .*actor\.wasm is still older than .*actor\.ts: make the build command write that file/);
  // Without a build command known: the message says how to build it.
  const unknown = stderrOf(() => createTestHost({ classes: { testee: { component: join(p, "actor.wasm"), sources: join(p, "src") } } }));
  assert.match(unknown.error?.message ?? "", /is older than its sources .*: build it with `npx wasmkeep-build <your entry, e\.g\. src\/actor\.ts> -o /);
  createTestHost({ classes: { testee: { component: join(p, "actor.wasm"), sources: join(p, "src") } }, staleComponents: "ignore" }).close();
});
