#!/usr/bin/env node
// `npx wasmkeep-shim ...`: the local wasmkeep host that the package ships
// (bin/native/wasmkeep-shim, put there by scripts/pack.js), with its own
// arguments: `npx wasmkeep-shim serve --manifest wasmkeep.toml`, `--help`.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const exe = process.env.WASMKEEP_SHIM ?? join(dirname(fileURLToPath(import.meta.url)), "native", "wasmkeep-shim");
if (!existsSync(exe)) {
  process.stderr.write(
    `wasmkeep-shim: this copy of @wasmkeep/actor has no host binary (${exe}).\n` +
      "Install the tarball that `node scripts/pack.js` makes in sdk-ts/ of the wasmkeep repository, " +
      "or build the host there (`cargo build --release -p wasmkeep-shim`) and set WASMKEEP_SHIM to it.\n",
  );
  process.exit(1);
}
const child = spawn(exe, process.argv.slice(2), { stdio: "inherit" });
// Ctrl-C and kill reach the host, which stops in order and reports "stopped".
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
