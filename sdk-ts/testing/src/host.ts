// The test host: a wasmkeep host on a virtual clock with its own data
// directory, one node or a local cluster.
import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { TestActor, nodeNumber } from "./actor.js";
import { type NativeHost, kLogSink, loadNative, packageDir } from "./native.js";
import { ensureFresh, manifestClasses, sourcesOf, type StaleMode } from "./stale.js";
import type { AdvanceOptions, ClassInit, Faults, LogLine, TestHostOptions } from "./types.js";

/** Writes log lines to the host's sink (stderr), headed by why they are shown. */
function printLogs(host: TestHost, lines: LogLine[], why: string, whose: string): void {
  const shown = lines.slice(-50);
  let text = `@wasmkeep/actor/testing: ${why}; `;
  if (lines.length === 0) text += `${whose} logged nothing\n`;
  else text += `what ${whose} logged${lines.length > shown.length ? ` (the last ${shown.length} of ${lines.length} lines)` : ""}:\n`;
  for (const l of shown) text += `  [${l.level} ${l.actor}] ${l.message.replace(/\n/g, "\n    ")}\n`;
  host[kLogSink](text);
}

/**
 * The compiled-component cache: inside the wasmkeep repository its target/
 * (which the host's own tests share); elsewhere undefined, so the host uses
 * the one cache `wasmkeep-shim serve` uses too ($WASMKEEP_CACHE_DIR, else the
 * user's cache directory) and a component is compiled once for tests and serving.
 */
function defaultCacheDir(): string | undefined {
  const repoTarget = join(packageDir, "..", "target");
  if (existsSync(repoTarget)) return join(repoTarget, "wasmkeep-cache");
  return undefined;
}

/** A host running one app, with a virtual clock and isolated storage. */
export class TestHost implements Disposable {
  #closed = false;
  #stale: StaleMode = "build";
  /** The app `actor()` addresses by default. */
  readonly app: string;
  /** @internal The addon's host. */
  readonly native: NativeHost;
  /** @internal Where what the harness prints goes (stderr; a test may catch it). */
  [kLogSink] = (text: string): void => {
    process.stderr.write(text);
  };
  constructor(options: TestHostOptions = {}) {
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
  /** This host's data directory. */
  get dataDir(): string {
    return this.native.dataDir;
  }
  /** Adds (or replaces) an app. */
  addApp(app: string, classes: Record<string, ClassInit>): void {
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
  /** An actor of the app by class and name. */
  actor(cls: string, name: string, app: string = this.app): TestActor {
    return new TestActor(this, app, cls, name);
  }
  /** The virtual clock, ms since the epoch. */
  now(): number {
    return this.native.now();
  }
  /**
   * Moves the virtual clock forward; returns the new time. By default due
   * alarms run only on `runDueAlarms()`/`runAlarm()`. With `{ runDue: true }`
   * the clock moves as a running clock would and runs what falls due on the
   * way: each alarm due by the new time runs at its own time, in order (an
   * alarm that sets itself again inside the window runs again), alarms
   * already due first; a cluster's passes run as the clock passes their
   * intervals.
   */
  advance(ms: number, options?: AdvanceOptions): number {
    const given: AdvanceOptions | null = options === undefined ? {} : options;
    if (given === null || typeof given !== "object") throw new TypeError("advance(ms, options): options is an object such as { runDue: true }");
    if (given.runDue) {
      this.native.advanceClockRunningDue(ms);
      return this.native.now();
    }
    return this.native.advanceClock(ms);
  }
  /** Runs every due alarm; returns how many ran. */
  runDueAlarms(): number {
    return this.native.runDueAlarms();
  }
  get faults(): Faults {
    const native = this.native;
    return {
      failRemoval: (count = 1, node = 1) => native.armFault(nodeNumber(node), "fail-removal", count),
      arm: (kind, count = 1, node = 1) => native.armFault(nodeNumber(node), kind, count),
      clear: () => native.clearFaults(),
    };
  }
  /** Every actor the host knows. */
  actors(): {
    app: string;
    class: string;
    name: string;
    status: string;
    alarm: number | null;
    /** The actor's last guest event on this node: `kind` request, call, alarm, socket-*; `outcome` "ok" or the failure kind. */
    last_event: { at: number; kind: string; outcome: string } | null;
  }[] {
    return this.native.actors();
  }
  /** What actors logged (the last 1000 lines of each node; every node's in a cluster, in the order of their time). */
  logs(): LogLine[] {
    return this.native.logs();
  }
  /** The host's metrics in Prometheus text. */
  metrics(): string {
    return this.native.metrics();
  }
  /** Hibernates every resident actor, on every node (their next event reopens them). */
  hibernateAll(): void {
    this.native.hibernateAll();
  }
  /** How many nodes the host runs (1, or a cluster's count). */
  get nodes(): number {
    return this.native.nodeCount;
  }
  /**
   * Cluster: cuts node `node` off (numbered from 1): it holds nothing from
   * now on, and the other nodes take its actors over from the bucket.
   */
  cutOff(node: number): void {
    this.native.cutOff(nodeNumber(node));
  }
  /** Cluster: runs each node's control pass once (app tombstones, operator delete requests), as a moving clock does every second. */
  runControlPasses(): void {
    this.native.runControlPasses();
  }
  /**
   * Cluster: the `expire-after-idle` of a class of the app (as the manifest's
   * key or `serve --expire-after-idle`), in ms, at least an hour
   * (3,600,000); `null` removes it.
   */
  setExpireAfterIdle(cls: string, limitMs: number | null, app: string = this.app): void {
    this.native.setExpireAfterIdle(app, cls, limitMs ?? undefined);
  }
  /**
   * Cluster: runs each node's idle-expiry pass once; how many actors were
   * expired (deleted). Moving the clock runs it too, every ten minutes of virtual time.
   */
  runExpiryPasses(): number {
    return this.native.runExpiryPasses();
  }
  /**
   * Cluster: deletes the app as `wasmkeep-shim app delete` does (its
   * tombstone, every node stops serving it, then its data goes). Requests
   * to it fail from then on.
   */
  deleteApp(app: string = this.app): void {
    this.native.deleteApp(app);
  }
  /**
   * Starts over for the next test: no actor, socket, alarm, armed fault or
   * log line is left, the clock is back at its start, and the same apps are
   * loaded again (already compiled). Open {@link TestSocket}s are dropped
   * without close events and must not be used again; {@link TestActor}s stay usable.
   */
  reset(): void {
    // A closed host: the library refuses ("the host is closed: make a new one").
    this.native.reset();
  }
  /**
   * Restarts the whole host, as its process would stop and start again on the
   * same data: every socket is closed with 1001 "going away" (open
   * {@link TestSocket}s must not be used again), every resident actor is
   * released (an open transaction rolled back), and the host starts again on
   * the same data, at the same virtual time, with the same apps; alarms stay
   * indexed, and a node that was cut off is live again. Chaos goes on.
   */
  restartHost(): void {
    this.native.restartHost();
  }
  /**
   * For an `afterEach((t) => host.printLogsIfFailed(t))` hook (node:test or
   * vitest): when the test failed (node:test's `t.passed`, vitest's
   * `t.task.result.state`), prints what the actors logged to stderr.
   * Tells whether it printed.
   */
  printLogsIfFailed(t: { passed?: boolean; name?: string; task?: { name?: string; result?: { state?: string } } }): boolean {
    const failed = t?.passed === false || t?.task?.result?.state === "fail";
    if (!failed || this.#closed) return false;
    printLogs(this, this.logs(), `the test ${JSON.stringify(t.name ?? t.task?.name ?? "")} failed`, "the host's actors");
    return true;
  }
  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }
  /** Stops the host and removes its temporary data directory. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.native.close();
  }
  [Symbol.dispose](): void {
    this.close();
  }
}

/** `new TestHost(options)`. */
export function createTestHost(options?: TestHostOptions): TestHost {
  return new TestHost(options);
}

/** The version of the host library the addon was built with. */
export function hostVersion(): string {
  return loadNative().hostVersion();
}
