// wasmkeep-build: type-checks, bundles and componentizes an actor. The
// package's command (bin/wasmkeep-build.js) runs this module.
//
//   npx wasmkeep-build src/actor.ts -o actor.wasm [--backend quickjs|starlingmonkey]
//                      [--no-check] [--tsconfig path] [--cache-dir dir] [--keep-bundle path]
//
// The entry module must `export default defineActor({...})`. Components are
// cached by content hash (bundle, WIT, backend, toolchain versions), so an
// unchanged actor is not componentized again. What is particular to an
// engine is beside this file: quickjs/backend.js (the default) and
// starlingmonkey/componentize.mjs, each run against its WIT in generated/.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { basename, dirname, extname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as qjs from "./quickjs/backend.js";
import { startSpinner } from "./spinner.js";
import { findPackageJson, starlingmonkeyProblem } from "./starlingmonkey/toolchain.js";

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const sdkDir = resolve(here, "..");
const sdkVersion = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8")).version;

const USAGE = `usage: wasmkeep-build <entry.ts|entry.js> -o <out.wasm> [options]

Type-checks (tsc, when the project has typescript installed), bundles
(esbuild) and componentizes (componentize-qjs, or ComponentizeJS for
StarlingMonkey) an actor whose entry module does
\`export default defineActor({...})\`.

options:
  -o, --out <file>        the component to write (required)
  --backend <engine>      quickjs (default: small, fast to build, fast per call) or
                          starlingmonkey (SpiderMonkey: likely faster on heavy
                          computation, about 4x the memory per actor; its toolchain is
                          installed apart, and the build says how); see the README
  --no-check              skip the TypeScript type check (it runs only when the
                          project has typescript installed: npm install --save-dev typescript)
  --tsconfig <file>       the tsconfig.json to check with (default: the nearest one
                          above the entry, else strict defaults)
  --cache-dir <dir>       where built components are cached by content hash
                          (default: $WASMKEEP_BUILD_CACHE, else node_modules/.cache/wasmkeep-build
                          next to the entry, else ~/.cache/wasmkeep-build)
  --keep-bundle <file>    also write the bundled JavaScript there
  -q, --quiet             print only errors
  -h, --help              this text
  -V, --version           the SDK's version`;

// The long step under way (a spinner on a terminal): fail() clears its line
// first, so that the message starts at column 0 and no half frame stays.
let spinner = startSpinner("", { tty: false });

function fail(message, code = 1) {
  spinner.stop();
  process.stderr.write(`wasmkeep-build: ${message}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const a = { backend: "quickjs", check: true, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${arg} needs a value\n\n${USAGE}`, 2);
      return argv[++i];
    };
    switch (arg) {
      case "-o":
      case "--out":
        a.out = value();
        break;
      case "--backend":
        a.backend = value();
        break;
      case "--no-check":
        a.check = false;
        break;
      case "--tsconfig":
        a.tsconfig = value();
        break;
      case "--cache-dir":
        a.cacheDir = value();
        break;
      case "--keep-bundle":
        a.keepBundle = value();
        break;
      case "-q":
      case "--quiet":
        a.quiet = true;
        break;
      case "-h":
      case "--help":
        console.log(USAGE);
        process.exit(0);
        break;
      case "-V":
      case "--version":
        console.log(sdkVersion);
        process.exit(0);
        break;
      default:
        if (arg.startsWith("-")) fail(`unknown option ${arg}\n\n${USAGE}`, 2);
        if (a.entry) fail(`one entry module only (got ${a.entry} and ${arg})`, 2);
        a.entry = arg;
    }
  }
  if (!a.entry) fail(`no entry module given\n\n${USAGE}`, 2);
  if (!a.out) fail(`no output given: add -o <file>.wasm`, 2);
  const backends = { starlingmonkey: "starlingmonkey", sm: "starlingmonkey", quickjs: "quickjs", qjs: "quickjs" };
  if (!backends[a.backend]) fail(`unknown backend ${a.backend}: quickjs or starlingmonkey`, 2);
  a.backend = backends[a.backend];
  return a;
}

function findUp(start, name) {
  for (let dir = start; ; dir = dirname(dir)) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
    if (dirname(dir) === dir) return undefined;
  }
}

// The package.json of a dependency (some packages do not export it).
function packageJsonOf(pkg) {
  return findPackageJson(pkg, sdkDir) ?? fail(`cannot find the package ${pkg}: run npm install`);
}

function binOf(pkg, name) {
  const pj = packageJsonOf(pkg);
  const bin = JSON.parse(readFileSync(pj, "utf8")).bin;
  return join(dirname(pj), typeof bin === "string" ? bin : bin[name]);
}

function versionOf(pkg) {
  return JSON.parse(readFileSync(packageJsonOf(pkg), "utf8")).version;
}

/** Seconds since `started` (a Date.now()), as the final lines print them. */
function elapsed(started) {
  return `${((Date.now() - started) / 1000).toFixed(1)} s`;
}

/**
 * Announces a long step: a spinner with the elapsed time on a terminal, else
 * the plain line (nothing with --quiet). endStep() (or fail()) clears it.
 */
function beginStep(a, text) {
  if (a.quiet) return;
  spinner = startSpinner(text);
  if (!spinner.active) console.error(text);
}

function endStep() {
  spinner.stop();
}

/**
 * spawnSync's result without blocking the event loop, which the spinner's
 * timer needs. `capture` collects the output instead of passing it through.
 */
function spawnAsync(cmd, args, capture) {
  return new Promise((done) => {
    const child = spawn(cmd, args, { stdio: ["ignore", capture ? "pipe" : "inherit", capture ? "pipe" : "inherit"] });
    const out = { stdout: [], stderr: [] };
    for (const name of ["stdout", "stderr"]) child[name]?.on("data", (chunk) => out[name].push(chunk));
    const text = (name) => Buffer.concat(out[name]).toString("utf8");
    child.on("error", (error) => done({ error, status: null, signal: null, stdout: text("stdout"), stderr: text("stderr") }));
    child.on("close", (status, signal) => done({ status, signal, stdout: text("stdout"), stderr: text("stderr") }));
  });
}

/**
 * Runs a step's tool. While a spinner owns the terminal's line the tool's
 * output is held and written after the line is cleared (the two would mix).
 */
async function run(cmd, args, what) {
  const r = await spawnAsync(cmd, args, spinner.active);
  endStep();
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  if (r.error) fail(`${what}: ${r.error.message}`);
  if (r.status !== 0) fail(`${what} failed (exit ${r.status ?? r.signal})`);
}

async function typeCheck(a, entry) {
  // TypeScript is the project's own (an optional peer dependency, ADR 071):
  // without it the build bundles as esbuild does, unchecked, and says so.
  if (!findPackageJson("typescript", sdkDir)) {
    if (!a.quiet) {
      console.error(
        `wasmkeep-build: note: ${relative(process.cwd(), entry) || entry} is not type-checked: this project has no typescript installed ` +
          "(npm install --save-dev typescript turns the check on; --no-check turns this note off)",
      );
    }
    return;
  }
  const tsc = binOf("typescript", "tsc");
  const tsconfig = a.tsconfig ? resolve(a.tsconfig) : findUp(dirname(entry), "tsconfig.json");
  const args = tsconfig
    ? ["--noEmit", "-p", tsconfig]
    : ["--noEmit", "--strict", "--target", "es2022", "--module", "esnext", "--moduleResolution", "bundler",
       "--lib", "es2022", "--types", "", "--skipLibCheck", entry];
  beginStep(a, `wasmkeep-build: type-checking (tsc ${tsconfig ? `-p ${relative(process.cwd(), tsconfig) || "."}` : "with strict defaults"})`);
  // tsc colours its errors only when its stdout is a terminal, which it is
  // not while run() holds its output: ask for them as it would have made them.
  if (spinner.active && process.stdout.isTTY) args.push("--pretty");
  await run(process.execPath, [tsc, ...args], "the type check (tsc)");
}

async function bundle(entry, backend) {
  const esbuild = await import("esbuild");
  const internal = join(sdkDir, "dist", "internal.js");
  const wrapper = [
    // First, so that the actor's own module scope has a console on QuickJS (src/console.ts).
    `import ${JSON.stringify(join(sdkDir, "dist", "console.js"))};`,
    `import * as entry from ${JSON.stringify(entry)};`,
    `import { eventsOfModule } from ${JSON.stringify(internal)};`,
    `export const events = eventsOfModule(entry, ${JSON.stringify(relative(process.cwd(), entry))});`,
  ].join("\n");
  try {
    const r = await esbuild.build({
      stdin: { contents: wrapper, resolveDir: dirname(entry), sourcefile: "wasmkeep-entry.js", loader: "js" },
      bundle: true,
      write: false,
      format: "esm",
      platform: "neutral",
      target: "es2022",
      mainFields: ["module", "main"],
      conditions: ["wasmkeep", "import"],
      external: ["wasmkeep:*"],
      // How 64-bit integers cross the boundary differs by engine (sdk-ts/src/abi.ts).
      define: { __WASMKEEP_BACKEND__: JSON.stringify(backend) },
      // QuickJS imports storage from the dialect (generated/wit-quickjs/actor-js.wit),
      // whose adapter is composed in after componentizing.
      plugins: backend === "quickjs" ? [qjs.storagePlugin] : [],
      legalComments: "none",
      logLevel: "silent",
    });
    return r.outputFiles[0].text;
  } catch (e) {
    const msgs = (e.errors ?? []).map((m) => `${m.location ? `${m.location.file}:${m.location.line}: ` : ""}${m.text}`);
    fail(`bundling failed:\n  ${msgs.join("\n  ") || e.message}`);
  }
}

/**
 * The two files the QuickJS build needs from build/quickjs/parts/: the
 * storage adapter and the composer (ADR 017). The npm tarball ships them; in
 * the repository `cargo xtask ts-quickjs` builds them.
 */
function quickjsParts() {
  const { missing, ...parts } = qjs.nativeParts();
  if (missing.length) {
    fail(
      `the QuickJS backend needs ${missing.join(" and ")}, which this copy of @wasmkeep/actor lacks.\n` +
        "Install the tarball that `node scripts/pack.js` makes in sdk-ts/ of the wasmkeep repository, " +
        "or, in the repository, run `cargo xtask ts-quickjs` (or build with --backend starlingmonkey).",
    );
  }
  return parts;
}

/** `actor.bundle.js` for `src/actor.ts`. */
function bundleName(entry) {
  return `${basename(entry, extname(entry))}.bundle.js`;
}

/** The source module a line of the bundle belongs to (esbuild heads each module with a `// path` comment). */
function moduleOfBundleLine(lines, line) {
  for (let i = Math.min(line, lines.length) - 1; i >= 0; i--) {
    const m = /^\/\/ (\S.*\.[cm]?[jt]sx?)$/.exec(lines[i]);
    if (m) return m[1];
  }
  return undefined;
}

function isSdkModule(path) {
  try {
    return realpathSync(resolve(path)).startsWith(join(realpathSync(sdkDir), "dist") + "/");
  } catch {
    return /(^|\/)(sdk-ts|@wasmkeep\/actor)\/dist\//.test(path);
  }
}

/**
 * The module's top level runs when the component is built (StarlingMonkey
 * snapshots it with Wizer; QuickJS evaluates it too), where the host does not
 * exist. When that is why componentizing failed, this says so in a few lines
 * (and where, from the bundle), instead of the engine's trace.
 */
function explainInitFailure(output, js, entry) {
  const sdkMessage = /(\S+)\(\) was called outside an event \(at module scope, while the module loads\)/.exec(output);
  const rawImport = /attempted to call an unknown imported function: '([^']+)' '([^']+)'/.exec(output);
  if (!sdkMessage && !rawImport) return undefined;
  const what = sdkMessage ? `${sdkMessage[1]}()` : `the host import ${rawImport[1]}#${rawImport[2]}`;
  const lines = js.split("\n");
  const name = bundleName(entry).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  let where = "";
  for (const m of output.matchAll(new RegExp(`${name}:(\\d+):(\\d+)`, "g"))) {
    const line = Number(m[1]);
    const mod = moduleOfBundleLine(lines, line);
    if (mod === undefined || isSdkModule(mod)) continue;
    where = `\n  at ${mod}: ${(lines[line - 1] ?? "").trim()}   (line ${line} of the bundle; --keep-bundle writes it)`;
    break;
  }
  return (
    `${relative(process.cwd(), entry) || entry} calls ${what} at module scope (while the module loads, at build time):${where}\n` +
    "The host's storage, alarms, sockets, calls and context exist only while an event runs. " +
    "Move the call into onInit (it runs once per new actor: CREATE TABLE goes there) or into a handler (onRequest, onAlarm, ...)."
  );
}

function cacheDirFor(a, entry) {
  if (a.cacheDir) return resolve(a.cacheDir);
  if (process.env.WASMKEEP_BUILD_CACHE) return resolve(process.env.WASMKEEP_BUILD_CACHE);
  const nm = findUp(dirname(entry), "node_modules");
  if (nm) return join(nm, ".cache", "wasmkeep-build");
  return join(homedir(), ".cache", "wasmkeep-build");
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const entry = resolve(a.entry);
  if (!existsSync(entry) || !statSync(entry).isFile()) fail(`no such file: ${a.entry}`);
  const started = Date.now();
  // StarlingMonkey's toolchain is installed apart (ADR 071): before anything else, whether it is here.
  if (a.backend === "starlingmonkey") {
    const problem = starlingmonkeyProblem();
    if (problem) fail(problem);
  }
  if (a.check && /\.(c|m)?tsx?$/.test(entry)) await typeCheck(a, entry);

  const js = await bundle(entry, a.backend);
  if (a.keepBundle) writeFileSync(a.keepBundle, js);
  const quickjs = a.backend === "quickjs";
  const witDir = quickjs ? qjs.witDir : join(sdkDir, "generated", "wit");
  const wit = readFileSync(quickjs ? qjs.witFile : join(witDir, "actor.wit"), "utf8");
  const toolchain = quickjs ? `componentize-qjs ${versionOf("componentize-qjs")}` : `componentize-js ${versionOf("@bytecodealliance/componentize-js")}`;
  const parts = quickjs ? quickjsParts() : undefined;
  // The adapter is part of every QuickJS component, so its bytes are part of the key.
  const adapterHash = parts ? createHash("sha256").update(readFileSync(parts.adapter)).digest("hex") : undefined;
  const hash = createHash("sha256")
    .update(JSON.stringify({ sdkVersion, toolchain, pbl: true, backend: a.backend, wit, adapterHash }))
    .update("\0")
    .update(js)
    .digest("hex");
  const cacheDir = cacheDirFor(a, entry);
  const cached = join(cacheDir, `${hash}.wasm`);
  const out = resolve(a.out);
  mkdirSync(dirname(out), { recursive: true });
  if (existsSync(cached)) {
    copyFileSync(cached, out);
    if (!a.quiet) console.error(`wasmkeep-build: ${a.out} unchanged (cached ${hash.slice(0, 12)}, ${a.backend}) in ${elapsed(started)}`);
    return;
  }
  mkdirSync(cacheDir, { recursive: true });
  // The bundle's file name is what stack traces name (`onRequest@actor.bundle.js:12:5`);
  // --keep-bundle writes the same file for reading them.
  const bundleDir = join(cacheDir, `${hash}.src`);
  mkdirSync(bundleDir, { recursive: true });
  const bundlePath = join(bundleDir, bundleName(entry));
  writeFileSync(bundlePath, js);
  const tmp = join(cacheDir, `${hash}.${process.pid}.tmp.wasm`);
  // QuickJS: componentized against the dialect, then composed with the adapter into tmp.
  const raw = quickjs ? join(cacheDir, `${hash}.${process.pid}.qjs.wasm`) : tmp;
  // StarlingMonkey: ComponentizeJS 0.23 directly (starlingmonkey/componentize.mjs
  // says why), on this package's WASI shim (wasi-shim-hook.mjs says why);
  // QuickJS: componentize-qjs directly (quickjs/componentize.mjs).
  const pin = pathToFileURL(join(here, "pin-wasi-shim.mjs")).href;
  const tool =
    a.backend === "starlingmonkey"
      ? ["--import", pin, join(here, "starlingmonkey", "componentize.mjs"), bundlePath, witDir, tmp, join(cacheDir, "splices")]
      : qjs.componentizeArgs(bundlePath, raw);
  beginStep(a, `wasmkeep-build: componentizing with ${a.backend} (${toolchain})`);
  const r = await spawnAsync(process.execPath, tool, true);
  endStep();
  if (r.status !== 0 || !existsSync(raw)) {
    const output = `${r.stdout ?? ""}${r.stderr ?? ""}`;
    const explained = explainInitFailure(output, js, entry);
    if (explained) fail(explained);
    process.stderr.write(output);
    fail(`componentizing failed (exit ${r.status ?? r.signal})`);
  }
  if (quickjs) {
    const c = await spawnAsync(...qjs.composeCommand(parts, raw, tmp), true);
    rmSync(raw, { force: true });
    if (c.status !== 0 || !existsSync(tmp)) {
      process.stderr.write(`${c.stdout ?? ""}${c.stderr ?? ""}`);
      fail(
        `composing the QuickJS storage adapter into the actor failed (${c.error?.message ?? `exit ${c.status ?? c.signal}`}). ` +
          "The adapter and the composer in build/quickjs/parts/ must come from this copy of @wasmkeep/actor: reinstall it " +
          "(in the wasmkeep repository: cargo xtask ts-quickjs), or build with --backend starlingmonkey meanwhile.",
      );
    }
  }
  renameSync(tmp, cached);
  copyFileSync(cached, out);
  if (!a.quiet) {
    const kb = Math.round(statSync(out).size / 1024);
    console.error(`wasmkeep-build: wrote ${a.out} (${kb} KiB, ${a.backend}) in ${elapsed(started)}`);
  }
}

main().catch((e) => fail(e?.stack ?? String(e)));
