/**
 * `@wasmkeep/actor/testing`: run built actor components in the wasmkeep host,
 * in-process, from `node --test` or vitest. The host is the `wasmkeep_shim`
 * library (the one `wasmkeep-shim serve` runs) loaded as a native addon, with
 * a virtual clock and its own temporary data directory per {@link TestHost}.
 *
 * ```ts
 * import { test } from "node:test";
 * import assert from "node:assert/strict";
 * import { createTestHost } from "@wasmkeep/actor/testing";
 *
 * test("counts", () => {
 *   const host = createTestHost({ classes: { counter: "counter.wasm" } });
 *   const c = host.actor("counter", "a");
 *   assert.equal(c.post("/").text(), "1");
 *   assert.deepEqual(c.rows("counter"), [{ id: 1, n: 1 }]);
 *   host.close(); // or `using host = ...` on Node 22+
 * });
 * ```
 * @module
 */

/** A class of the test app: a component file, or the file with its access rule. */
export type ClassInit = string | { component: string; access?: "open" | "existing" | "internal" };

export interface TestHostOptions {
  /** The app's classes: name → component. Paths are relative to the working directory. */
  classes?: Record<string, ClassInit>;
  /** The app's name, `tenant/app` (default `"test/app"`). */
  app?: string;
  /** Load an app manifest (`wasmkeep.toml`) instead of `classes`. */
  manifest?: string;
  /** The data directory (default: a new temporary one, removed by `close()`). */
  dataDir?: string;
  /** Where compiled components are cached (default: `$WASMKEEP_CACHE_DIR`, else a shared temp dir). */
  cacheDir?: string;
  /** An event's time limit (default 5000 ms). */
  eventTimeoutMs?: number;
  /** Idle time before an actor hibernates (default 30000 ms). */
  idleTimeoutMs?: number;
}

/** A value read from an actor's table: integers as number (bigint beyond 2^53), blobs as Uint8Array. */
export type TableValue = null | number | bigint | string | Uint8Array;

/** An actor's answer. */
export declare class TestResponse {
  readonly status: number;
  readonly headers: [string, string][];
  readonly body: Uint8Array;
  /** The first value of a header (case-insensitive). */
  header(name: string): string | undefined;
  text(): string;
  json<T = unknown>(): T;
}

/** A host call failed: `code` is `"refused"`, `"rejected"` or `"failed"`. */
export declare class CallFailure extends Error {
  readonly code: "refused" | "rejected" | "failed";
}

/** What an actor sent a socket's client: text, bytes, or the close. */
export type SocketReceived = string | Uint8Array | { close: { code: number; reason: string } };

/** A WebSocket client connected to an actor. */
export declare class TestSocket {
  /** The socket's id, as the actor sees it. */
  readonly id: number;
  /** Sends a message (the actor's `onSocketMessage` runs). */
  send(message: string | Uint8Array): void;
  /** The client closes the socket (the actor's `onSocketClose` runs). */
  close(code?: number, reason?: string): void;
  /** What the actor sent since the last call, in order. Call `actor.settle()` first after `send`. */
  received(): SocketReceived[];
}

export interface FetchInit {
  /** Default `GET`, or `POST` when there is a body. */
  method?: string;
  headers?: [string, string][] | Record<string, string>;
  body?: string | Uint8Array;
  /** A body sent as JSON. */
  json?: unknown;
}

/** One actor of the host, by class and name. Nothing is created until an event reaches it. */
export declare class TestActor {
  readonly app: string;
  readonly class: string;
  readonly name: string;
  /** Sends a request event (the path after `/<class>/<name>`) and waits for the answer. */
  fetch(path?: string, init?: FetchInit): TestResponse;
  get(path?: string): TestResponse;
  post(path?: string, body?: string | Uint8Array): TestResponse;
  delete(path?: string): TestResponse;
  /** Runs `onCall` as the host (caller `null`). @throws {CallFailure} */
  call(payload?: string | Uint8Array): Uint8Array;
  /** {@link call} with the answer decoded as UTF-8. */
  callText(payload?: string | Uint8Array): string;
  /** Opens a WebSocket on `/<class>/<name><path>` (the actor's `onSocketOpen` runs). */
  openSocket(path?: string): TestSocket;
  /** Runs this actor's alarm if it is due on the virtual clock; tells whether one ran. */
  runAlarm(): boolean;
  /** The pending alarm, or `null`. */
  readonly alarm: Date | null;
  /** Whether the actor has a database (false before its first event and after a delete). */
  exists(): boolean;
  /** `"resident"`, `"hibernated"`, `"deleted"` or `"absent"`. */
  status(): "resident" | "hibernated" | "deleted" | "absent";
  /** Waits until the events queued for this actor (socket messages, closes) have run. */
  settle(): void;
  /** Every table of the actor's database with its columns and rows. */
  tables(): Record<string, { columns: string[]; rows: TableValue[][] }>;
  /** One table's rows as objects (`[]` when the table does not exist). */
  rows<T = Record<string, TableValue>>(table: string): T[];
}

/** Faults to inject into the host. */
export interface Faults {
  /** The next `count` attempts to remove an actor's files fail (`deleteSelfDurable` throws `internal`). */
  failRemoval(count?: number): void;
  /** Arms a fault by the host's name for it (`"fail-removal"`, ...). */
  arm(kind: string, count?: number): void;
  /** Clears every armed fault. */
  clear(): void;
}

/** A host running one app, with a virtual clock and isolated storage. */
export declare class TestHost implements Disposable {
  constructor(options?: TestHostOptions);
  /** The app `actor()` addresses by default. */
  readonly app: string;
  /** This host's data directory. */
  readonly dataDir: string;
  /** Adds (or replaces) an app. */
  addApp(app: string, classes: Record<string, ClassInit>): void;
  /** An actor of the app by class and name. */
  actor(cls: string, name: string, app?: string): TestActor;
  /** The virtual clock, ms since the epoch. */
  now(): number;
  /** Moves the virtual clock forward; due alarms run only on `runDueAlarms()`/`runAlarm()`. Returns the new time. */
  advance(ms: number): number;
  /** Runs every due alarm; returns how many ran. */
  runDueAlarms(): number;
  readonly faults: Faults;
  /** Every actor the host knows. */
  actors(): { app: string; class: string; name: string; status: string; alarm: number | null }[];
  /** What actors logged. */
  logs(): { at: number; actor: string; level: string; message: string }[];
  /** The host's metrics in Prometheus text. */
  metrics(): string;
  /** Hibernates every resident actor (their next event reopens them). */
  hibernateAll(): void;
  /** Stops the host and removes its temporary data directory. */
  close(): void;
  [Symbol.dispose](): void;
}

/** `new TestHost(options)`. */
export declare function createTestHost(options?: TestHostOptions): TestHost;

/** The version of the host library the addon was built from. */
export declare function hostVersion(): string;
