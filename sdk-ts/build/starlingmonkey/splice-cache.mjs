// Keeps ComponentizeJS's binding splice between builds. The splice (the
// engine with the WIT world's bindings spliced in, and their JS glue) depends
// only on the engine, the features, the WIT and the world, never on the
// actor's code, yet it took 6 of a counter's 8 s of build. It is kept by the
// hash of those inputs in the build cache.
//
// ComponentizeJS has no option for this, so its splicer object, which its
// componentize() calls, is wrapped before componentize() runs. The version is
// pinned exactly (package.json); if the module has not the expected shape,
// nothing is wrapped and every build splices as before.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Hashes every file under `dir` (names and contents, in a stable order). */
function hashDir(hash, dir) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    hash.update(`${name}\0`);
    if (statSync(p).isDirectory()) hashDir(hash, p);
    else hash.update(readFileSync(p));
  }
}

function keyOf(args) {
  const [engine, features, witWorld, witPath, worldName, rest] = args;
  const hash = createHash("sha256").update(engine);
  hash.update(JSON.stringify([features, witWorld ?? null, worldName, rest ?? null]));
  if (witPath && existsSync(witPath)) hashDir(hash, witPath);
  return hash.digest("hex");
}

function read(dir) {
  const meta = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8"));
  return {
    wasm: new Uint8Array(readFileSync(join(dir, "engine.wasm"))),
    jsBindings: readFileSync(join(dir, "bindings.js"), "utf8"),
    exports: meta.exports,
    imports: meta.imports,
  };
}

function write(dir, r) {
  // A directory left without its meta.json (an interrupted write) is replaced.
  rmSync(dir, { recursive: true, force: true });
  const tmp = `${dir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(tmp, "engine.wasm"), r.wasm);
  writeFileSync(join(tmp, "bindings.js"), r.jsBindings);
  writeFileSync(join(tmp, "meta.json"), JSON.stringify({ exports: r.exports, imports: r.imports }));
  try {
    renameSync(tmp, dir);
  } catch {
    // Another build wrote it first: its copy is the same.
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Wraps the splicer so that its results are kept in `cacheDir`; false if it could not. */
export async function cacheSplices(cacheDir) {
  let splicer;
  try {
    const entry = import.meta.resolve("@bytecodealliance/componentize-js");
    ({ splicer } = await import(new URL("../lib/spidermonkey-embedding-splicer.js", entry).href));
  } catch {
    return false;
  }
  const splice = splicer?.spliceBindings;
  if (typeof splice !== "function") return false;
  splicer.spliceBindings = (...args) => {
    const dir = join(cacheDir, keyOf(args));
    if (existsSync(join(dir, "meta.json"))) {
      try {
        return read(dir);
      } catch {
        // A damaged entry: splice again and replace it.
        rmSync(dir, { recursive: true, force: true });
      }
    }
    const r = splice(...args);
    if (r && r.wasm instanceof Uint8Array && typeof r.jsBindings === "string") {
      mkdirSync(cacheDir, { recursive: true });
      write(dir, r);
    }
    return r;
  };
  return true;
}
