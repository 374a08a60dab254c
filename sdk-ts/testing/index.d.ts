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

/**
 * A class of the test app: a component file, or the file with its access
 * rule and, optionally, what it is built from (see
 * {@link TestHostOptions.staleComponents}).
 */
export type ClassInit =
  | string
  | {
      component: string;
      access?: "open" | "existing" | "internal";
      /** The files or directories the component is built from (relative to the working directory). */
      sources?: string | string[];
      /** The shell command that builds it (run in the working directory). */
      build?: string;
    };

export interface TestHostOptions {
  /** The app's classes: name → component. Paths are relative to the working directory. */
  classes?: Record<string, ClassInit>;
  /** The app's name, `tenant/app` (default `"test/app"`). */
  app?: string;
  /** Load an app manifest (`wasmkeep.toml`) instead of `classes`. */
  manifest?: string;
  /**
   * What to do with a component older than its sources (or missing), so that
   * tests never run a stale build. A class's sources and build command come
   * from its own `sources`/`build`; else from the `wasmkeep.toml` naming its
   * component with a `build` key (its `watch` paths, default the manifest's
   * directory: the file `wasmkeep-shim serve` and `serve --watch` use; the
   * one given as `manifest`, or the nearest above the component or the
   * working directory); else from the `package.json` above the component
   * whose `build` script runs `wasmkeep-build <entry> -o <that component>`
   * (the entry's directory; built with `npm run build`). `test/`,
   * `node_modules/`, `dist/` and the like are not sources. When nothing says
   * what a component's sources are, it is not checked.
   *
   * - `"build"` (default): run the build command first (wasmkeep-build's
   *   content-hash cache makes an unchanged bundle quick), saying so on
   *   stderr; without one known, as `"fail"`.
   * - `"fail"`: refuse to start, saying the component is older than its
   *   sources and which command builds it.
   * - `"ignore"`: load what is there.
   */
  staleComponents?: "build" | "fail" | "ignore";
  /** The data directory (default: a new temporary one, in `/dev/shm` where there is one with 1 GiB free, removed by `close()`). */
  dataDir?: string;
  /** Where compiled components are cached (default: `$WASMKEEP_CACHE_DIR`, else a shared temp dir). */
  cacheDir?: string;
  /** An event's time limit (default 5000 ms). */
  eventTimeoutMs?: number;
  /** Idle time before an actor hibernates (default 30000 ms). */
  idleTimeoutMs?: number;
  /**
   * How many nodes (default 1). With 2 or more the host is a local cluster:
   * the nodes share a bucket (in the data directory) and the virtual clock,
   * each actor is held by one node, the others forward to it, and a node
   * cut off ({@link TestHost.cutOff}) is taken over from the bucket. Requests
   * go to node 1 unless they name one ({@link FetchInit.node}, {@link TestActor.onNode}).
   */
  nodes?: number;
  /**
   * A single node keeps its actors' history (default `false`: each write
   * would also write a file), every state restorable with
   * {@link TestActor.restore} and listed by {@link TestActor.history}. A
   * cluster keeps it in its bucket whatever this says.
   */
  history?: boolean;
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

/**
 * A verb of the test host that the host refuses or fails throws an `Error`
 * whose `code` names what happened, for a test to compare rather than the
 * message's words: the host's failure kinds (`"no-such-app"`,
 * `"no-such-class"`, `"needs-cluster"`, `"no-such-socket"`, `"bad-argument"`,
 * ...) or the harness's own (`"closed"`, `"no-such-node"`, `"unknown-fault"`,
 * `"bad-nodes"`); `"InvalidArg"` for an argument the native layer refuses
 * itself. E.g. `assert.throws(() => host.deleteApp(), { code: "needs-cluster" })`.
 */
export type HostErrorCode = string;

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
  /**
   * Cluster: the node (from 1) the request goes to; it serves it or forwards
   * it to the actor's holder. Default: node 1 (under {@link runChaos}, the
   * node the seed's schedule picks).
   */
  node?: number;
}

/**
 * Whether an actor was deleted, from positive evidence only. In a cluster it
 * is read from the actor's history in the bucket (a reset at its head); on a
 * single node from the record its finished removal left. Absence is never
 * `"deleted"`; `"unknown"` means the evidence could not be read.
 */
export type DeletionStatus =
  | { status: "deleted"; at: Date; how: "self" | "self_durable" | "operator" | "expired" | "unknown" | string }
  | { status: "not-deleted" }
  | { status: "unknown"; reason: string };

/** What an operator delete did: deleted, removed files it could not open (a damaged database), or found nothing. */
export type OperatorDeleted = "deleted" | "removed-unopenable" | "absent";

/** One position of an actor's history ({@link TestActor.history}). */
export interface HistoryPosition {
  /** Give it to {@link TestActor.restore} as `{ bookmark }`; bookmarks sort as positions do. */
  bookmark: string;
  /** What the position is: `"upload"` (a whole image), `"pages"`, `"fence"` or `"reset"`. */
  kind: string;
  /** When it was written, on the host's (virtual) clock, ms since the epoch. */
  at: number;
  /** Whether it is the actor's current state. */
  head: boolean;
}

/**
 * Where {@link TestActor.restore} goes back to: a bookmark of the history
 * (or a restore's `undo`), or a time (ms since the epoch on the host's
 * clock, or a `Date`), meaning the last state written at or before it.
 */
export type RestoreTo = { bookmark: string } | { time: number | Date };

/** What a restore did: three bookmarks. */
export interface Restored {
  /** The position whose state was restored. */
  from: string;
  /** The new head, where the restored state now stands. */
  at: string;
  /** The head before the restore: `restore({ bookmark: undo })` undoes it. */
  undo: string;
}

/** A line an actor logged. */
export interface LogLine {
  /** When, on the host's (virtual) clock, ms since the epoch. */
  at: number;
  /** `app:class/name`. */
  actor: string;
  level: string;
  message: string;
}

/** One actor of the host, by class and name. Nothing is created until an event reaches it. */
export declare class TestActor {
  readonly app: string;
  readonly class: string;
  readonly name: string;
  /** `app:class/name`, as log lines name the actor. */
  readonly address: string;
  /** The node this handle's requests go to ({@link onNode}), or `undefined`. */
  readonly node: number | undefined;
  /**
   * Sends a request event (the path after `/<class>/<name>`) and waits for
   * the answer and the event's end. An answer of 500 or more prints what the
   * actor logged to stderr (under {@link runChaos}: only if the seed fails).
   */
  fetch(path?: string, init?: FetchInit): TestResponse;
  /** The same actor, with every request (`fetch`, `get`, `post`, `delete`) sent to node `node` of a cluster. */
  onNode(node: number): TestActor;
  get(path?: string): TestResponse;
  post(path?: string, body?: string | Uint8Array): TestResponse;
  delete(path?: string): TestResponse;
  /** Runs `onCall` as the host (caller `null`). @throws {CallFailure} */
  call(payload?: string | Uint8Array): Uint8Array;
  /** {@link call} with the answer decoded as UTF-8. */
  callText(payload?: string | Uint8Array): string;
  /** Opens a WebSocket on `/<class>/<name><path>` (the actor's `onSocketOpen` runs). */
  openSocket(path?: string): TestSocket;
  /**
   * Runs this actor's alarm if it is due on the virtual clock; tells whether
   * one ran. In a cluster it goes through this actor's node
   * (`actor.onNode(2).runAlarm()`), or by default the lowest live node, which
   * forwards it to the holder.
   */
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
  /**
   * One table's rows as objects (`[]` when the table does not exist), typed
   * by the caller: `actor.rows<{ id: number; n: number }>("counter")`.
   */
  rows<T = Record<string, TableValue>>(table: string): T[];
  /** What this actor logged (from the host's last 1000 lines). */
  logs(): LogLine[];
  /**
   * Restarts the actor as a crash and recovery would: what it kept in memory
   * is gone, an open transaction is rolled back; its next event recovers it
   * from its database. Its sockets stay open.
   */
  restart(): void;
  /**
   * Deletes the actor as an operator would (`wasmkeep-shim actor delete` on
   * one node): no guest code runs, its sockets are closed with 1000; the next
   * request meets a new actor.
   */
  operatorDelete(): OperatorDeleted;
  /**
   * Cluster: an operator delete as `wasmkeep-shim actor delete` asks for it
   * (a request in the bucket), carried out by the actor's holder before this
   * returns; the request's id. On a single node use {@link operatorDelete}.
   */
  requestOperatorDelete(): string;
  /** Whether the actor was deleted, from positive evidence only. */
  deletionStatus(): DeletionStatus;
  /**
   * The actor's history, oldest first. A single node keeps one only when the
   * host was started with `history: true` (else this throws with code
   * `"bad-argument"`); a cluster always does. An actor never written has none.
   */
  history(): HistoryPosition[];
  /**
   * Restores the actor to a bookmark or a time, after the events queued for
   * it: its open sockets close with 1012, its alarm becomes the restored
   * state's, and its next event runs on the restored state. The restore is
   * a new position: `restore({ bookmark: restored.undo })` undoes it. Throws
   * with code `"bad-argument"` for a malformed bookmark, a host without
   * history, or a target before the actor's first state or its last delete;
   * `"no-such-actor"` for an actor that never was.
   */
  restore(to: RestoreTo): Restored;
}

/** Faults to inject into the host. */
export interface Faults {
  /** The next `count` attempts to remove an actor's files on `node` (default 1) fail (`deleteSelfDurable` throws `internal`). */
  failRemoval(count?: number, node?: number): void;
  /** Arms a fault by the host's name for it (`"fail-removal"`, ...) on `node` (numbered from 1, default 1): it hits only events that node runs. */
  arm(kind: string, count?: number, node?: number): void;
  /** Clears every armed fault, on every node. */
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
  /**
   * Moves the virtual clock forward; returns the new time. By default due
   * alarms run only on `runDueAlarms()`/`runAlarm()`. With `{ runDue: true }`
   * the clock moves as a running clock would and runs what falls due on the
   * way: each alarm due by the new time runs at its own time, in order (an
   * alarm that sets itself again inside the window runs again), alarms
   * already due first; a cluster's passes run as the clock passes their
   * intervals.
   */
  advance(ms: number, options?: AdvanceOptions): number;
  /** Runs every due alarm; returns how many ran. */
  runDueAlarms(): number;
  readonly faults: Faults;
  /** Every actor the host knows. */
  actors(): {
    app: string;
    class: string;
    name: string;
    status: string;
    alarm: number | null;
    /** The actor's last guest event on this node: `kind` request, call, alarm, socket-*; `outcome` "ok" or the failure kind. */
    last_event: { at: number; kind: string; outcome: string } | null;
  }[];
  /** What actors logged (the last 1000 lines of each node; every node's in a cluster, in the order of their time). */
  logs(): LogLine[];
  /**
   * For an `afterEach((t) => host.printLogsIfFailed(t))` hook (node:test or
   * vitest): when the test failed, prints what the actors logged to stderr.
   * Tells whether it printed.
   */
  printLogsIfFailed(t: { passed?: boolean; name?: string; task?: { name?: string; result?: { state?: string } } }): boolean;
  /** The host's metrics in Prometheus text. */
  metrics(): string;
  /** Hibernates every resident actor, on every node (their next event reopens them). */
  hibernateAll(): void;
  /** How many nodes the host runs (1, or a cluster's count). */
  readonly nodes: number;
  /**
   * Cluster: cuts node `node` off (numbered from 1): it holds nothing from
   * now on, and the other nodes take its actors over from the bucket.
   */
  cutOff(node: number): void;
  /** Cluster: runs each node's control pass once (app tombstones, operator delete requests), as a moving clock does every second. */
  runControlPasses(): void;
  /**
   * Cluster: the `expire-after-idle` of a class of the app (as the manifest's
   * key or `serve --expire-after-idle`), in ms, at least an hour
   * (3,600,000); `null` removes it.
   */
  setExpireAfterIdle(cls: string, limitMs: number | null, app?: string): void;
  /**
   * Cluster: runs each node's idle-expiry pass once; how many actors were
   * expired (deleted). Moving the clock runs it too, every ten minutes of virtual time.
   */
  runExpiryPasses(): number;
  /**
   * Cluster: deletes the app as `wasmkeep-shim app delete` does (its
   * tombstone, every node stops serving it, then its data goes). Requests
   * to it fail from then on.
   */
  deleteApp(app?: string): void;
  /**
   * Starts over for the next test: no actor, socket, alarm, armed fault or
   * log line is left, the clock is back at its start, and the same apps are
   * loaded again (already compiled). Open {@link TestSocket}s are dropped
   * without close events and must not be used again; {@link TestActor}s stay usable.
   */
  reset(): void;
  /**
   * Restarts the whole host, as its process would stop and start again on the
   * same data: every socket is closed with 1001 "going away" (open
   * {@link TestSocket}s must not be used again), every resident actor is
   * released (an open transaction rolled back), and the host starts again on
   * the same data, at the same virtual time, with the same apps; alarms stay
   * indexed, and a node that was cut off is live again. Chaos goes on.
   */
  restartHost(): void;
  /** Whether {@link close} was called. */
  readonly closed: boolean;
  /** Stops the host and removes its temporary data directory. */
  close(): void;
  [Symbol.dispose](): void;
}

/** Options of {@link TestHost.advance}. */
export interface AdvanceOptions {
  /** Run each alarm that falls due on the way, at its own time (default false). */
  runDue?: boolean;
}

/** One thing a chaos schedule did before an event. */
export interface ChaosRecord {
  /** The event it came before (1 for the seed's first event). */
  event: number;
  /** The actor the event went to, `app:class/name`. */
  actor: string;
  /** The node the event was sent to (1 on a single node). */
  node: number;
  /** What was done. */
  step: "fail-removal" | "restart" | "hibernate" | "late-alarms" | "lose-answer" | "crash-after-answer" | "fail-upload" | "upload-lands-but-fails" | "lose-hold" | "cut-off";
  /** `late-alarms`: how far the clock moved on before the due alarms ran. */
  ms?: number;
  /** `cut-off`: the node cut off. */
  cut?: number;
  /** The line the report prints for it. */
  text: string;
}

/**
 * The seed under which a {@link runChaos} body failed. Its `message` is the
 * host library's report: the seed, `WASMKEEP_CHAOS_SEED=<seed>` to replay
 * it alone, the body's error message, and the schedule, one step a line.
 */
export declare class ChaosFailure extends Error {
  readonly name: "ChaosFailure";
  /** `WASMKEEP_CHAOS_SEED=<seed>` (or `seeds: [seed]`) replays exactly this run. */
  readonly seed: number;
  /** What the schedule did before each event, in order. */
  readonly schedule: ChaosRecord[];
  /** What the body threw. */
  readonly cause: unknown;
  /** What the harness would have printed under this seed (the logs of requests answering 500 or more). */
  readonly logs: string;
}

export interface ChaosOptions {
  /** A count (seeds 0 to n-1) or the seeds to run (default 100). */
  seeds?: number | Iterable<number>;
}

/**
 * Seeded chaos: runs `body` once per seed, each time after `host.reset()`
 * and under that seed's schedule of what goes wrong at the durable
 * boundaries before each request, call and socket opening: a failed removal
 * (a `deleteSelfDurable` answering `internal`), an actor restarted, every
 * actor hibernated, the clock moved on and the due alarms run late; in a
 * cluster also a failed upload, an upload that lands but reports failure, a
 * lost hold, a node cut off, and the event sent to any live node. The draws
 * depend on the seed and the events' order only, so one seed replays the
 * same schedule, and exactly the same answers, on one node and on several,
 * as long as the body decides only from its seed (the host runs a step that
 * touches several actors one after another, and lets every queued event run
 * before it arms a fault; ADR 080).
 *
 * The body is synchronous and throws (an assertion) when its invariant
 * breaks; the first failing seed throws a {@link ChaosFailure}. With
 * `WASMKEEP_CHAOS_SEED` set only that seed runs. The host is never left in
 * chaos mode, whether runChaos returns or throws (its state is that of the
 * last seed run). Returns how many seeds ran.
 *
 * ```ts
 * const host = createTestHost({ classes: { counter: "counter.wasm" } });
 * runChaos(host, { seeds: 1000 }, (host) => {
 *   const c = host.actor("counter", "c");
 *   c.post();
 *   while (c.delete().status !== 200); // "internal" (500): retry
 *   assert.equal(c.get().text(), "0");
 * });
 * ```
 * @throws {ChaosFailure} the body failed under a seed
 */
export declare function runChaos(host: TestHost, options: ChaosOptions, body: (host: TestHost, seed: number) => void): number;
export declare function runChaos(host: TestHost, body: (host: TestHost, seed: number) => void): number;

/** `new TestHost(options)`. */
export declare function createTestHost(options?: TestHostOptions): TestHost;

/** The version of the host library the addon was built from. */
export declare function hostVersion(): string;
