// The QuickJS build's own parts: the storage dialect derived from the WIT
// (build/quickjs/dialect.js) and what wasmkeep-build says when the composer or
// the adapter is missing. The round trip of every SQL value through the
// composed adapter is the conformance case params-round-trip-every-sql-value
// (the `ts` column runs on QuickJS).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { quickjsWit } from "../build/quickjs/dialect.js";

const sdk = fileURLToPath(new URL("..", import.meta.url));
const wit = readFileSync(join(sdk, "..", "wit", "actor.wit"), "utf8");

test("the dialect is the real storage with big-integer, and the real world with it", () => {
  const d = quickjsWit(wit);
  assert.match(d, /^package wasmkeep:actor-js@0\.2\.\d+;$/m);
  assert.match(d, /^\s+integer\(s64\),\n.*\n\s+big-integer\(string\),$/m);
  assert.match(d, /use wasmkeep:actor\/types@0\.2\.\d+\.\{sql-error\};/);
  for (const f of ["exec", "query", "exec-durable", "begin", "commit", "rollback", "delete-self", "delete-self-durable"]) {
    assert.match(d, new RegExp(`^    ${f}: func\\(`, "m"), f);
  }
  assert.match(d, /world actor \{\n    import storage;\n(    import wasmkeep:actor\/[a-z]+@[0-9.]+;\n)+    export wasmkeep:actor\/events@[0-9.]+;\n\}/);
  assert.equal(d, readFileSync(join(sdk, "generated", "wit-quickjs", "actor-js.wit"), "utf8"), "the committed copy is current (cargo xtask gen)");
});

test("a WIT the derivation does not recognise stops it, naming what changed", () => {
  assert.throws(() => quickjsWit(wit.replace("integer(s64),", "int(s64),")), /exactly one `integer\(s64\),` case in sql-value/);
  assert.throws(() => quickjsWit(wit.replace("use types.{sql-value, sql-error, query-result};", "use types.{sql-value};")), /use types\.\{sql-value, sql-error, query-result\}/);
  assert.throws(() => quickjsWit(wit.replace("    import storage;\n", "")), /`import storage;` in world actor/);
  assert.throws(() => quickjsWit(wit.replace("package wasmkeep:actor@", "package other:actor@")), /no `package wasmkeep:actor@<version>;` line/);
});

test("a QuickJS build without the composer says what is missing and what to do", () => {
  const dir = mkdtempSync(join(tmpdir(), "wasmkeep-build-"));
  try {
    const r = spawnSync(
      process.execPath,
      [join(sdk, "bin", "wasmkeep-build.js"), join(sdk, "test", "probe", "actor.ts"), "-o", join(dir, "x.wasm"), "--no-check", "--cache-dir", dir, "-q"],
      { encoding: "utf8", cwd: sdk, env: { ...process.env, WASMKEEP_TS_COMPOSE: join(dir, "no-such-composer") } },
    );
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /the QuickJS backend needs .*no-such-composer, which this copy of @wasmkeep\/actor lacks/);
    assert.match(r.stderr, /cargo xtask ts-quickjs/);
    assert.match(r.stderr, /--backend starlingmonkey/);
    assert.equal(existsSync(join(dir, "x.wasm")), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
