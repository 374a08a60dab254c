#!/usr/bin/env node
// Regenerates the package's copy of the WIT (wit/actor.wit, from the
// repository's wit/) and the guest types made from it (types/, by
// `jco guest-types`). With --check, changes nothing and fails when either
// differs from what would be generated (CI runs this).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const source = resolve(pkg, "..", "wit", "actor.wit");
const check = process.argv.includes("--check");

function files(dir, base = dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p, base) : [relative(base, p)];
  });
}

const tmp = mkdtempSync(join(tmpdir(), "wasmkeep-gen-"));
try {
  mkdirSync(join(tmp, "wit"));
  writeFileSync(join(tmp, "wit", "actor.wit"), readFileSync(source));
  const jco = join(pkg, "node_modules", "@bytecodealliance", "jco", "dist", "jco.js");
  const r = spawnSync(process.execPath, [jco, "guest-types", join(tmp, "wit"), "-n", "actor", "-o", join(tmp, "types"), "-q"], { encoding: "utf8" });
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    process.exit(1);
  }
  const differ = [];
  for (const dir of ["wit", "types"]) {
    const want = files(join(tmp, dir));
    const have = files(join(pkg, dir));
    for (const f of new Set([...want, ...have])) {
      const a = join(tmp, dir, f);
      const b = join(pkg, dir, f);
      if (!existsSync(a) || !existsSync(b) || !readFileSync(a).equals(readFileSync(b))) differ.push(join(dir, f));
    }
  }
  if (check) {
    if (differ.length) {
      console.error(`sdk-ts: generated files differ from ../wit/actor.wit: ${differ.join(", ")}\nrun \`npm run gen\` in sdk-ts/ and commit the result`);
      process.exit(1);
    }
    console.log("sdk-ts: wit/ and types/ match ../wit/actor.wit");
  } else {
    for (const dir of ["wit", "types"]) {
      rmSync(join(pkg, dir), { recursive: true, force: true });
      cpSync(join(tmp, dir), join(pkg, dir), { recursive: true });
    }
    console.log(differ.length ? `sdk-ts: regenerated ${differ.join(", ")}` : "sdk-ts: generated files were up to date");
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
