// @wasmkeep/actor/testing: run built actors in the wasmkeep host, in-process,
// from node --test or vitest. The host is the wasmkeep_shim library (the same
// one `wasmkeep-shim serve` runs) loaded as a native addon; see index.d.ts
// for the documentation of every item.
import { existsSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const LIB = process.platform === "darwin" ? "libwasmkeep_node_harness.dylib" : process.platform === "win32" ? "wasmkeep_node_harness.dll" : "libwasmkeep_node_harness.so";

function addonPath() {
  if (process.env.WASMKEEP_NODE_HARNESS) return process.env.WASMKEEP_NODE_HARNESS;
  const candidates = [
    // Shipped in the package (scripts/pack.js puts it there).
    join(here, "wasmkeep-harness.node"),
    // Inside the repository: the workspace's build of sdk-ts/testing/native.
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

export class TestActor {
  #host;
  constructor(host, app, cls, name) {
    this.#host = host;
    this.app = app;
    this.class = cls;
    this.name = name;
  }
  get #key() {
    return [this.app, this.class, this.name];
  }
  fetch(path = "/", init = {}) {
    const method = init.method ?? (init.body === undefined ? "GET" : "POST");
    const headers = init.headers ? (Array.isArray(init.headers) ? init.headers : Object.entries(init.headers)) : [];
    const p = path.startsWith("/") ? path : `/${path}`;
    const body = init.json !== undefined ? JSON.stringify(init.json) : init.body;
    return new TestResponse(this.#host.native.request(...this.#key, method, p, headers.map(([k, v]) => [String(k), String(v)]), toBuffer(body)));
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
    return this.#host.native.runAlarm(...this.#key);
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
}

export class TestHost {
  #closed = false;
  constructor(options = {}) {
    this.app = options.app ?? "test/app";
    const n = loadNative();
    this.native = new n.NativeHost({
      dataDir: options.dataDir,
      cacheDir: options.cacheDir ?? process.env.WASMKEEP_CACHE_DIR ?? defaultCacheDir(),
      eventTimeoutMs: options.eventTimeoutMs,
      idleTimeoutMs: options.idleTimeoutMs,
    });
    if (options.classes) this.addApp(this.app, options.classes);
    if (options.manifest) this.app = this.native.loadManifest(resolve(options.manifest));
  }
  get dataDir() {
    return this.native.dataDir;
  }
  addApp(app, classes) {
    const list = Object.entries(classes).map(([name, c]) =>
      typeof c === "string" ? { name, component: resolve(c) } : { name, component: resolve(c.component), access: c.access },
    );
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
  advance(ms) {
    return this.native.advanceClock(ms);
  }
  runDueAlarms() {
    return this.native.runDueAlarms();
  }
  get faults() {
    const native = this.native;
    return {
      failRemoval: (count = 1) => native.armFault("fail-removal", count),
      arm: (kind, count = 1) => native.armFault(kind, count),
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
  close() {
    if (this.#closed) return;
    this.#closed = true;
    this.native.close();
  }
  [Symbol.dispose]() {
    this.close();
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

export function createTestHost(options) {
  return new TestHost(options);
}

export function hostVersion() {
  return loadNative().hostVersion();
}

