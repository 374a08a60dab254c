#!/usr/bin/env node
// Makes the npm tarballs of @wasmkeep/actor, so that a project installs it
// without building anything from this repository (ADR 029):
//   @wasmkeep/actor                 the SDK, wasmkeep-build and the QuickJS storage
//                                   adapter (quickjs-storage.wasm): no native code; its
//                                   optionalDependencies name the platform package
//   @wasmkeep/actor-<platform>-<arch>-<libc>  this machine's native parts:
//     wasmkeep-shim                 the local host, run by `npx wasmkeep-shim`
//     wasmkeep-harness.node         the test harness addon (napi-rs, sdk-ts/native/harness)
//     wasmkeep-ts-compose           the QuickJS build's composer (ADR 017; `cargo xtask
//                                   ts-quickjs` builds it and the adapter)
// npm installs only the platform package whose os, cpu and libc match, as
// esbuild, Biome and napi-rs ship binaries. The native parts are built with
// cargo (the profile given; release by default) and stripped.
//
//   node scripts/pack.js [--profile release|debug] [--no-build] [--out DIR]
//
// Prints the two tarballs' paths, the platform package's first; install both
// (npm install <platform>.tgz <main>.tgz) until they are on a registry.
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { platformPackage } from "../build/platform.js";
import { quickjsPartsProblem } from "../build/quickjs/parts.js";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const root = resolve(pkg, "..");
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const profile = opt("--profile", "release");
const out = resolve(opt("--out", join(root, "target", "npm")));
const fail = (m) => {
  console.error(`pack: ${m}`);
  process.exit(1);
};
if (!["release", "debug"].includes(profile)) fail(`--profile is release or debug, not ${profile}`);

const run = (cmd, argv, cwd) => {
  const r = spawnSync(cmd, argv, { cwd, stdio: ["ignore", "inherit", "inherit"] });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${argv.join(" ")} failed (exit ${r.status})`);
};

if (!args.includes("--no-build")) {
  const cargo = ["build", "--quiet", "-p", "wasmkeep-node-harness", "-p", "wasmkeep-shim"];
  if (profile === "release") cargo.push("--release");
  run("cargo", cargo, root);
  // ADR 032: the host and the addon each carry wasmtime. For a release, lld
  // links them again with identical code folding, and the host as a
  // position-dependent executable (its dynamic relocations alone are
  // 1.6 MB); only the two crates themselves are compiled again. Together
  // 3.7 MB less, which keeps one platform's install under 60 MB unpacked.
  if (profile === "release" && process.platform === "linux" && spawnSync("ld.lld", ["--version"], { stdio: "ignore" }).status === 0) {
    const link = ["-C", "link-arg=-fuse-ld=lld", "-C", "link-arg=-Wl,--icf=all"];
    run("cargo", ["rustc", "--quiet", "--release", "-p", "wasmkeep-shim", "--bin", "wasmkeep-shim", "--", "-C", "relocation-model=static", ...link], root);
    run("cargo", ["rustc", "--quiet", "--release", "-p", "wasmkeep-node-harness", "--lib", "--", ...link], root);
  }
}
// The QuickJS backend's parts are built by `cargo xtask ts-quickjs`; this
// script only checks them (it never calls back into xtask).
const problem = quickjsPartsProblem(root, args.includes("--no-build") ? undefined : profile);
if (problem) fail(problem);
const lib = process.platform === "darwin" ? "libwasmkeep_node_harness.dylib" : "libwasmkeep_node_harness.so";
const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
const staging = join(root, "target", "npm-staging");
rmSync(staging, { recursive: true, force: true });

// The platform package: the three native files and a package.json that says where they run.
const name = platformPackage();
const native = join(staging, "platform");
mkdirSync(native, { recursive: true });
const parts = [
  [join(root, "target", profile, lib), "wasmkeep-harness.node"],
  [join(root, "target", profile, "wasmkeep-shim"), "wasmkeep-shim"],
  [join(pkg, "build", "quickjs", "parts", "wasmkeep-ts-compose"), "wasmkeep-ts-compose"],
];
for (const [src, file] of parts) {
  if (!existsSync(src)) fail(`${src} is missing: run without --no-build, or cargo build the ${profile} profile first`);
  const dst = join(native, file);
  copyFileSync(src, dst);
  chmodSync(dst, 0o755);
  // Symbols and debug info are most of a build's size; the dynamic symbols
  // an addon is loaded by stay.
  spawnSync("strip", [dst], { stdio: "ignore" });
}
const [libc] = name.endsWith("-gnu") ? ["glibc"] : name.endsWith("-musl") ? ["musl"] : [];
writeFileSync(
  join(native, "package.json"),
  `${JSON.stringify(
    {
      name,
      version: manifest.version,
      description: `The native parts of ${manifest.name} for ${process.platform}-${process.arch}${libc ? ` (${libc})` : ""}: the wasmkeep host, the test harness addon and the QuickJS composer.`,
      license: manifest.license,
      os: [process.platform],
      cpu: [process.arch],
      ...(libc ? { libc: [libc] } : {}),
      files: parts.map(([, file]) => file),
    },
    null,
    2,
  )}\n`,
);
writeFileSync(join(native, "README.md"), `# ${name}\n\nThe native parts of [${manifest.name}](https://www.npmjs.com/package/${manifest.name}) for this platform; install ${manifest.name}, which depends on it.\n`);

// The main package: the SDK as npm would pack it here (prepack compiles it),
// with the platform packages as optional dependencies of the same version.
run("npm", ["run", "--silent", "prepack"], pkg);
const main = join(staging, "main");
cpSync(pkg, main, {
  recursive: true,
  filter: (src) => !/[/\\](node_modules|native|test|scripts)([/\\]|$)/.test(src.slice(pkg.length)),
});
const shipped = { ...manifest, optionalDependencies: { [name]: manifest.version } };
delete shipped.scripts;
delete shipped.devDependencies;
writeFileSync(join(main, "package.json"), `${JSON.stringify(shipped, null, 2)}\n`);

mkdirSync(out, { recursive: true });
const packed = [];
for (const dir of [native, main]) {
  const r = spawnSync("npm", ["pack", "--silent", "--ignore-scripts", "--pack-destination", out], { cwd: dir, encoding: "utf8" });
  if (r.status !== 0) fail(`npm pack in ${dir} failed (exit ${r.status}):\n${r.stderr}`);
  packed.push(join(out, r.stdout.trim().split("\n").at(-1)));
}
rmSync(staging, { recursive: true, force: true });
for (const tgz of packed) console.log(tgz);
