// The QuickJS backend of wasmkeep-build (the default; ADR 018): what differs
// from StarlingMonkey, in one place. The actor is bundled with its storage
// import pointed at the QuickJS dialect (generated/wit-quickjs/, which
// scripts/gen.js writes), componentized by componentize-qjs (the QuickJS
// componentizer jco's QuickJS backend runs, called directly: ADR 071) against
// that dialect, and then composed with the storage adapter, so that the component
// imports only wasmkeep:actor. The adapter and the composer are the two
// native parts in parts/ beside this file: the npm tarball ships them, and
// in the repository `cargo xtask ts-quickjs` builds them there (from
// sdk-ts/native/quickjs-storage and sdk-ts/native/compose).
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { platformFile } from "../platform.js";

const here = dirname(fileURLToPath(import.meta.url));

/** The WIT the actor is componentized against, and the file of it that keys the build cache. */
export const witDir = join(resolve(here, "..", ".."), "generated", "wit-quickjs");
export const witFile = join(witDir, "actor-js.wit");

/** Sends the SDK's `wasmkeep:actor/storage` import to the QuickJS dialect's storage (an esbuild plugin). */
export const storagePlugin = {
  name: "wasmkeep-quickjs-storage",
  setup(build) {
    build.onResolve({ filter: /^wasmkeep:actor\/storage@/ }, (args) => ({
      path: args.path.replace("wasmkeep:actor/", "wasmkeep:actor-js/"),
      external: true,
    }));
  },
};

/**
 * The storage adapter and the composer (WASMKEEP_TS_COMPOSE may name
 * another composer), with `missing`: those of them that do not exist.
 */
export function nativeParts() {
  const dir = join(here, "parts");
  // The composer is native: the platform package's, else the one the repository built here.
  const composer = process.env.WASMKEEP_TS_COMPOSE ?? platformFile("wasmkeep-ts-compose") ?? join(dir, "wasmkeep-ts-compose");
  const parts = { adapter: join(dir, "quickjs-storage.wasm"), composer };
  return { ...parts, missing: [parts.adapter, parts.composer].filter((p) => !existsSync(p)) };
}

/** The command line (after node) that componentizes `bundle` into `out` with componentize-qjs, without the async ABI (the host calls exports synchronously). */
export function componentizeArgs(bundle, out) {
  return [join(here, "componentize.mjs"), bundle, witDir, out];
}

/** The composer's command, [program, args], that plugs the adapter into `raw` and writes `out`. */
export function composeCommand(parts, raw, out) {
  return [parts.composer, [raw, "--plug", parts.adapter, "-o", out]];
}
