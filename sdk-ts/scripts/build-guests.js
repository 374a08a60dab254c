#!/usr/bin/env node
// Builds the repository's TypeScript guests into target/components/ with the
// SDK's own build command, installing npm dependencies where node_modules is
// missing (`npm ci`, from the lock files). Run from anywhere:
//
//   node sdk-ts/scripts/build-guests.js [--only <name>] [--backend <engine>] [--quiet]
//
// Components are cached by content hash in target/wasmkeep-ts-cache/, so an
// unchanged guest is not componentized again. The QuickJS backend (the
// default) needs the storage adapter and its composer in sdk-ts/build/quickjs/parts/,
// which `cargo xtask ts-quickjs` builds (`cargo xtask setup` and `cargo xtask
// guests --all` run it first): this script only checks that they are current.
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { newestUnder, quickjsPartsProblem } from "../build/quickjs/parts.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const sdk = join(root, "sdk-ts");

/** name → [package dir, entry (relative to it), engine (default: --backend, else wasmkeep-build's)] */
const GUESTS = {
  "conformance-testee-ts": ["conformance/testees/ts", "src/testee.ts"],
  // The other engine runs the whole matrix too (conformance/languages.toml).
  "conformance-testee-ts-starlingmonkey": ["conformance/testees/ts", "src/testee.ts", "starlingmonkey"],
  "counter-ts": ["examples/counter-ts", "src/actor.ts"],
  // The benchmark measures the other engine beside the default.
  "counter-ts-starlingmonkey": ["examples/counter-ts", "src/actor.ts", "starlingmonkey"],
  "chat-ts": ["examples/chat-ts", "src/actor.ts"],
  "bank-ts": ["examples/bank-ts", "src/actor.ts"],
  // Its deliberately wrong variant (examples/bank-ts/test/chaos.test.js).
  "bank-ts-broken": ["examples/bank-ts", "src/broken.ts"],
  // The SDK's own probe actor (test/errors.test.js).
  "sdk-ts-probe": ["sdk-ts", "test/probe/actor.ts"],
  "sdk-ts-probe-starlingmonkey": ["sdk-ts", "test/probe/actor.ts", "starlingmonkey"],
  // The SDK's per-call costs inside each engine (`wasmkeep-bench --only ts-sdk`, ADR 057).
  "sdk-ts-hot-path": ["sdk-ts", "bench/hot-path.ts"],
  "sdk-ts-hot-path-starlingmonkey": ["sdk-ts", "bench/hot-path.ts", "starlingmonkey"],
};

const args = process.argv.slice(2);
const only = [];
let backend;
let quiet = false;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--only") only.push(args[++i]);
  else if (args[i] === "--backend") backend = args[++i];
  else if (args[i] === "--quiet") quiet = true;
  else {
    console.error(`build-guests: unknown argument ${args[i]}`);
    process.exit(2);
  }
}

function run(cmd, argv, cwd) {
  const r = spawnSync(cmd, argv, { cwd, stdio: "inherit" });
  if (r.status !== 0) {
    console.error(`build-guests: \`${cmd} ${argv.join(" ")}\` in ${cwd} failed (${r.status ?? r.signal})`);
    process.exit(1);
  }
}

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
function ensureInstalled(dir) {
  if (!existsSync(join(dir, "node_modules"))) {
    console.error(`build-guests: npm ci in ${dir.slice(root.length + 1) || "."}`);
    run(npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], dir);
  }
}

ensureInstalled(sdk);
// The SDK's JavaScript (dist/) is compiled from src/ when it is missing or older.
const distIndex = join(sdk, "dist", "index.js");
if (!existsSync(distIndex) || statSync(distIndex).mtimeMs < newestUnder(join(sdk, "src"))) {
  console.error("build-guests: compiling the SDK (tsc -p sdk-ts)");
  run(process.execPath, [join(sdk, "node_modules", "typescript", "bin", "tsc"), "-p", "."], sdk);
}
// And the test harness's (dist/testing/, from testing/src/), which the examples' tests import.
const testingIndex = join(sdk, "dist", "testing", "index.js");
if (!existsSync(testingIndex) || statSync(testingIndex).mtimeMs < newestUnder(join(sdk, "testing", "src"))) {
  console.error("build-guests: compiling the test harness (tsc -p sdk-ts/testing)");
  run(process.execPath, [join(sdk, "node_modules", "typescript", "bin", "tsc"), "-p", "testing"], sdk);
}

const names = only.length ? only : Object.keys(GUESTS);
for (const name of names) {
  if (!GUESTS[name]) {
    console.error(`build-guests: unknown guest ${name}: ${Object.keys(GUESTS).join(", ")}`);
    process.exit(2);
  }
}
const engineOf = (name) => GUESTS[name][2] ?? backend ?? "quickjs";
if (names.some((name) => ["quickjs", "qjs"].includes(engineOf(name)))) {
  const problem = quickjsPartsProblem(root);
  if (problem) {
    console.error(`build-guests: the QuickJS backend's parts: ${problem}`);
    process.exit(1);
  }
}
for (const name of names) {
  const guest = GUESTS[name];
  const dir = join(root, guest[0]);
  if (!existsSync(dir)) continue;
  ensureInstalled(dir);
  const out = join(root, "target", "components", `${name}.wasm`);
  const argv = [join(sdk, "bin", "wasmkeep-build.js"), guest[1], "-o", out, "--cache-dir", join(root, "target", "wasmkeep-ts-cache")];
  argv.push("--backend", engineOf(name));
  if (quiet) argv.push("--quiet");
  run(process.execPath, argv, dir);
}
