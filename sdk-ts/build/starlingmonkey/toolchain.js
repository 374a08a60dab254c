// StarlingMonkey's toolchain is an opt-in (ADR 071): ComponentizeJS (which
// brings jco, binaryen, Wizer, weval and TypeScript, about
// 350 MB) and the WASI shim it runs on are optional peer dependencies of
// @wasmkeep/actor, which npm does not install. A project that builds with
// `--backend starlingmonkey` installs them itself; until it has, the build
// says which versions, in one command.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const sdkDir = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The packages of StarlingMonkey's toolchain, in the SDK's peerDependencies. */
export const STARLINGMONKEY_PACKAGES = ["@bytecodealliance/componentize-js", "@bytecodealliance/preview2-shim"];

/** The package.json of `pkg` as node finds it from `fromDir`, or undefined (some packages do not export it). */
export function findPackageJson(pkg, fromDir = sdkDir) {
  const require = createRequire(join(fromDir, "package.json"));
  for (const dir of require.resolve.paths(pkg) ?? []) {
    const p = join(dir, pkg, "package.json");
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** [package, version] for each package of the toolchain, the versions the SDK's package.json asks for. */
export function starlingmonkeyToolchain(sdk = sdkDir) {
  const peers = JSON.parse(readFileSync(join(sdk, "package.json"), "utf8")).peerDependencies ?? {};
  return STARLINGMONKEY_PACKAGES.map((p) => [p, peers[p]]);
}

/**
 * Why `--backend starlingmonkey` cannot build here, with the command that
 * installs what is missing, or null when the toolchain is installed at the
 * versions the SDK asks for.
 */
export function starlingmonkeyProblem(fromDir = sdkDir, sdk = sdkDir) {
  const wanted = starlingmonkeyToolchain(sdk);
  const wrong = [];
  for (const [pkg, version] of wanted) {
    const pj = findPackageJson(pkg, fromDir);
    if (!pj) wrong.push(`${pkg} is not installed`);
    else {
      const found = JSON.parse(readFileSync(pj, "utf8")).version;
      if (found !== version) wrong.push(`${pkg} is ${found}, not ${version}`);
    }
  }
  if (!wrong.length) return null;
  return (
    `--backend starlingmonkey needs StarlingMonkey's toolchain, which @wasmkeep/actor does not install ` +
    `(the default engine, QuickJS, needs none of it): ${wrong.join("; ")}. Install it in this project:\n` +
    `  npm install --save-dev ${wanted.map(([p, v]) => `${p}@${v}`).join(" ")}\n` +
    `(about 350 MB), or build with the default engine (no --backend).`
  );
}
