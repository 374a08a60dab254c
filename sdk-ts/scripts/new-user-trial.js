#!/usr/bin/env node
// The new-user trial of issue 5, as a test: in an empty temporary folder, do
// what README.md's "Quick start" and "Testing" sections say, with the code
// blocks taken from the README itself (each begins with its path as a comment):
// npm init, npm install of the packed tarballs (where the README installs
// @wasmkeep/actor from the registry, which this trial has not), write the actor,
// its test and its manifest, `npx wasmkeep-build`, `node --test`, and
// `npx wasmkeep-shim serve` answering a request on 127.0.0.1.
//
//   node scripts/new-user-trial.js [--tarball FILE]... [--profile debug|release] [--keep]
//
// Without --tarball it packs one with scripts/pack.js (the given profile;
// debug by default, which the test command has already built).
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const say = (m) => console.log(`new-user trial: ${m}`);
const fail = (m) => {
  console.error(`new-user trial: FAILED: ${m}`);
  process.exit(1);
};
const run = (cmd, argv, cwd, what) => {
  const t = Date.now();
  const r = spawnSync(cmd, argv, { cwd, encoding: "utf8", env: { ...process.env, WASMKEEP_NODE_HARNESS: "" } });
  if (r.status !== 0) fail(`${what} (${cmd} ${argv.join(" ")}) exited ${r.status ?? r.signal}:\n${r.stdout}${r.stderr}`);
  say(`${what}: ok (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  return r.stdout;
};

// The main package and this platform's package (pack.js prints both), until
// a registry serves them; --tarball FILE (repeated) names them instead.
let tarballs = args.flatMap((a, i) => (a === "--tarball" && i + 1 < args.length ? [resolve(args[i + 1])] : []));
if (!tarballs.length) {
  const out = run("node", ["scripts/pack.js", "--profile", opt("--profile", "debug"), "--no-build"], pkg, "pack the tarballs");
  tarballs = out.trim().split("\n").filter((l) => l.endsWith(".tgz"));
}

// The README's files: fenced blocks whose first line names a path.
const readme = readFileSync(join(pkg, "README.md"), "utf8");
const files = {};
for (const m of readme.matchAll(/```(?:ts|js|toml)\n(.*?)```/gs)) {
  const first = m[1].split("\n")[0];
  const path = first.match(/^(?:\/\/|#) ((?:src|test)\/[\w.-]+\.(?:ts|js)|wasmkeep\.toml)\b/)?.[1];
  if (path) files[path] = m[1];
}
for (const need of ["src/actor.ts", "test/hello.test.js", "wasmkeep.toml"]) {
  if (!files[need]) fail(`README.md has no code block beginning with its path for ${need}`);
}

const dir = mkdtempSync(join(tmpdir(), "wasmkeep-new-user-"));
say(`in ${dir}`);
try {
  run("npm", ["init", "-y"], dir, "npm init");
  // No override of any dependency: the package must install and build as it is.
  run("npm", ["pkg", "set", "type=module"], dir, "npm pkg set");
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...tarballs], dir, "npm install the tarballs");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  run("npx", ["wasmkeep-build", "src/actor.ts", "-o", "hello.wasm"], dir, "npx wasmkeep-build");
  run("node", ["--test", "test/"], dir, "node --test with the harness");
  await serveAndAsk(dir);
  say("passed");
} finally {
  if (args.includes("--keep")) say(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/** `npx wasmkeep-shim serve` on a free port; one request; then stop it (only this child). */
async function serveAndAsk(cwd) {
  const child = spawn("npx", ["wasmkeep-shim", "serve", "--manifest", "wasmkeep.toml", "--listen", "127.0.0.1:0", "--data-dir", ".wasmkeep"], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group: npx does not pass SIGTERM on, so stop the whole group we started.
    detached: true,
  });
  const stop = () => {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // Already gone.
    }
  };
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  try {
    const base = await new Promise((ok, no) => {
      let out = "";
      const timer = setTimeout(() => no(new Error(`no "listening on" line in 120 s; stderr:\n${err}`)), 120_000);
      child.stdout.on("data", (d) => {
        out += d;
        const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
        if (m) {
          clearTimeout(timer);
          ok(m[1]);
        }
      });
      child.on("exit", (code) => no(new Error(`serve exited ${code}; stderr:\n${err}`)));
    });
    const r = await fetch(`${base}/hello/a/`, { method: "POST" });
    const body = await r.text();
    if (r.status !== 200 || JSON.parse(body).visits !== 1) throw new Error(`POST ${base}/hello/a/ answered ${r.status} ${body}`);
    say(`npx wasmkeep-shim serve: ok (POST /hello/a/ → ${body})`);
  } catch (e) {
    stop();
    fail(e.message);
  }
  stop();
  await new Promise((ok) => (child.exitCode !== null ? ok() : child.on("exit", ok)));
}
