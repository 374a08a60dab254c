// The plain types of @wasmkeep/actor/testing: options, values and records.
// (The classes the links name are imported for the links alone.)
import type { runChaos } from "./chaos.js";
import type { TestActor } from "./actor.js";
import type { TestHost } from "./host.js";

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

/** What an actor sent a socket's client: text, bytes, or the close. */
export type SocketReceived = string | Uint8Array | { close: { code: number; reason: string } };

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

/** Faults to inject into the host. */
export interface Faults {
  /** The next `count` attempts to remove an actor's files on `node` (default 1) fail (`deleteSelfDurable` throws `internal`). */
  failRemoval(count?: number, node?: number): void;
  /** Arms a fault by the host's name for it (`"fail-removal"`, ...) on `node` (numbered from 1, default 1): it hits only events that node runs. */
  arm(kind: string, count?: number, node?: number): void;
  /** Clears every armed fault, on every node. */
  clear(): void;
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

export interface ChaosOptions {
  /** A count (seeds 0 to n-1) or the seeds to run (default 100). */
  seeds?: number | Iterable<number>;
}
