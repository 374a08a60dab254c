// What a project installs with @wasmkeep/actor (ADR 071): what the default
// engine needs and no more. StarlingMonkey's toolchain and TypeScript are
// optional peer dependencies: a build that needs them and does not find them
// says what to install.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const sdk = fileURLToPath(new URL("..", import.meta.url));
const manifest = JSON.parse(readFileSync(join(sdk, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(sdk, "package-lock.json"), "utf8"));

/** Every package npm installs for `deps` (with their optional dependencies), by the lock file. */
function closure(deps) {
  const seen = new Set();
  const visit = (name, from) => {
    // npm's lookup: nested under the parent first, then up to the top.
    for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf("/node_modules/")))) {
      const key = `${dir ? `${dir}/` : ""}node_modules/${name}`;
      const entry = lock.packages[key];
      if (entry) {
        if (seen.has(key)) return;
        seen.add(key);
        for (const d of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) visit(d, key);
        return;
      }
      if (!dir) return;
    }
  };
  for (const d of Object.keys(deps)) visit(d, "");
  return [...seen].map((k) => k.slice(k.lastIndexOf("node_modules/") + "node_modules/".length));
}

const STARLINGMONKEY = ["@bytecodealliance/componentize-js", "@bytecodealliance/preview2-shim"];

test("a project on the default engine installs none of StarlingMonkey's toolchain and no TypeScript", () => {
  const installed = closure(manifest.dependencies);
  assert.ok(installed.includes("componentize-qjs") && installed.includes("esbuild"), installed.join(" "));
  for (const heavy of ["@bytecodealliance/componentize-js", "@bytecodealliance/jco", "binaryen", "typescript", "typescript-compiler-api", "rolldown"]) {
    assert.ok(!installed.includes(heavy), `${heavy} is installed with @wasmkeep/actor (through ${Object.keys(manifest.dependencies).join(", ")})`);
  }
  // The opt-ins are optional peers: npm installs them only when the project names them.
  for (const peer of [...STARLINGMONKEY, "typescript"]) {
    assert.ok(manifest.peerDependencies?.[peer], `${peer} is a peer dependency`);
    assert.equal(manifest.peerDependenciesMeta?.[peer]?.optional, true, `${peer} is an optional peer`);
  }
  // The versions the build asks a user to install are the ones the repository tests StarlingMonkey with.
  for (const p of STARLINGMONKEY) assert.equal(manifest.peerDependencies[p], manifest.devDependencies[p], p);
});

/**
 * A project whose node_modules holds @wasmkeep/actor (the files it ships)
 * and only its dependencies (links to this checkout's copies).
 */
function projectWithTheDependenciesOnly() {
  const dir = mkdtempSync(join(tmpdir(), "wasmkeep-package-"));
  const nm = join(dir, "node_modules");
  const pkg = join(nm, "@wasmkeep", "actor");
  mkdirSync(pkg, { recursive: true });
  for (const f of ["bin", "build", "dist", "generated", "package.json"]) cpSync(join(sdk, f), join(pkg, f), { recursive: true });
  for (const name of closure(manifest.dependencies)) {
    mkdirSync(dirname(join(nm, name)), { recursive: true });
    if (existsSync(join(sdk, "node_modules", name))) symlinkSync(join(sdk, "node_modules", name), join(nm, name));
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "p", private: true, type: "module" }));
  mkdirSync(join(dir, "src"));
  cpSync(join(sdk, "test", "probe", "actor.ts"), join(dir, "src", "actor.ts"));
  return dir;
}

function build(dir, ...args) {
  return spawnSync(process.execPath, [join(dir, "node_modules", "@wasmkeep", "actor", "bin", "wasmkeep-build.js"), "src/actor.ts", "-o", "actor.wasm", "--cache-dir", join(dir, "cache"), ...args], {
    cwd: dir,
    encoding: "utf8",
  });
}

test("--backend starlingmonkey without its toolchain says exactly what to install", () => {
  const dir = projectWithTheDependenciesOnly();
  try {
    const r = build(dir, "--backend", "starlingmonkey");
    assert.equal(r.status, 1, r.stderr);
    const { peerDependencies: peers } = manifest;
    assert.match(r.stderr, /--backend starlingmonkey needs StarlingMonkey's toolchain, which @wasmkeep\/actor does not install/);
    assert.match(r.stderr, /@bytecodealliance\/componentize-js is not installed; @bytecodealliance\/preview2-shim is not installed/);
    assert.ok(
      r.stderr.includes(`\n  npm install --save-dev ${STARLINGMONKEY.map((p) => `${p}@${peers[p]}`).join(" ")}\n`),
      r.stderr,
    );
    assert.equal(existsSync(join(dir, "actor.wasm")), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a QuickJS build needs only the package's dependencies, and says when it cannot type-check", { timeout: 120_000 }, () => {
  const dir = projectWithTheDependenciesOnly();
  try {
    const r = build(dir);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /src\/actor\.ts is not type-checked: this project has no typescript installed \(npm install --save-dev typescript turns the check on/);
    assert.match(r.stderr, /componentizing with quickjs \(componentize-qjs [\d.]+\)/);
    assert.ok(readFileSync(join(dir, "actor.wasm")).subarray(0, 4).equals(Buffer.from("\0asm")));
    // --no-check: no note.
    assert.doesNotMatch(build(dir, "--no-check").stderr, /not type-checked/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
