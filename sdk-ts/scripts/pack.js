#!/usr/bin/env node
// Makes the npm tarball of @wasmkeep/actor with its native parts, so that a
// project installs it without building anything from this repository:
//   testing/wasmkeep-harness.node   the test harness addon (napi-rs, sdk-ts/native/harness)
//   bin/native/wasmkeep-shim        the local host, run by `npx wasmkeep-shim`
//   build/quickjs/parts/wasmkeep-ts-compose  the QuickJS build's composer, and
//   build/quickjs/parts/quickjs-storage.wasm the storage adapter it plugs in
//                                   (ADR 017; `cargo xtask ts-quickjs` builds both)
// The native ones are built for this machine's platform with cargo (the
// profile given; release by default) and stripped of debug info.
//
//   node scripts/pack.js [--profile release|debug] [--no-build] [--out DIR]
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { quickjsPartsProblem } from "../build/quickjs/parts.js";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const root = resolve(pkg, "..");
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const profile = opt("--profile", "release");
const out = resolve(opt("--out", join(root, "target", "npm")));
const fail = (m) => {
  console.error(`pack: ${m}`);
  process.exit(1);
};
if (!["release", "debug"].includes(profile)) fail(`--profile is release or debug, not ${profile}`);

const run = (cmd, argv, cwd) => {
  const r = spawnSync(cmd, argv, { cwd, stdio: ["ignore", "inherit", "inherit"] });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${argv.join(" ")} failed (exit ${r.status})`);
};

if (!args.includes("--no-build")) {
  const cargo = ["build", "--quiet", "-p", "wasmkeep-node-harness", "-p", "wasmkeep-shim"];
  if (profile === "release") cargo.push("--release");
  run("cargo", cargo, root);
}
// The QuickJS backend's parts are built by `cargo xtask ts-quickjs`; this
// script only checks them (it never calls back into xtask).
const problem = quickjsPartsProblem(root, args.includes("--no-build") ? undefined : profile);
if (problem) fail(problem);
const lib = process.platform === "darwin" ? "libwasmkeep_node_harness.dylib" : "libwasmkeep_node_harness.so";
const parts = [
  [join(root, "target", profile, lib), join(pkg, "testing", "wasmkeep-harness.node")],
  [join(root, "target", profile, "wasmkeep-shim"), join(pkg, "bin", "native", "wasmkeep-shim")],
];
for (const [src, dst] of parts) {
  if (!existsSync(src)) fail(`${src} is missing: run without --no-build, or cargo build the ${profile} profile first`);
  mkdirSync(dirname(dst), { recursive: true });
  copyFileSync(src, dst);
  chmodSync(dst, 0o755);
  // Debug info is most of a debug build's size; the package does not need it.
  spawnSync("strip", ["--strip-debug", dst], { stdio: "ignore" });
}
mkdirSync(out, { recursive: true });
run("npm", ["pack", "--silent", "--pack-destination", out], pkg);
const tgz = readdirSync(out).filter((f) => f.endsWith(".tgz")).map((f) => join(out, f));
console.log(tgz.sort().at(-1));
