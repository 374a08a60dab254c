// The TypeScript SDK's per-call costs, timed inside the engine: each piece
// of the path an event takes (ADR 057), and a storage call beside the
// bindings' own call, so that what the SDK adds shows apart from what the
// engine's bindings and the host cost. `wasmkeep-bench --only ts-sdk` asks
// it with one GET and prints the figures; not a test (the SDK's tests only
// check that it answers). Built by scripts/build-guests.js into
// target/components/sdk-ts-hot-path.wasm (QuickJS) and
// sdk-ts-hot-path-starlingmonkey.wasm. Only the SDK's public API, so the same
// file builds against an older SDK for a before-and-after.
import { Request, decodeText, defineActor, encodeText, json, storage, text } from "@wasmkeep/actor";
// The bindings' own storage import (under QuickJS, wasmkeep-build points it
// at the engine's dialect, as it does the SDK's).
import * as wit from "wasmkeep:actor/storage@0.2.4";

/** Calls per piece, unless the request asks for another number (`/?calls=10`, as the SDK's test does). */
const CALLS = 5_000;
let calls = CALLS;

let sink = 0;

/** The engine's finest clock: `performance.now()` where there is one. */
const clock: () => number = typeof performance === "object" && typeof performance.now === "function" ? () => performance.now() : () => Date.now();

declare const performance: { now(): number } | undefined;

/** µs per call of `f`, over `calls` calls. */
function perCall(f: (i: number) => void): number {
  const started = clock();
  for (let i = 0; i < calls; i++) f(i);
  return ((clock() - started) * 1000) / calls;
}

const HEADERS: [string, string][] = [
  ["host", "127.0.0.1"],
  ["user-agent", "wasmkeep-bench"],
];
const NO_BODY = new Uint8Array();
const ASCII40 = "abcdefghij".repeat(4);
const ASCII40_BYTES = encodeText(ASCII40);
const OBJECT = { n: 1, name: "counter", items: [1, 2, 3, 4, 5], nested: { a: true, b: null, c: "x" } };

/** Each piece, by the name the bench prints. */
function measure(): Record<string, number> {
  return {
    "an empty call (the loop itself)": perCall((i) => {
      sink += i;
    }),
    "new Request (a GET with two headers)": perCall(() => {
      sink += new Request("GET", "/", HEADERS, NO_BODY).path.length;
    }),
    "text(String(i))": perCall((i) => {
      sink += text(String(i)).status ?? 0;
    }),
    "json of an object of 13 values": perCall(() => {
      sink += json(OBJECT).status ?? 0;
    }),
    'encodeText("12")': perCall(() => {
      sink += encodeText("12").length;
    }),
    "encodeText of 40 ASCII characters": perCall(() => {
      sink += encodeText(ASCII40).length;
    }),
    "decodeText of 40 ASCII bytes": perCall(() => {
      sink += decodeText(ASCII40_BYTES).length;
    }),
    'storage.query("SELECT 1 AS n")': perCall(() => {
      sink += storage.query("SELECT 1 AS n").length;
    }),
    'the bindings\' query("SELECT 1 AS n")': perCall(() => {
      sink += wit.query("SELECT 1 AS n", []).rows.length;
    }),
    "storage.exec of an UPDATE of one row": perCall(() => {
      sink += storage.exec("UPDATE t SET n = n + 1 WHERE id = 1");
    }),
    "the bindings' exec of the same UPDATE": perCall(() => {
      sink += Number(wit.exec("UPDATE t SET n = n + 1 WHERE id = 1", []));
    }),
  };
}

/** The pieces a transaction refuses. */
function measureOutsideTransaction(): Record<string, number> {
  return {
    "storage.flush()": perCall(() => {
      storage.flush();
    }),
    "the bindings' flush()": perCall(() => {
      wit.flush();
    }),
  };
}

export default defineActor({
  onInit() {
    storage.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO t VALUES (1, 0);");
  },
  onRequest(request) {
    const asked = Number(request.query["calls"]);
    calls = Number.isSafeInteger(asked) && asked > 0 ? asked : CALLS;
    // The UPDATEs in one transaction: they are measured, not the commits.
    const figures = { ...storage.transaction(measure), ...measureOutsideTransaction() };
    // A line per piece, `µs<TAB>name`, which the bench reads without a JSON parser.
    const lines = Object.entries(figures).map(([name, us]) => `${us.toFixed(3)}\t${name}`);
    return text(`${lines.join("\n")}\n`, { headers: { "x-calls": String(calls), "x-sink": String(sink) } });
  },
});
