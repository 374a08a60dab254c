#!/usr/bin/env node
// Regenerates generated/, everything of the package made from the
// repository's wit/ and nothing else: the copy of the WIT (generated/wit/),
// its QuickJS dialect (generated/wit-quickjs/, see build/quickjs/dialect.js)
// and the guest types made from them (generated/types/, by `jco guest-types`:
// the world's, plus the dialect's storage module). With --check, changes
// nothing and fails naming every file that differs from what would be
// generated, a file in generated/ that gen does not write included.
// `cargo xtask gen [--check]` runs this with the other SDKs' generators.
// Exit status: 0 current (or written), 1 files differ (--check), 2 bad
// arguments, 3 a tool is missing or failed.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { quickjsWit } from "../build/quickjs/dialect.js";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const source = resolve(pkg, "..", "wit", "actor.wit");
const args = process.argv.slice(2);
const check = args.includes("--check");
const unknown = args.filter((a) => a !== "--check");
if (unknown.length) {
  console.error(`sdk-ts: gen.js: unknown argument ${unknown[0]} (use --check or nothing)`);
  process.exit(2);
}
// What to tell the reader to run (cargo xtask gen sets its own command).
const regen = process.env.WASMKEEP_GEN_COMMAND ? `\`${process.env.WASMKEEP_GEN_COMMAND}\`` : "`npm run gen` in sdk-ts/ (or `cargo xtask gen`)";
const jco = join(pkg, "node_modules", "@bytecodealliance", "jco", "dist", "jco.js");
if (!existsSync(jco)) {
  console.error("sdk-ts: the tool jco (@bytecodealliance/jco) is not installed in sdk-ts/node_modules: " +
    "bash scripts/setup.sh installs it (npm ci in sdk-ts), or run npm ci in sdk-ts/");
  process.exit(3);
}

function files(dir, base = dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p, base) : [relative(base, p)];
  });
}

// Generates into a temporary directory, compares with the package's
// generated/, and (unless --check) replaces it; returns the exit status.
const GENERATED = "generated";
const out = join(pkg, GENERATED);
/** The one module of the dialect's guest types that the world's do not already declare. */
const DIALECT_TYPES = join("interfaces", "wasmkeep-actor-js-storage.d.ts");

function guestTypes(tmp, wit, types) {
  const r = spawnSync(process.execPath, [jco, "guest-types", join(tmp, wit), "-n", "actor", "-o", join(tmp, types), "-q"], { encoding: "utf8" });
  if (r.status === 0) return true;
  process.stderr.write((r.stdout ?? "") + (r.stderr ?? "") + (r.error ? `${r.error}\n` : ""));
  console.error(`sdk-ts: jco guest-types failed on ${wit}/ (made from ../wit/actor.wit)`);
  return false;
}

function gen(tmp) {
  const text = readFileSync(source, "utf8");
  const gen = join(tmp, GENERATED);
  mkdirSync(join(gen, "wit"), { recursive: true });
  writeFileSync(join(gen, "wit", "actor.wit"), text);
  let dialect;
  try {
    dialect = quickjsWit(text);
  } catch (e) {
    console.error(`sdk-ts: cannot derive the QuickJS dialect: ${e.message} (update build/quickjs/dialect.js with it)`);
    return 3;
  }
  mkdirSync(join(gen, "wit-quickjs", "deps", "actor"), { recursive: true });
  writeFileSync(join(gen, "wit-quickjs", "actor-js.wit"), dialect);
  writeFileSync(join(gen, "wit-quickjs", "deps", "actor", "actor.wit"), text);
  const types = join(GENERATED, "types");
  if (!guestTypes(tmp, join(GENERATED, "wit"), types) || !guestTypes(tmp, join(GENERATED, "wit-quickjs"), "dialect-types")) return 3;
  // The dialect's other modules are the world's own, generated again; only its
  // storage is new. It references ./wasmkeep-actor-types.d.ts, which types/ has.
  writeFileSync(join(tmp, types, DIALECT_TYPES), readFileSync(join(tmp, "dialect-types", DIALECT_TYPES)));
  // The whole of generated/ is compared: a file there that gen does not write differs too.
  const differ = [];
  for (const f of new Set([...files(gen), ...files(out)])) {
    const a = join(gen, f);
    const b = join(out, f);
    if (!existsSync(a) || !existsSync(b) || !readFileSync(a).equals(readFileSync(b))) differ.push(join(GENERATED, f));
  }
  differ.sort();
  if (check) {
    if (differ.length) {
      const listed = differ.map((f) => `  sdk-ts/${f}\n`).join("");
      console.error(`sdk-ts: these files of generated/ differ from what ../wit/actor.wit makes:\n${listed}sdk-ts: run ${regen} and commit the result`);
      return 1;
    }
    console.log(`sdk-ts: ${GENERATED}/ matches ../wit/actor.wit`);
    return 0;
  }
  rmSync(out, { recursive: true, force: true });
  cpSync(gen, out, { recursive: true });
  console.log(differ.length ? `sdk-ts: regenerated ${differ.join(", ")}` : "sdk-ts: generated files were up to date");
  return 0;
}

const tmp = mkdtempSync(join(tmpdir(), "wasmkeep-gen-"));
try {
  process.exitCode = gen(tmp);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
