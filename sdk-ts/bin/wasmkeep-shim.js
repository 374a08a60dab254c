#!/usr/bin/env node
// `npx wasmkeep-shim ...`: the local wasmkeep host that the package ships
// (bin/native/wasmkeep-shim, put there by scripts/pack.js), with its own
// arguments: `npx wasmkeep-shim serve --manifest wasmkeep.toml`, `--help`.
//
// This script stays between npx and the host: it passes SIGINT and SIGTERM
// on (the host then stops in order and prints "stopped"), stops the host when
// npx goes away (npx runs it through `sh -c`, and a `kill` of npx reaches
// only that shell, which dies without passing it on), and exits with the
// host's status.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { constants } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { platformFile, platformPackage } from "../build/platform.js";

// The platform package's host, else one put beside this script (an older tarball).
const exe =
  process.env.WASMKEEP_SHIM ?? platformFile("wasmkeep-shim") ?? join(dirname(fileURLToPath(import.meta.url)), "native", "wasmkeep-shim");
if (!existsSync(exe)) {
  process.stderr.write(
    `wasmkeep-shim: this copy of @wasmkeep/actor has no host binary (${exe}, nor the package ${platformPackage()}).\n` +
      "Install the two tarballs that `node scripts/pack.js` makes in sdk-ts/ of the wasmkeep repository, " +
      "or build the host there (`cargo build --release -p wasmkeep-shim`) and set WASMKEEP_SHIM to it.\n",
  );
  process.exit(1);
}

const args = process.argv.slice(2);

/**
 * The components a manifest names that do not exist, as [class, path]. The
 * host refuses such a manifest too, but its message is about building Rust
 * crates; a TypeScript project builds with wasmkeep-build. Anything this
 * simple reading does not understand is left to the host.
 */
function missingComponents(manifest) {
  let text;
  try {
    text = readFileSync(manifest, "utf8");
  } catch {
    return [];
  }
  const missing = [];
  let cls;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\s+#.*$/, "").trim();
    const table = /^\[\s*classes\.(?:"([^"]+)"|([A-Za-z0-9_-]+))\s*\]$/.exec(line);
    if (table) {
      cls = table[1] ?? table[2];
      continue;
    }
    if (line.startsWith("[")) {
      cls = undefined;
      continue;
    }
    const comp = /^component\s*=\s*(?:"([^"\\]*)"|'([^']*)')$/.exec(line);
    if (cls && comp) {
      const c = comp[1] ?? comp[2];
      const path = isAbsolute(c) ? c : resolve(dirname(manifest), c);
      if (!existsSync(path)) missing.push([cls, path]);
    }
  }
  return missing;
}

if (args[0] === "serve") {
  const i = args.findIndex((a) => a === "--manifest" || a.startsWith("--manifest="));
  const manifest = i < 0 ? undefined : args[i].startsWith("--manifest=") ? args[i].slice("--manifest=".length) : args[i + 1];
  const missing = manifest ? missingComponents(manifest) : [];
  if (missing.length) {
    for (const [cls, path] of missing) {
      const out = relative(process.cwd(), path) || path;
      process.stderr.write(
        `wasmkeep-shim: ${manifest}: class ${cls}: the component ${out} does not exist. Build it first:\n` +
          `  npx wasmkeep-build src/actor.ts -o ${out}      (your entry module in place of src/actor.ts)\n`,
      );
    }
    process.exit(1);
  }
}

const child = spawn(exe, args, { stdio: "inherit" });
let stopping = false;
function forward(signal) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    child.kill(signal);
  } catch {
    // Already gone: its exit follows.
  }
}
// Ctrl-C and kill reach the host, which stops in order and reports "stopped".
// A hang-up (the terminal closed) stops it the same way.
for (const [ours, theirs] of [["SIGINT", "SIGINT"], ["SIGTERM", "SIGTERM"], ["SIGHUP", "SIGTERM"]]) {
  process.on(ours, () => {
    stopping = true;
    forward(theirs);
  });
}
// When whatever started this script is gone (npx was killed and its `sh -c`
// with it), nobody will pass a signal on: stop the host as for SIGTERM.
const parent = process.ppid;
const watch = setInterval(() => {
  if (process.ppid !== parent && !stopping) {
    stopping = true;
    forward("SIGTERM");
  }
}, 200);
watch.unref();
child.on("error", (e) => {
  process.stderr.write(`wasmkeep-shim: cannot run ${exe}: ${e.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  clearInterval(watch);
  if (code !== null) process.exit(code);
  // The host died of a signal: die of the same one, so whoever waits sees it.
  process.removeAllListeners(signal);
  try {
    process.kill(process.pid, signal);
  } catch {
    // Fall through to the shell's convention.
  }
  process.exit(128 + (constants.signals[signal] ?? 0));
});
