// The native parts of @wasmkeep/actor (the host binary, the test harness
// addon, the QuickJS composer) ship in a package per platform,
// @wasmkeep/actor-<platform>-<arch>-<libc>, which @wasmkeep/actor names in its
// optionalDependencies: npm installs only the one whose os, cpu and libc
// match (as esbuild, Biome and napi-rs ship binaries; ADR 029). Inside the
// repository the parts are found where the workspace builds them instead.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** The platform package's name for this process, e.g. @wasmkeep/actor-linux-x64-gnu. */
export function platformPackage() {
  const libc = process.platform === "linux" ? (process.report?.getReport?.().header?.glibcVersionRuntime ? "-gnu" : "-musl") : "";
  return `@wasmkeep/actor-${process.platform}-${process.arch}${libc}`;
}

/** The path of `file` in the installed platform package, or undefined when it is not installed. */
export function platformFile(file) {
  try {
    return require.resolve(`${platformPackage()}/${file}`);
  } catch {
    return undefined;
  }
}
