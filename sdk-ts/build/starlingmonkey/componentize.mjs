// The StarlingMonkey step of wasmkeep-build, run in its own node process:
//   node build/starlingmonkey/componentize.mjs <bundle.js> <wit dir> <out.wasm> [<splice cache dir>]
// ComponentizeJS 0.23 directly, not through `jco componentize` (jco 1.35
// brings ComponentizeJS 0.22, whose spliced bindings run jco's async task
// machinery around every call and leak: docs/adr/017-typescript-engine.md).
// ENABLE_PBL turns on SpiderMonkey's portable baseline interpreter, which
// is in the engine build but off unless the environment asks for it.
import { componentize } from "@bytecodealliance/componentize-js";
import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { cacheSplices } from "./splice-cache.mjs";

const [bundle, witPath, out, spliceCache] = process.argv.slice(2);
if (!bundle || !witPath || !out) {
  process.stderr.write("usage: build/starlingmonkey/componentize.mjs <bundle.js> <wit dir> <out.wasm> [<splice cache dir>]\n");
  process.exit(2);
}
if (spliceCache && !(await cacheSplices(spliceCache))) {
  process.stderr.write("wasmkeep-build: note: ComponentizeJS's splicer is not where this SDK expects it; every build splices again (about 6 s)\n");
}
try {
  const { component } = await componentize(readFileSync(bundle, "utf8"), {
    // What stack traces name (`onRequest@actor.bundle.js:12:5`).
    sourceName: basename(bundle),
    witPath,
    worldName: "actor",
    // The host provides WASI 0.2 but not wasi:http; the actor answers its own events.
    disableFeatures: ["http", "fetch-event"],
    env: { ENABLE_PBL: "1" },
  });
  writeFileSync(out, component);
} catch (e) {
  process.stderr.write(`${e?.stack ?? e}\n`);
  process.exit(1);
}
