// The QuickJS step of wasmkeep-build, run in its own node process:
//   node build/quickjs/componentize.mjs <bundle.js> <wit dir> <out.wasm>
// componentize-qjs directly, as `jco componentize --backend quickjs
// --backend-qjs-disable-async` called it (the same options, so the same
// bytes), without jco: jco depends on StarlingMonkey's toolchain
// (ComponentizeJS, binaryen, a second TypeScript), which a project on the
// default engine does not install (ADR 071).
import { componentize } from "componentize-qjs";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

const [bundleArg, witArg, outArg] = process.argv.slice(2);
if (!bundleArg || !witArg || !outArg) {
  process.stderr.write("usage: build/quickjs/componentize.mjs <bundle.js> <wit dir> <out.wasm>\n");
  process.exit(2);
}
const [bundle, witPath, out] = [bundleArg, witArg, outArg].map((p) => resolve(p));
try {
  // jco ran it from the bundle's folder; so does this.
  process.chdir(dirname(bundle));
  const { component } = await componentize({
    witPath,
    jsSource: readFileSync(bundle, "utf8"),
    jsPath: bundle,
    world: "actor",
    // The host calls exports synchronously: no component-model async ABI.
    sync: true,
  });
  writeFileSync(out, component);
} catch (e) {
  process.stderr.write(`${e?.stack ?? e}\n`);
  process.exit(1);
}
