// The native addon under @wasmkeep/actor/testing (wasmkeep-node-harness,
// sdk-ts/native/harness in the wasmkeep repository): where it is found, how
// it is loaded, and the shape of what it exports. Internal: the package
// exports none of this.
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { platformFile } from "../../build/platform.js";
import type { ChaosRecord, HistoryPosition, LogLine, OperatorDeleted, Restored, TestHostOptions } from "./types.js";

/**
 * The package's folder: this file is compiled to dist/testing/, two levels
 * below it, as its source (testing/src/) is.
 */
export const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

const LIB = process.platform === "darwin" ? "libwasmkeep_node_harness.dylib" : process.platform === "win32" ? "wasmkeep_node_harness.dll" : "libwasmkeep_node_harness.so";

/** An answer as the addon gives it. */
export interface NativeResponse {
  status: number;
  headers: [string, string][];
  body: Uint8Array;
  /** For an answer of 500 or more, what explains it (none under chaos). */
  explanation?: string | null;
}

/** A table's value as the addon gives it: integers and blobs as text. */
export type NativeValue = null | string | { integer: string } | { real: number } | { blob: string };

/** What `runChaos` of the addon found: `failure` and `cause` when a seed failed. */
export interface NativeChaosRun {
  /** How many seeds passed. */
  ran: number;
  failure?: { seed: number; message: string; report: string; records: ChaosRecord[]; explanations: string[] };
  /** What the failing seed's body threw. */
  cause?: unknown;
}

type Key = [app: string, cls: string, name: string];

/**
 * The addon's host (`NativeHost`, a `TestHost` of the host testing library).
 *
 * Written by hand, not generated: napi-rs writes an addon's .d.ts only
 * through its CLI's `napi build` (`@napi-rs/cli`, which gathers what
 * napi-derive's `type-def` feature emits), while this addon is built by
 * plain `cargo build` like the rest of the workspace (setup, the release,
 * the platform package); and about a dozen of its methods answer JSON
 * (`serde_json::Value`) or a plain `Object`, which the generated
 * declarations can only call `any` or `object`, so the shapes below (the
 * answers, the actors, the tables, the chaos run) would be lost. Each verb's
 * Rust method is bound by name in `native/harness/src/verbs.rs`.
 */
export interface NativeHost {
  readonly dataDir: string;
  readonly nodeCount: number;
  addApp(app: string, classes: { name: string; component: string; access?: string }[]): void;
  loadManifest(path: string): string;
  request(...args: [...Key, method: string, path: string, headers: [string, string][], body: Buffer, node: number | undefined]): NativeResponse;
  call(...key: [...Key, payload: Buffer]): { ok?: number[]; error?: { kind: string; message: string } };
  openSocket(...args: [...Key, path: string]): number;
  socketSend(id: number, message: string | Buffer): void;
  socketClose(id: number, code: number, reason: string): void;
  socketTake(id: number): ({ text: string } | { binary: number[] } | { close: { code: number; reason: string } })[];
  runAlarm(...key: Key): boolean;
  runAlarmOn(node: number, ...key: Key): boolean;
  actors(): { app: string; class: string; name: string; status: string; alarm: number | null; last_event: { at: number; kind: string; outcome: string } | null }[];
  exists(...key: Key): boolean;
  settle(...key: Key): void;
  tables(...key: Key): Record<string, { columns: string[]; rows: NativeValue[][] }>;
  restart(...key: Key): void;
  deleteActor(...key: Key): OperatorDeleted;
  requestOperatorDelete(...key: Key): string;
  deletionStatus(...key: Key): { status: string; at_ms?: number; how?: string; reason?: string };
  history(...key: Key): HistoryPosition[];
  restore(...args: [...Key, bookmark: string | undefined, timeMs: number | undefined]): Restored;
  logsOf(...key: Key): LogLine[];
  now(): number;
  advanceClock(ms: number): number;
  advanceClockRunningDue(ms: number): number;
  runDueAlarms(): number;
  armFault(node: number, kind: string, count: number): void;
  clearFaults(): void;
  logs(): LogLine[];
  metrics(): string;
  hibernateAll(): void;
  cutOff(node: number): void;
  runControlPasses(): void;
  setExpireAfterIdle(app: string, cls: string, limitMs: number | undefined): void;
  runExpiryPasses(): number;
  deleteApp(app: string): void;
  reset(): void;
  restartHost(): void;
  close(): void;
  startChaos(seed: number): void;
  endChaos(): { records: ChaosRecord[] };
  /** The testing library's chaos loop, calling `body` once per seed on this thread. */
  runChaos(seeds: number[], body: (seed: number) => void): NativeChaosRun;
}

/** What the addon exports. */
export interface NativeAddon {
  /** The host, made from the options the addon reads (the rest are the harness's own). */
  NativeHost: new (
    options: Pick<TestHostOptions, "dataDir" | "cacheDir" | "eventTimeoutMs" | "idleTimeoutMs" | "nodes" | "history">,
  ) => NativeHost;
  hostVersion(): string;
}

function addonPath(): string {
  if (process.env.WASMKEEP_NODE_HARNESS) return process.env.WASMKEEP_NODE_HARNESS;
  const candidates = [
    // The platform package's (@wasmkeep/actor-<platform>-<arch>-<libc>, ADR 029).
    platformFile("wasmkeep-harness.node"),
    // In testing/ (scripts/copy-harness.js puts it there).
    join(packageDir, "testing", "wasmkeep-harness.node"),
    // Inside the repository: the workspace's build of sdk-ts/native/harness.
    join(packageDir, "..", "target", "debug", LIB),
    join(packageDir, "..", "target", "release", LIB),
  ].filter((p): p is string => Boolean(p));
  // The newest one: inside the repository a fresh cargo build wins over a copy packed earlier.
  const found = candidates.filter((p) => existsSync(p)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!found) {
    throw new Error(
      "@wasmkeep/actor/testing: the native host addon is not built. In the wasmkeep repository run " +
        "`cargo build -p wasmkeep-node-harness` (or `npm run build:harness` in sdk-ts/), or set " +
        `WASMKEEP_NODE_HARNESS to the built library. Looked in:\n  ${candidates.join("\n  ")}`,
    );
  }
  return found;
}

let native: NativeAddon | undefined;

/** The addon, loaded on first use. */
export function loadNative(): NativeAddon {
  if (!native) {
    const m = { exports: {} };
    process.dlopen(m, addonPath());
    native = m.exports as NativeAddon;
  }
  return native;
}

/** Where a host's harness output goes (stderr; a test may catch it): a key no user's code names. */
export const kLogSink: unique symbol = Symbol("logSink");
