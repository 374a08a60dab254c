// @wasmkeep/actor/testing: run built actors in the wasmkeep host, in-process,
// from node --test or vitest. The host is the wasmkeep_host library
// (host/runtime, the same one `wasmkeep-shim serve` runs) driven through
// wasmkeep_host_testing's TestHost, loaded as the native addon
// wasmkeep-node-harness (sdk-ts/native/harness); see index.d.ts for the
// documentation of every item.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { platformFile } from "../build/platform.js";

const here = dirname(fileURLToPath(import.meta.url));
const LIB = process.platform === "darwin" ? "libwasmkeep_node_harness.dylib" : process.platform === "win32" ? "wasmkeep_node_harness.dll" : "libwasmkeep_node_harness.so";

function addonPath() {
  if (process.env.WASMKEEP_NODE_HARNESS) return process.env.WASMKEEP_NODE_HARNESS;
  const candidates = [
    // The platform package's (@wasmkeep/actor-<platform>-<arch>-<libc>, ADR 029).
    platformFile("wasmkeep-harness.node"),
    // Beside this file (scripts/copy-harness.js puts it there; older tarballs shipped it).
    join(here, "wasmkeep-harness.node"),
    // Inside the repository: the workspace's build of sdk-ts/native/harness.
    join(here, "..", "..", "target", "debug", LIB),
    join(here, "..", "..", "target", "release", LIB),
  ].filter(Boolean);
  // The newest one: inside the repository a fresh cargo build wins over a copy packed earlier.
  const found = candidates
    .filter((p) => existsSync(p))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!found) {
    throw new Error(
      "@wasmkeep/actor/testing: the native host addon is not built. In the wasmkeep repository run " +
        "`cargo build -p wasmkeep-node-harness` (or `npm run build:harness` in sdk-ts/), or set " +
        `WASMKEEP_NODE_HARNESS to the built library. Looked in:\n  ${candidates.join("\n  ")}`,
    );
  }
  return found;
}

let native;
function loadNative() {
  if (!native) {
    const m = { exports: {} };
    process.dlopen(m, addonPath());
    native = m.exports;
  }
  return native;
}

const decoder = new TextDecoder();
const toBuffer = (b) => (b === undefined || b === null ? Buffer.alloc(0) : typeof b === "string" ? Buffer.from(b, "utf8") : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/** A value of `tables()` as plain JS: integers as number (bigint beyond 2^53), blobs as Uint8Array. */
function plainValue(v) {
  if (v === null || typeof v !== "object") return v;
  if ("integer" in v) {
    const b = BigInt(v.integer);
    return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
  }
  if ("real" in v) return v.real;
  if ("blob" in v) return Uint8Array.from(v.blob.match(/../g) ?? [], (h) => parseInt(h, 16));
  return v;
}

export class TestResponse {
  constructor(r) {
    this.status = r.status;
    this.headers = r.headers.map(([k, v]) => [k, v]);
    this.body = new Uint8Array(r.body);
  }
  header(name) {
    const n = name.toLowerCase();
    return this.headers.find(([k]) => k.toLowerCase() === n)?.[1];
  }
  text() {
    return decoder.decode(this.body);
  }
  json() {
    return JSON.parse(this.text());
  }
}

export class CallFailure extends Error {
  constructor(code, message) {
    super(message);
    this.name = "CallFailure";
    this.code = code;
  }
}

export class TestSocket {
  #host;
  constructor(host, id) {
    this.#host = host;
    this.id = id;
  }
  send(message) {
    this.#host.native.socketSend(this.id, typeof message === "string" ? message : toBuffer(message));
  }
  close(code = 1000, reason = "") {
    this.#host.native.socketClose(this.id, code, reason);
  }
  received() {
    return this.#host.native.socketTake(this.id).map((o) =>
      "text" in o ? o.text : "binary" in o ? Uint8Array.from(o.binary) : { close: o.close },
    );
  }
}

/** `{status: "deleted", at: Date, how}`, `{status: "not-deleted"}` or `{status: "unknown", reason}`. */
function deletionStatusOf(raw) {
  if (raw.status === "deleted") return { status: "deleted", at: new Date(Number(raw.at_ms)), how: raw.how };
  if (raw.status === "unknown") return { status: "unknown", reason: raw.reason };
  return { status: "not-deleted" };
}

export class TestActor {
  #host;
  #node;
  constructor(host, app, cls, name, node) {
    this.#host = host;
    this.app = app;
    this.class = cls;
    this.name = name;
    this.#node = node;
  }
  get #key() {
    return [this.app, this.class, this.name];
  }
  /** `app:class/name`, as the host's log lines name the actor. */
  get address() {
    return `${this.app}:${this.class}/${this.name}`;
  }
  /** The node this actor's requests go to by default (`undefined`: node 1, or the chaos schedule's pick). */
  get node() {
    return this.#node;
  }
  onNode(node) {
    return new TestActor(this.#host, this.app, this.class, this.name, nodeNumber(node));
  }
  fetch(path = "/", init = {}) {
    const method = init.method ?? (init.body === undefined && init.json === undefined ? "GET" : "POST");
    const headers = init.headers ? (Array.isArray(init.headers) ? init.headers : Object.entries(init.headers)) : [];
    const p = path.startsWith("/") ? path : `/${path}`;
    const body = init.json !== undefined ? JSON.stringify(init.json) : init.body;
    const pairs = headers.map(([k, v]) => [String(k), String(v)]);
    const node = init.node ?? this.#node;
    const native = this.#host.native;
    // (The host waits for the event's end too, its upload included.)
    const raw = native.request(...this.#key, method, p, pairs, toBuffer(body), node === undefined ? undefined : nodeNumber(node));
    // For an answer of 500 or more the host library says what explains it
    // (the request and what the actor logged); under chaos it keeps that
    // for the seed that fails.
    if (raw.explanation) this.#host[kLogSink](raw.explanation);
    return new TestResponse(raw);
  }
  get(path = "/") {
    return this.fetch(path, { method: "GET" });
  }
  post(path = "/", body = "") {
    return this.fetch(path, { method: "POST", body });
  }
  delete(path = "/") {
    return this.fetch(path, { method: "DELETE" });
  }
  call(payload = "") {
    const r = this.#host.native.call(...this.#key, toBuffer(payload));
    if (r.error) throw new CallFailure(r.error.kind, r.error.message);
    return Uint8Array.from(r.ok);
  }
  callText(payload = "") {
    return decoder.decode(this.call(payload));
  }
  openSocket(path = "/") {
    return new TestSocket(this.#host, this.#host.native.openSocket(...this.#key, path));
  }
  runAlarm() {
    // onNode(n).runAlarm() goes through node n; otherwise the lowest live node.
    return this.#node === undefined ? this.#host.native.runAlarm(...this.#key) : this.#host.native.runAlarmOn(this.#node, ...this.#key);
  }
  get alarm() {
    const info = this.#host.native.actors().find((a) => a.app === this.app && a.class === this.class && a.name === this.name);
    return info?.alarm === undefined || info?.alarm === null ? null : new Date(Number(info.alarm));
  }
  exists() {
    return this.#host.native.exists(...this.#key);
  }
  status() {
    const info = this.#host.native.actors().find((a) => a.app === this.app && a.class === this.class && a.name === this.name);
    return info?.status ?? "absent";
  }
  settle() {
    this.#host.native.settle(...this.#key);
  }
  tables() {
    const raw = this.#host.native.tables(...this.#key);
    const out = {};
    for (const [t, r] of Object.entries(raw)) out[t] = { columns: r.columns, rows: r.rows.map((row) => row.map(plainValue)) };
    return out;
  }
  rows(table) {
    const t = this.tables()[table];
    if (!t) return [];
    return t.rows.map((row) => Object.fromEntries(t.columns.map((c, i) => [c, row[i]])));
  }
  restart() {
    this.#host.native.restart(...this.#key);
  }
  operatorDelete() {
    return this.#host.native.deleteActor(...this.#key);
  }
  requestOperatorDelete() {
    return this.#host.native.requestOperatorDelete(...this.#key);
  }
  deletionStatus() {
    return deletionStatusOf(this.#host.native.deletionStatus(...this.#key));
  }
  history() {
    return this.#host.native.history(...this.#key);
  }
  restore(to) {
    const { bookmark, time } = to ?? {};
    if ((bookmark === undefined) === (time === undefined)) {
      throw new TypeError("restore(to): give { bookmark } (from history() or a restore's undo) or { time } (ms since the epoch, or a Date)");
    }
    if (bookmark !== undefined) return this.#host.native.restore(...this.#key, String(bookmark), undefined);
    return this.#host.native.restore(...this.#key, undefined, time instanceof Date ? time.getTime() : time);
  }
  /** What this actor logged (the host keeps the last 1000 lines of all actors). */
  logs() {
    return this.#host.native.logsOf(...this.#key);
  }
}

const kLogSink = Symbol("logSink");

/** Writes log lines to the host's sink (stderr), headed by why they are shown. */
function printLogs(host, lines, why, whose) {
  const shown = lines.slice(-50);
  let text = `@wasmkeep/actor/testing: ${why}; `;
  if (lines.length === 0) text += `${whose} logged nothing\n`;
  else text += `what ${whose} logged${lines.length > shown.length ? ` (the last ${shown.length} of ${lines.length} lines)` : ""}:\n`;
  for (const l of shown) text += `  [${l.level} ${l.actor}] ${l.message.replace(/\n/g, "\n    ")}\n`;
  host[kLogSink](text);
}

function nodeNumber(node) {
  if (!Number.isInteger(node) || node < 1) throw new RangeError(`node ${node}: nodes are numbered from 1`);
  return node;
}

export class TestHost {
  #closed = false;
  #stale = "build";
  /** Where what the harness prints goes (stderr; a test may catch it). */
  [kLogSink] = (text) => process.stderr.write(text);
  constructor(options = {}) {
    this.app = options.app ?? "test/app";
    const n = loadNative();
    if (options.nodes !== undefined && !(Number.isInteger(options.nodes) && options.nodes >= 1 && options.nodes <= 16)) {
      throw new RangeError(`nodes: ${options.nodes}: a test host runs 1 to 16 nodes (2 or more is a local cluster)`);
    }
    const stale = options.staleComponents ?? "build";
    if (!["build", "fail", "ignore"].includes(stale)) {
      throw new RangeError(`staleComponents: ${JSON.stringify(stale)}: "build" (the default), "fail" or "ignore"`);
    }
    this.#stale = stale;
    this.native = new n.NativeHost({
      dataDir: options.dataDir,
      cacheDir: options.cacheDir ?? process.env.WASMKEEP_CACHE_DIR ?? defaultCacheDir(),
      eventTimeoutMs: options.eventTimeoutMs,
      idleTimeoutMs: options.idleTimeoutMs,
      nodes: options.nodes,
      history: options.history,
    });
    try {
      if (options.classes) this.addApp(this.app, options.classes);
      if (options.manifest) {
        const manifest = resolve(options.manifest);
        for (const [name, c] of Object.entries(manifestClasses(manifest) ?? {})) {
          if (typeof c.component !== "string") continue;
          const component = resolve(dirname(manifest), c.component);
          ensureFresh(name, component, sourcesOf(component, {}, manifest), stale);
        }
        this.app = this.native.loadManifest(manifest);
      }
    } catch (e) {
      // A host that could not load its app is of no use: its temporary directory goes now.
      this.close();
      throw e;
    }
  }
  get dataDir() {
    return this.native.dataDir;
  }
  addApp(app, classes) {
    const list = Object.entries(classes).map(([name, c]) =>
      typeof c === "string" ? { name, component: resolve(c) } : { name, component: resolve(c.component), access: c.access },
    );
    for (const [name, c] of Object.entries(classes)) {
      const init = typeof c === "string" ? { component: c } : c;
      ensureFresh(name, resolve(init.component), sourcesOf(resolve(init.component), init), this.#stale);
    }
    for (const c of list) {
      if (!existsSync(c.component)) {
        throw new Error(
          `class ${c.name}: the component ${c.component} does not exist: build it first ` +
            `(npx wasmkeep-build src/actor.ts -o ${relative(process.cwd(), c.component) || c.component}, your entry in place of src/actor.ts)`,
        );
      }
    }
    this.native.addApp(app, list);
  }
  actor(cls, name, app = this.app) {
    return new TestActor(this, app, cls, name);
  }
  now() {
    return this.native.now();
  }
  advance(ms, options = {}) {
    if (options === null || typeof options !== "object") throw new TypeError("advance(ms, options): options is an object such as { runDue: true }");
    if (options.runDue) {
      this.native.advanceClockRunningDue(ms);
      return this.native.now();
    }
    return this.native.advanceClock(ms);
  }
  runDueAlarms() {
    return this.native.runDueAlarms();
  }
  get faults() {
    const native = this.native;
    return {
      failRemoval: (count = 1, node = 1) => native.armFault(nodeNumber(node), "fail-removal", count),
      arm: (kind, count = 1, node = 1) => native.armFault(nodeNumber(node), kind, count),
      clear: () => native.clearFaults(),
    };
  }
  actors() {
    return this.native.actors();
  }
  logs() {
    return this.native.logs();
  }
  metrics() {
    return this.native.metrics();
  }
  hibernateAll() {
    this.native.hibernateAll();
  }
  get nodes() {
    return this.native.nodeCount;
  }
  cutOff(node) {
    this.native.cutOff(nodeNumber(node));
  }
  runControlPasses() {
    this.native.runControlPasses();
  }
  setExpireAfterIdle(cls, limitMs, app = this.app) {
    this.native.setExpireAfterIdle(app, cls, limitMs ?? undefined);
  }
  runExpiryPasses() {
    return this.native.runExpiryPasses();
  }
  deleteApp(app = this.app) {
    this.native.deleteApp(app);
  }
  reset() {
    // A closed host: the library refuses ("the host is closed: make a new one").
    this.native.reset();
  }
  restartHost() {
    this.native.restartHost();
  }
  /**
   * From an `afterEach((t) => ...)` hook: when the test failed (node:test's
   * `t.passed`, vitest's `t.task.result.state`), prints what the host's
   * actors logged to stderr. Tells whether it printed.
   */
  printLogsIfFailed(t) {
    const failed = t?.passed === false || t?.task?.result?.state === "fail";
    if (!failed || this.#closed) return false;
    printLogs(this, this.logs(), `the test ${JSON.stringify(t.name ?? t.task?.name ?? "")} failed`, "the host's actors");
    return true;
  }
  get closed() {
    return this.#closed;
  }
  close() {
    if (this.#closed) return;
    this.#closed = true;
    this.native.close();
  }
  [Symbol.dispose]() {
    this.close();
  }
}

// Tests never run a stale component. A class's sources and build command
// come from, in order: the class's own `sources` and `build`; the
// wasmkeep.toml that names its component with a `build` (its `watch` paths,
// default the manifest's directory, the one file `wasmkeep-shim serve` and
// `serve --watch` use); the package.json whose `build` script runs
// `wasmkeep-build <entry> -o <the component>` (the entry's directory, built
// with `npm run build`). When a source is newer than the component (or the
// component is missing), the build command runs (wasmkeep-build's
// content-hash cache makes an unchanged bundle quick); with
// staleComponents: "fail", or no build command known, the host refuses to
// start, saying which command builds it. Nothing known: no check.

/** What serve --watch ignores, and tests (which are not the actor's sources). */
const NOT_SOURCES = new Set([".git", ".wasmkeep", "target", "node_modules", "build", "dist", "__pycache__", ".pytest_cache", ".mypy_cache", "test", "tests", "__tests__"]);

function findUp(start, name) {
  for (let dir = start; ; dir = dirname(dir)) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
    if (dirname(dir) === dir) return undefined;
  }
}

/** `# comment` removed, outside strings. */
function stripTomlComment(line) {
  let quote = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === "\\" && quote === '"') i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "#") return line.slice(0, i);
  }
  return line;
}

function tomlStrings(text) {
  return [...text.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)].map((m) => (m[1] !== undefined ? JSON.parse(`"${m[1]}"`) : m[2]));
}

/**
 * The `[classes.<name>]` tables of a wasmkeep.toml, with their string and
 * string-array values (all this check reads); undefined when it cannot be read.
 */
function manifestClasses(path) {
  try {
    const lines = readFileSync(path, "utf8").split(/\r?\n/);
    const classes = {};
    let current;
    for (let i = 0; i < lines.length; i++) {
      const line = stripTomlComment(lines[i]).trim();
      if (!line) continue;
      const table = /^\[\s*classes\s*\.\s*(?:"([^"]+)"|([A-Za-z0-9_-]+))\s*\]$/.exec(line);
      if (table) {
        current = classes[table[1] ?? table[2]] = {};
        continue;
      }
      if (line.startsWith("[")) {
        current = undefined;
        continue;
      }
      const kv = /^([A-Za-z0-9_-]+)\s*=\s*(.*)$/.exec(line);
      if (!kv || !current) continue;
      let value = kv[2];
      if (value.startsWith("[")) {
        while (!value.includes("]") && i + 1 < lines.length) value += ` ${stripTomlComment(lines[++i])}`;
        current[kv[1]] = tomlStrings(value);
      } else if (value.startsWith('"') || value.startsWith("'")) {
        current[kv[1]] = tomlStrings(value)[0];
      }
    }
    return classes;
  } catch {
    return undefined;
  }
}

/** `{paths, build, cwd, via}` for the component, or undefined when nothing says what its sources are. */
function sourcesOf(component, init, manifest) {
  if (init.sources !== undefined || init.build !== undefined) {
    const list = init.sources === undefined ? [] : Array.isArray(init.sources) ? init.sources : [init.sources];
    return { paths: list.map((p) => resolve(p)), build: init.build, cwd: process.cwd(), via: "the class's options" };
  }
  const manifests = [manifest, findUp(dirname(component), "wasmkeep.toml"), findUp(process.cwd(), "wasmkeep.toml")];
  for (const m of manifests) {
    if (!m) continue;
    const base = dirname(m);
    for (const c of Object.values(manifestClasses(m) ?? {})) {
      if (typeof c.component !== "string" || resolve(base, c.component) !== component || typeof c.build !== "string") continue;
      const watch = Array.isArray(c.watch) ? c.watch.map((w) => resolve(base, w)) : [base];
      return { paths: watch, build: c.build, cwd: base, via: shown(m) };
    }
  }
  const pkgPath = findUp(dirname(component), "package.json");
  if (!pkgPath) return undefined;
  let pkg;
  try {
    pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
  } catch {
    return undefined;
  }
  const script = pkg?.scripts?.build;
  const m = typeof script === "string" ? /wasmkeep-build\s+(\S+)(?:\s+\S+)*?\s+(?:-o|--out)\s+(\S+)/.exec(script) : null;
  if (!m) return undefined;
  const base = dirname(pkgPath);
  if (resolve(base, m[2]) !== component) return undefined;
  const entryDir = dirname(resolve(base, m[1]));
  return { paths: [entryDir === base ? resolve(base, m[1]) : entryDir], build: "npm run build --silent", cwd: base, via: shown(pkgPath) };
}

/** The newest file under `paths` (not the component itself): `{path, mtimeMs}`. */
function newestSource(paths, component) {
  let newest;
  const visit = (p, top) => {
    let st;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      const name = p.split(/[\\/]/).pop();
      if (!top && NOT_SOURCES.has(name)) return;
      for (const n of readdirSync(p)) visit(join(p, n), false);
    } else if (p !== component && !p.endsWith(".wasm") && (!newest || st.mtimeMs > newest.mtimeMs)) {
      newest = { path: p, mtimeMs: st.mtimeMs };
    }
  };
  for (const p of paths) visit(p, true);
  return newest;
}

/** A path as messages show it: relative to the working directory when under it. */
function shown(p) {
  const r = relative(process.cwd(), p);
  return r && !r.startsWith("..") ? r : p;
}

function ensureFresh(cls, component, sources, mode) {
  if (mode === "ignore" || !sources) return;
  const stale = () => {
    const built = existsSync(component) ? statSync(component).mtimeMs : -Infinity;
    const src = newestSource(sources.paths, component);
    return src && src.mtimeMs > built ? src : built === -Infinity ? { path: undefined } : undefined;
  };
  const before = stale();
  if (!before) return;
  const why = existsSync(component)
    ? `the component ${shown(component)} is older than its sources (${shown(before.path)} changed since it was built)`
    : `the component ${shown(component)} does not exist`;
  const where = sources.cwd === process.cwd() ? "" : ` in ${shown(sources.cwd)}`;
  if (!sources.build || mode === "fail") {
    const command = sources.build ? `\`${sources.build}\`${where}` : `\`npx wasmkeep-build <your entry, e.g. src/actor.ts> -o ${shown(component)}\``;
    throw new Error(`class ${cls}: ${why}: build it with ${command} before testing, so that the tests run the actor as it is now`);
  }
  process.stderr.write(`@wasmkeep/actor/testing: class ${cls}: ${why}: building it with \`${sources.build}\`${where} (from ${sources.via})\n`);
  // The build's output goes to stderr: a test runner reads stdout.
  const r = spawnSync(sources.build, { cwd: sources.cwd, shell: true, stdio: ["ignore", 2, 2] });
  if (r.status !== 0) {
    throw new Error(`class ${cls}: building ${shown(component)} with \`${sources.build}\`${where} failed (${r.error?.message ?? r.status ?? r.signal}); its output is above: fix what it says, or build it yourself before testing`);
  }
  const after = stale();
  if (after) {
    throw new Error(`class ${cls}: \`${sources.build}\`${where} ran, but ${after.path ? `${shown(component)} is still older than ${shown(after.path)}` : `${shown(component)} still does not exist`}: make the build command write that file (the class's component), or point the test at the file it writes`);
  }
}

/**
 * The compiled-component cache: inside this repository its target/ (which
 * the host's own tests share); elsewhere undefined, so the host uses the one
 * cache `wasmkeep-shim serve` uses too ($WASMKEEP_CACHE_DIR, else the user's
 * cache directory) and a component is compiled once for tests and serving.
 */
function defaultCacheDir() {
  const repoTarget = join(here, "..", "..", "target");
  if (existsSync(repoTarget)) return join(repoTarget, "wasmkeep-cache");
  return undefined;
}

/** A seed under which a runChaos body failed: its message is the host library's report. */
export class ChaosFailure extends Error {
  constructor(report, { seed, schedule, cause, logs }) {
    super(report, { cause });
    this.name = "ChaosFailure";
    this.seed = seed;
    this.schedule = schedule;
    this.logs = logs;
  }
}

function seedsOf(seeds) {
  if (seeds === undefined) return Array.from({ length: 100 }, (_, i) => i);
  if (typeof seeds === "number") {
    if (!Number.isSafeInteger(seeds) || seeds < 0) throw new RangeError(`runChaos: seeds: ${seeds}: give a count (0, 1, 2, …) or a list of seeds`);
    return Array.from({ length: seeds }, (_, i) => i);
  }
  if (seeds && typeof seeds[Symbol.iterator] === "function") return Array.from(seeds);
  throw new TypeError(`runChaos: seeds: ${String(seeds)}: give a count (0, 1, 2, …) or a list of seeds`);
}

export function runChaos(host, options, body) {
  if (typeof options === "function") [options, body] = [{}, options];
  if (!(host instanceof TestHost)) throw new TypeError("runChaos(host, options, body): host is a TestHost (createTestHost(...))");
  if (typeof body !== "function") throw new TypeError("runChaos(host, options, body): body is a function (host, seed) => { ... }");
  const replay = loadNative().chaosSeedFromEnvironment();
  const seeds = replay === null || replay === undefined ? seedsOf(options?.seeds) : [replay];
  const native = host.native;
  let ran = 0;
  try {
    for (const seed of seeds) {
      host.reset();
      native.startChaos(seed);
      let outcome;
      try {
        outcome = body(host, seed);
      } catch (error) {
        const message = error instanceof Error ? error.message : `${String(error)} (thrown, not an Error)`;
        // What explained the seed's 5xx answers (kept by the host library
        // while it ran: under chaos they are expected) is shown for the seed
        // that fails.
        const { records, report, explanations } = native.endChaos(message);
        for (const text of explanations) host[kLogSink](text);
        throw new ChaosFailure(report, { seed, schedule: records, cause: error, logs: explanations.join("") });
      }
      native.endChaos(undefined);
      if (outcome && typeof outcome.then === "function") {
        throw new TypeError("runChaos: the body returned a promise: it must be synchronous (every verb of the test host is)");
      }
      ran++;
    }
  } finally {
    // Never left in chaos mode, whatever happened.
    native.endChaos(undefined);
  }
  return ran;
}

export function createTestHost(options) {
  return new TestHost(options);
}

export function hostVersion() {
  return loadNative().hostVersion();
}

