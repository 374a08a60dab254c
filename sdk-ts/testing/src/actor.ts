// One actor of a test host: its events, its state, and what an operator does to it.
import type { TestHost } from "./host.js";
import { type NativeHost, type NativeValue, kLogSink } from "./native.js";
import { CallFailure, TestResponse, TestSocket, toBuffer } from "./response.js";
import type { DeletionStatus, FetchInit, HistoryPosition, LogLine, OperatorDeleted, RestoreTo, Restored, TableValue } from "./types.js";

const decoder = new TextDecoder();

/** @internal A node number, refused unless a whole number from 1. */
export function nodeNumber(node: number): number {
  if (!Number.isInteger(node) || node < 1) throw new RangeError(`node ${node}: nodes are numbered from 1`);
  return node;
}

/** A value of `tables()` as plain JS: integers as number (bigint beyond 2^53), blobs as Uint8Array. */
function plainValue(v: NativeValue): TableValue {
  if (v === null || typeof v !== "object") return v;
  if ("integer" in v) {
    const b = BigInt(v.integer);
    return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
  }
  if ("real" in v) return v.real;
  return Uint8Array.from(v.blob.match(/../g) ?? [], (h) => parseInt(h, 16));
}

/** `{status: "deleted", at: Date, how}`, `{status: "not-deleted"}` or `{status: "unknown", reason}`. */
function deletionStatusOf(raw: ReturnType<NativeHost["deletionStatus"]>): DeletionStatus {
  if (raw.status === "deleted") return { status: "deleted", at: new Date(Number(raw.at_ms)), how: raw.how as string };
  if (raw.status === "unknown") return { status: "unknown", reason: raw.reason as string };
  return { status: "not-deleted" };
}

/** One actor of the host, by class and name. Nothing is created until an event reaches it. */
export class TestActor {
  readonly #host: TestHost;
  readonly #node: number | undefined;
  readonly app: string;
  readonly class: string;
  readonly name: string;
  /** @internal */
  constructor(host: TestHost, app: string, cls: string, name: string, node?: number) {
    this.#host = host;
    this.app = app;
    this.class = cls;
    this.name = name;
    this.#node = node;
  }
  get #key(): [string, string, string] {
    return [this.app, this.class, this.name];
  }
  get #native(): NativeHost {
    return this.#host.native;
  }
  /** `app:class/name`, as log lines name the actor. */
  get address(): string {
    return `${this.app}:${this.class}/${this.name}`;
  }
  /** The node this handle's requests go to ({@link onNode}), or `undefined`. */
  get node(): number | undefined {
    return this.#node;
  }
  /** The same actor, with every request (`fetch`, `get`, `post`, `delete`) sent to node `node` of a cluster. */
  onNode(node: number): TestActor {
    return new TestActor(this.#host, this.app, this.class, this.name, nodeNumber(node));
  }
  /**
   * Sends a request event (the path after `/<class>/<name>`) and waits for
   * the answer and the event's end. An answer of 500 or more prints what the
   * actor logged to stderr (under {@link runChaos}: only if the seed fails).
   */
  fetch(path?: string, init?: FetchInit): TestResponse {
    const given = path ?? "/";
    const { method: m, headers: h, json, body: b, node: n } = init ?? {};
    const method = m ?? (b === undefined && json === undefined ? "GET" : "POST");
    const headers = h ? (Array.isArray(h) ? h : Object.entries(h)) : [];
    const p = given.startsWith("/") ? given : `/${given}`;
    const body = json !== undefined ? JSON.stringify(json) : b;
    const pairs: [string, string][] = headers.map(([k, v]) => [String(k), String(v)]);
    const node = n ?? this.#node;
    // (The host waits for the event's end too, its upload included.)
    const raw = this.#native.request(...this.#key, method, p, pairs, toBuffer(body), node === undefined ? undefined : nodeNumber(node));
    // For an answer of 500 or more the host library says what explains it
    // (the request and what the actor logged); under chaos it keeps that
    // for the seed that fails.
    if (raw.explanation) this.#host[kLogSink](raw.explanation);
    return new TestResponse(raw);
  }
  get(path = "/"): TestResponse {
    return this.fetch(path, { method: "GET" });
  }
  post(path = "/", body: string | Uint8Array = ""): TestResponse {
    return this.fetch(path, { method: "POST", body });
  }
  delete(path = "/"): TestResponse {
    return this.fetch(path, { method: "DELETE" });
  }
  /** Runs `onCall` as the host (caller `null`). @throws {CallFailure} */
  call(payload?: string | Uint8Array): Uint8Array {
    const r = this.#native.call(...this.#key, toBuffer(payload ?? ""));
    if (r.error) throw new CallFailure(r.error.kind as CallFailure["code"], r.error.message);
    return Uint8Array.from(r.ok ?? []);
  }
  /** {@link call} with the answer decoded as UTF-8. */
  callText(payload?: string | Uint8Array): string {
    return decoder.decode(this.call(payload));
  }
  /** Opens a WebSocket on `/<class>/<name><path>` (the actor's `onSocketOpen` runs). */
  openSocket(path?: string): TestSocket {
    return new TestSocket(this.#native, this.#native.openSocket(...this.#key, path ?? "/"));
  }
  /**
   * Runs this actor's alarm if it is due on the virtual clock; tells whether
   * one ran. In a cluster it goes through this actor's node
   * (`actor.onNode(2).runAlarm()`), or by default the lowest live node, which
   * forwards it to the holder.
   */
  runAlarm(): boolean {
    return this.#node === undefined ? this.#native.runAlarm(...this.#key) : this.#native.runAlarmOn(this.#node, ...this.#key);
  }
  #info() {
    return this.#native.actors().find((a) => a.app === this.app && a.class === this.class && a.name === this.name);
  }
  /** The pending alarm, or `null`. */
  get alarm(): Date | null {
    const alarm = this.#info()?.alarm;
    return alarm === undefined || alarm === null ? null : new Date(Number(alarm));
  }
  /** Whether the actor has a database (false before its first event and after a delete). */
  exists(): boolean {
    return this.#native.exists(...this.#key);
  }
  /** `"resident"`, `"hibernated"`, `"deleted"` or `"absent"`. */
  status(): "resident" | "hibernated" | "deleted" | "absent" {
    return (this.#info()?.status ?? "absent") as "resident" | "hibernated" | "deleted" | "absent";
  }
  /** Waits until the events queued for this actor (socket messages, closes) have run. */
  settle(): void {
    this.#native.settle(...this.#key);
  }
  /** Every table of the actor's database with its columns and rows. */
  tables(): Record<string, { columns: string[]; rows: TableValue[][] }> {
    const raw = this.#native.tables(...this.#key);
    const out: Record<string, { columns: string[]; rows: TableValue[][] }> = {};
    for (const [t, r] of Object.entries(raw)) out[t] = { columns: r.columns, rows: r.rows.map((row) => row.map(plainValue)) };
    return out;
  }
  /**
   * One table's rows as objects (`[]` when the table does not exist), typed
   * by the caller: `actor.rows<{ id: number; n: number }>("counter")`.
   */
  rows<T = Record<string, TableValue>>(table: string): T[] {
    const t = this.tables()[table];
    if (!t) return [];
    return t.rows.map((row) => Object.fromEntries(t.columns.map((c, i) => [c, row[i]])) as T);
  }
  /** What this actor logged (from the host's last 1000 lines). */
  logs(): LogLine[] {
    return this.#native.logsOf(...this.#key);
  }
  /**
   * Restarts the actor as a crash and recovery would: what it kept in memory
   * is gone, an open transaction is rolled back; its next event recovers it
   * from its database. Its sockets stay open.
   */
  restart(): void {
    this.#native.restart(...this.#key);
  }
  /**
   * Deletes the actor as an operator would (`wasmkeep-shim actor delete` on
   * one node): no guest code runs, its sockets are closed with 1000; the next
   * request meets a new actor.
   */
  operatorDelete(): OperatorDeleted {
    return this.#native.deleteActor(...this.#key);
  }
  /**
   * Cluster: an operator delete as `wasmkeep-shim actor delete` asks for it
   * (a request in the bucket), carried out by the actor's holder before this
   * returns; the request's id. On a single node use {@link operatorDelete}.
   */
  requestOperatorDelete(): string {
    return this.#native.requestOperatorDelete(...this.#key);
  }
  /** Whether the actor was deleted, from positive evidence only. */
  deletionStatus(): DeletionStatus {
    return deletionStatusOf(this.#native.deletionStatus(...this.#key));
  }
  /**
   * The actor's history, oldest first. A single node keeps one only when the
   * host was started with `history: true` (else this throws with code
   * `"bad-argument"`); a cluster always does. An actor never written has none.
   */
  history(): HistoryPosition[] {
    return this.#native.history(...this.#key);
  }
  /**
   * Restores the actor to a bookmark or a time, after the events queued for
   * it: its open sockets close with 1012, its alarm becomes the restored
   * state's, and its next event runs on the restored state. The restore is
   * a new position: `restore({ bookmark: restored.undo })` undoes it. Throws
   * with code `"bad-argument"` for a malformed bookmark, a host without
   * history, or a target before the actor's first state or its last delete;
   * `"no-such-actor"` for an actor that never was.
   */
  restore(to: RestoreTo): Restored {
    const { bookmark, time } = (to ?? {}) as { bookmark?: string; time?: number | Date };
    if ((bookmark === undefined) === (time === undefined)) {
      throw new TypeError("restore(to): give { bookmark } (from history() or a restore's undo) or { time } (ms since the epoch, or a Date)");
    }
    if (bookmark !== undefined) return this.#native.restore(...this.#key, String(bookmark), undefined);
    return this.#native.restore(...this.#key, undefined, time instanceof Date ? time.getTime() : time);
  }
}
