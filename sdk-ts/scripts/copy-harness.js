#!/usr/bin/env node
// Copies the workspace's build of the harness addon into testing/ as
// wasmkeep-harness.node (stripped of debug info when `strip` is available), so
// that `npm pack` ships it.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const lib = process.platform === "darwin" ? "libwasmkeep_node_harness.dylib" : "libwasmkeep_node_harness.so";
const profile = process.argv[2] ?? "debug";
const src = join(pkg, "..", "target", profile, lib);
if (!existsSync(src)) {
  console.error(`copy-harness: ${src} is missing: cargo build -p wasmkeep-node-harness`);
  process.exit(1);
}
const dst = join(pkg, "testing", "wasmkeep-harness.node");
copyFileSync(src, dst);
spawnSync("strip", ["--strip-debug", dst], { stdio: "ignore" });
console.log(`copy-harness: wrote testing/wasmkeep-harness.node`);
