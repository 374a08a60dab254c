// The package's README (what npm shows, and what ships in the tarball) is
// for a user who installs from the registry: it names no file the package
// does not ship and no step of a checkout, its npx commands run without a
// terminal, and the WIT it names is the one in wit/actor.wit.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const sdk = fileURLToPath(new URL("..", import.meta.url));
const readme = readFileSync(join(sdk, "README.md"), "utf8");
/** `wasmkeep:actor@X.Y.Z`, from the package line of the one hand-written WIT. */
const witPackage = /^package (wasmkeep:actor@\d+\.\d+\.\d+);$/m.exec(readFileSync(join(sdk, "..", "wit", "actor.wit"), "utf8"))?.[1];

// What only a checkout of the repository has.
const FORBIDDEN = ["scripts/", "examples/", "docs/", "target/", "cargo ", "xtask", "pack.js", ".tgz", "<repo", "sdk-ts/", "setup.sh", "ADR ", "test command"];

test("the package's README names nothing the package does not ship", () => {
  for (const word of FORBIDDEN) {
    const at = readme.indexOf(word);
    assert.equal(at, -1, `README.md names ${JSON.stringify(word)}, which a registry user does not have: …${readme.slice(Math.max(0, at - 60), at + 60)}…`);
  }
  // Links: only to the web or within the page.
  for (const [, target] of readme.matchAll(/\]\(([^)]*)\)/g)) {
    assert.match(target, /^(https?:\/\/|#)/, `README.md links to ${target}, which does not ship`);
  }
});

test("the WIT package the README names is wit/actor.wit's", () => {
  assert.ok(witPackage, "wit/actor.wit has a `package wasmkeep:actor@X.Y.Z;` line");
  const named = [...readme.matchAll(/wasmkeep:actor@\d+\.\d+\.\d+/g)].map((m) => m[0]);
  assert.ok(named.length > 0, "README.md names the WIT package");
  for (const n of named) assert.equal(n, witPackage, `README.md names ${n}; wit/actor.wit is ${witPackage}`);
  // And the SDK's constant, which the README's table quotes.
  assert.match(readFileSync(join(sdk, "src", "index.ts"), "utf8"), new RegExp(`WIT_PACKAGE = "${witPackage.replace(/\./g, "\\.")}"`));
});

test("the README's npx commands that install a package run without a terminal (--yes)", () => {
  const lines = readme.split("\n").filter((l) => /^\s*npx .*(--package|-p) /.test(l));
  assert.ok(lines.some((l) => / wasmkeep-shim new /.test(l)), "README.md shows how to start a project with npx");
  // Without a terminal, npx asks nobody and stops: "npx canceled due to missing packages and no YES option".
  for (const l of lines) assert.match(l, /^\s*npx (--yes|-y) /, l);
});
