// Whether the QuickJS backend's two native parts in sdk-ts/build/quickjs/parts/
// (the storage adapter and the composer, ADR 017) are built and current: for
// the repository's scripts (scripts/build-guests.js, scripts/pack.js), not
// shipped in the package. They only check: building them is `cargo xtask
// ts-quickjs`, which the repository's setup and `cargo xtask guests --all` run
// first (an SDK script never calls back into xtask). Current means the stamp
// the build writes is newer than every file it is built from.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const PARTS = ["quickjs-storage.wasm", "wasmkeep-ts-compose"];
/** What the parts are built from, relative to the repository root. */
const INPUTS = ["sdk-ts/native/quickjs-storage", "sdk-ts/native/compose", "wit"];
/** Where they are, relative to the repository root. */
const DIR = "sdk-ts/build/quickjs/parts";

/** The newest modification time of any file under `dir` (target/ and node_modules/ left out). */
export function newestUnder(dir) {
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "target" || entry.name === "node_modules") continue;
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * Why the parts cannot be used as they are, or null when they can.
 * With `profile` ("release" or "debug"), the composer must be of that profile.
 */
export function quickjsPartsProblem(root, profile) {
  const dir = join(root, DIR);
  const build = `cargo xtask ts-quickjs${profile === "release" ? " --release" : ""}`;
  const missing = PARTS.filter((p) => !existsSync(join(dir, p)));
  if (missing.length) return `${DIR}/${missing.join(", ")} missing: run \`${build}\` (bash scripts/setup.sh does), then this again`;
  const stamp = join(dir, ".parts-built");
  if (!existsSync(stamp)) return `${DIR}/ has no build stamp: run \`${build}\`, then this again`;
  const built = statSync(stamp).mtimeMs;
  const changed = INPUTS.find((dir) => newestUnder(join(root, dir)) > built);
  if (changed) return `${changed}/ changed since ${DIR}/ was built: run \`${build}\`, then this again`;
  const made = readFileSync(stamp, "utf8").trim();
  if (profile && made !== profile) return `${DIR}/'s composer is a ${made} build, not ${profile}: run \`${build}\`, then this again`;
  return null;
}
