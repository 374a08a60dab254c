/**
 * The actor's own SQLite database. Each actor has one; nobody else reads it.
 *
 * Writes are kept when the event ends; {@link execDurable} and
 * {@link deleteSelfDurable} return only once what they did is durable.
 * Transactions are opened with {@link begin} or {@link transaction}, never with
 * SQL text; one still open when the event ends (or throws) is rolled back.
 *
 * ```ts
 * import { storage } from "@wasmkeep/actor";
 *
 * storage.exec("CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, name TEXT)");
 * storage.exec("INSERT INTO items(name) VALUES (?)", "apple");
 * const rows = storage.query<{ id: number; name: string }>("SELECT id, name FROM items");
 * ```
 * @module
 */
import * as wit from "wasmkeep:actor/storage@0.2.4";
import type { SqlValue as WitValue, QueryResult } from "wasmkeep:actor/types@0.2.4";
import { SqlError, toSqlError } from "./errors.js";
import { INT64_AS_NUMBER, int64 } from "./abi.js";
import { requireEvent } from "./event.js";

/**
 * A value bound as a parameter or read from a row.
 *
 * Read: `null`, an integer as `number` (or `bigint` when it is beyond ±2^53,
 * where a `number` would lose digits), a real as `number`, text as `string`, a
 * blob as `Uint8Array`.
 *
 * Bound: the same, plus `boolean` (1 or 0) and `undefined` (NULL). A `number`
 * that is an integer is bound as an SQLite INTEGER, any other as a REAL; use
 * {@link real} to bind an integral number as a REAL, or a {@link TaggedValue}.
 */
export type Value = null | number | bigint | string | Uint8Array;

/** A parameter: a {@link Value}, a boolean, `undefined` (NULL) or a {@link TaggedValue}. */
export type Param = Value | boolean | undefined | TaggedValue;

/**
 * A value with its SQLite type spelled out, as the WIT `sql-value` has it
 * (integers always `bigint`). {@link queryRaw} returns these; they are also
 * accepted as parameters.
 */
export type TaggedValue =
  | { tag: "null" }
  | { tag: "integer"; val: bigint }
  | { tag: "real"; val: number }
  | { tag: "text"; val: string }
  | { tag: "blob"; val: Uint8Array };

/** A row of {@link query}: column name → value. */
export type Row = Record<string, Value>;

/** The answer of {@link queryRaw}: column names, then each row's tagged values in that order. */
export interface RawRows {
  columns: string[];
  rows: TaggedValue[][];
}

/** Binds `x` as an SQLite REAL even when it is integral: `storage.exec("... ?", real(2))`. */
export function real(x: number): TaggedValue {
  return { tag: "real", val: x };
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

/**
 * Under QuickJS the storage import is the dialect's (wasmkeep-build points
 * the import there), whose values these are. Its generated types say `bigint`
 * for `integer`, as for every WIT s64, but QuickJS passes a `number`.
 */
type DialectValue = import("wasmkeep:actor-js/storage@0.2.4").SqlValue;

/**
 * An SQL INTEGER as the engine's bindings take it. StarlingMonkey: a
 * `bigint`. QuickJS passes WIT `s64` as a `number`, so an integer beyond
 * ±2^53 goes as its decimal text in the dialect's `big-integer` case
 * (generated/wit-quickjs/actor-js.wit); the storage adapter composed with the actor
 * turns it back into an `integer` (ADR 018).
 */
function witInteger(v: number | bigint): WitValue {
  if (!INT64_AS_NUMBER) return { tag: "integer", val: typeof v === "bigint" ? v : BigInt(v) };
  if (typeof v === "bigint" && (v < MIN_SAFE || v > MAX_SAFE)) {
    const big: DialectValue = { tag: "big-integer", val: v.toString() };
    return big as unknown as WitValue;
  }
  return { tag: "integer", val: Number(v) as unknown as bigint };
}

/** A value of the engine's bindings as a {@link TaggedValue} (integers as `bigint`). */
function tagged(w: WitValue): TaggedValue {
  if (!INT64_AS_NUMBER) return w;
  const v = w as unknown as DialectValue;
  if (v.tag === "integer") return { tag: "integer", val: BigInt(v.val as unknown as number) };
  if (v.tag === "big-integer") return { tag: "integer", val: BigInt(v.val) };
  return v;
}

/** A value of the engine's bindings as a plain {@link Value}. */
function plainWit(w: WitValue): Value {
  if (!INT64_AS_NUMBER) return plain(w);
  const v = w as unknown as DialectValue;
  switch (v.tag) {
    case "null":
      return null;
    case "integer":
      return v.val as unknown as number;
    case "big-integer":
      return BigInt(v.val);
    default:
      return v.val;
  }
}

function toWit(p: Param, index: number): WitValue {
  if (p === null || p === undefined) return { tag: "null" };
  switch (typeof p) {
    case "number":
      return Number.isSafeInteger(p) ? witInteger(p) : { tag: "real", val: p };
    case "bigint":
      if (p < I64_MIN || p > I64_MAX) throw new RangeError(`parameter ${index + 1}: ${p} does not fit in a 64-bit integer`);
      return witInteger(p);
    case "string":
      return { tag: "text", val: p };
    case "boolean":
      return witInteger(p ? 1 : 0);
    case "object":
      if (p instanceof Uint8Array) return { tag: "blob", val: p };
      if ("tag" in p) {
        const t = p as WitValue;
        if (t.tag !== "integer") return t;
        if (typeof t.val === "bigint" && (t.val < I64_MIN || t.val > I64_MAX)) {
          throw new RangeError(`parameter ${index + 1}: ${t.val} does not fit in a 64-bit integer`);
        }
        return witInteger(t.val);
      }
      break;
  }
  throw new TypeError(`parameter ${index + 1}: cannot bind a ${typeof p} (${String(p)}) as an SQL value`);
}

const NO_PARAMS: WitValue[] = [];

function params(ps: Param[]): WitValue[] {
  if (ps.length === 0) return NO_PARAMS;
  const out: WitValue[] = new Array(ps.length);
  for (let i = 0; i < ps.length; i++) out[i] = toWit(ps[i], i);
  return out;
}

/** A tagged value as a plain {@link Value}: integers within ±2^53 become `number`. */
export function plain(v: TaggedValue): Value {
  switch (v.tag) {
    case "null":
      return null;
    case "integer":
      return v.val >= MIN_SAFE && v.val <= MAX_SAFE ? Number(v.val) : v.val;
    default:
      return v.val;
  }
}

// Each function below asks requireEvent and turns what the bindings throw
// into an SqlError through a helper that takes the bindings' function as it
// is: a closure and a template string per call would cost, on every
// statement, in an interpreter (ADR 057).

/**
 * Runs SQL and returns the number of rows it changed.
 *
 * With parameters the text must be one statement (`?`, `?1`, `?2`, ... are
 * bound in order); without parameters it may be several statements separated
 * by `;`, run all or nothing.
 *
 * @throws {SqlError} `"sqlite"` (syntax, constraint, ...), `"not-allowed"`
 *   (forbidden statement, deleted in this event, ...), `"internal"`.
 */
export function exec(sql: string, ...values: Param[]): number {
  return witChanges("storage.exec", wit.exec, sql, values);
}

/**
 * The bindings' `exec` or `execDurable` (`run`, passed as it is: no closure
 * per call), asked as `what`: the number of rows changed, or what they throw
 * as an SqlError.
 */
function witChanges(what: string, run: typeof wit.exec, sql: string, values: Param[]): number {
  requireEvent(what);
  const ps = params(values);
  try {
    return Number(run(sql, ps));
  } catch (err) {
    throw toSqlError(err);
  }
}

/** A bindings' call without arguments (`flush`, `begin`, ...), asked as `what`, with what it throws as an SqlError. */
function witStep(what: string, run: () => void): void {
  requireEvent(what);
  try {
    run();
  } catch (err) {
    throw toSqlError(err);
  }
}

/** The bindings' query, asked as `what` (e.g. `"storage.query"`), with what they throw as an SqlError. */
function witQuery(what: string, sql: string, values: Param[]): QueryResult {
  requireEvent(what);
  const ps = params(values);
  try {
    return wit.query(sql, ps);
  } catch (err) {
    throw toSqlError(err);
  }
}

/**
 * Runs one statement and returns its rows as objects keyed by column name.
 * The type parameter only describes the rows; it is not checked.
 *
 * ```ts
 * const [row] = storage.query<{ n: number }>("SELECT count(*) AS n FROM items");
 * ```
 * @throws {SqlError} as {@link exec}.
 */
export function query<T extends object = Row>(sql: string, ...values: Param[]): T[] {
  const { columns, rows } = witQuery("storage.query", sql, values);
  const out: T[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const o: Record<string, Value> = {};
    for (let j = 0; j < columns.length; j++) o[columns[j]!] = plainWit(row[j]!);
    out[i] = o as T;
  }
  return out;
}

/**
 * Like {@link query} but returns the column names and each row's values with
 * their SQLite types ({@link TaggedValue}, integers as `bigint`): use it when
 * you must tell an INTEGER `2` from a REAL `2.0`, or read columns that share a name.
 */
export function queryRaw(sql: string, ...values: Param[]): RawRows {
  const r = witQuery("storage.queryRaw", sql, values);
  const rows = INT64_AS_NUMBER ? r.rows.map((row) => row.map(tagged)) : (r.rows as TaggedValue[][]);
  return { columns: r.columns, rows };
}

/**
 * Like {@link exec}, but always exactly one statement, and returns only once
 * the write is durable (one node: synced to disk; a cluster: acknowledged by
 * the bucket).
 *
 * @throws {SqlError} `"not-allowed"` inside an open transaction (nothing
 *   changes); `"internal"`: not known to be durable.
 */
export function execDurable(sql: string, ...values: Param[]): number {
  return witChanges("storage.execDurable", wit.execDurable, sql, values);
}

/**
 * Returns once every write this event has made so far is kept: what the end
 * of the event would keep, but before the answer goes out. The SDK calls it
 * before it sends an answer (`responder.send`, an `onRequest`'s return value)
 * and before an `onCall` answer, so a 200 acknowledges the writes before it;
 * call it yourself before an answer that leaves another way (a socket
 * message).
 *
 * In a cluster the database is uploaded if it changed since it was last
 * acknowledged; on one node committed writes are already kept (they survive
 * a crash of the host; {@link execDurable} also syncs the disk), so it
 * returns at once. Since WIT 0.2.2.
 *
 * @throws {SqlError} `"not-allowed"` inside an open transaction (commit
 *   first); `"internal"`: not known to be kept (the upload may still land),
 *   the event's writes are not kept, and the next event restores what the
 *   bucket holds. Answer so that the client retries.
 */
export function flush(): void {
  witStep("storage.flush", wit.flush);
}

/** Opens a transaction. @throws {SqlError} `"not-allowed"` if one is already open. */
export function begin(): void {
  witStep("storage.begin", wit.begin);
}

/** Commits the open transaction. @throws {SqlError} `"not-allowed"` if none is open. */
export function commit(): void {
  witStep("storage.commit", wit.commit);
}

/** Rolls the open transaction back. @throws {SqlError} `"not-allowed"` if none is open. */
export function rollback(): void {
  witStep("storage.rollback", wit.rollback);
}

/**
 * Runs `fn` inside a transaction: commits when it returns, rolls back and
 * rethrows when it throws. `fn` must be synchronous (a returned promise is
 * refused and rolled back).
 *
 * ```ts
 * const total = storage.transaction(() => {
 *   storage.exec("UPDATE accounts SET balance = balance - ? WHERE id = ?", 10, from);
 *   storage.exec("UPDATE accounts SET balance = balance + ? WHERE id = ?", 10, to);
 *   return storage.query<{ n: number }>("SELECT sum(balance) AS n FROM accounts")[0]!.n;
 * });
 * ```
 */
export function transaction<T>(fn: () => T): T {
  requireEvent("storage.transaction");
  begin();
  let result: T;
  try {
    result = fn();
    if (result instanceof Promise) throw new TypeError("storage.transaction: the function must be synchronous");
  } catch (err) {
    try {
      rollback();
    } catch {
      // The transaction may already be gone (e.g. the actor was deleted); the first error matters.
    }
    throw err;
  }
  commit();
  return result;
}

/**
 * Deletes the actor when this event ends. Storage keeps working until then.
 * At the end of the event the alarm is forgotten, sockets are closed with 1000
 * "actor deleted" and the files are removed; the next event at this address
 * meets a new, empty actor (`onInit` runs again).
 */
export function deleteSelf(): void {
  requireEvent("storage.deleteSelf");
  wit.deleteSelf();
}

/**
 * Deletes the actor inside the call, so that the answer can follow it. On
 * return the delete is durable and every later storage call in this event
 * throws `SqlError` `"not-allowed"` ("deleted in this event"); `getAlarm()`
 * returns `null`, `setAlarm`/`clearAlarm` do nothing.
 *
 * @throws {SqlError} `"not-allowed"` inside an open transaction (nothing
 *   changes; commit or roll back first); `"internal"`: not known to be durable
 *   (storage stays refused until the event ends; calling again is safe).
 */
export function deleteSelfDurable(): void {
  witStep("storage.deleteSelfDurable", wit.deleteSelfDurable);
}

/** The bindings' `option<string>`: `undefined` (jco) or `null` (QuickJS) when none. */
function optionalText(v: string | undefined | null): string | null {
  return v === undefined || v === null ? null : v;
}

/**
 * The bookmark of the actor's state as it is now: an opaque string naming a
 * position in the actor's history, which {@link onNextSessionRestoreBookmark}
 * can go back to. Bookmarks of one actor sort as their positions do (a later
 * state's sorts after an earlier one's, as strings). What the event wrote so
 * far is made durable first, as {@link flush} does. `null` where the host
 * keeps no history (a node served with `--no-history`; otherwise it is kept
 * for the app's retention window). Durable Objects' `getCurrentBookmark`,
 * synchronous. Since WIT 0.2.4.
 *
 * @throws {SqlError} as {@link flush}: `"not-allowed"` inside an open
 *   transaction or after {@link deleteSelfDurable}; `"internal"`: the writes
 *   are not known to be kept.
 */
export function getCurrentBookmark(): string | null {
  requireEvent("storage.getCurrentBookmark");
  try {
    return optionalText(wit.currentBookmark());
  } catch (err) {
    throw toSqlError(err);
  }
}

/**
 * The bookmark of the last state written at or before `at` (a `Date`, or
 * milliseconds since the epoch on the host's clock: `now()`), or `null`:
 * no state was written by then, it lies before the actor's newest delete, or
 * the host keeps no history (a node served with `--no-history`). Durable
 * Objects'
 * `getBookmarkForTime`, synchronous. Since WIT 0.2.4.
 *
 * @throws {SqlError} `"internal"`: the history could not be read.
 */
export function getBookmarkForTime(at: Date | number): string | null {
  requireEvent("storage.getBookmarkForTime");
  const ms = typeof at === "number" ? at : at.getTime();
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`storage.getBookmarkForTime: invalid time ${String(at)}`);
  const witAt = int64(Math.floor(ms), "storage.getBookmarkForTime: time");
  try {
    return optionalText(wit.bookmarkForTime(witAt));
  } catch (err) {
    throw toSqlError(err);
  }
}

/**
 * Asks the host to restore the actor to `bookmark` once this event has
 * ended, and returns the bookmark that undoes it (the state as it is now,
 * made durable first as {@link getCurrentBookmark} does). Durable Objects'
 * `onNextSessionRestoreBookmark`, synchronous. Since WIT 0.2.4.
 *
 * When the event ends with its writes kept, the state at `bookmark` becomes
 * the actor's newest state before its next event: open sockets are closed
 * with 1012 "actor restored", the alarm becomes the restored state's, and the
 * next event starts a fresh instance on the restored state (`onInit` does not
 * run again). The last call of an event counts; an event that deletes the
 * actor, or whose writes are not kept, restores nothing. A restore the host
 * refuses then (a bookmark before the actor's newest delete, or older than
 * the retention window) changes nothing and is logged by the host.
 *
 * ```ts
 * const before = storage.getCurrentBookmark();
 * storage.exec("DELETE FROM items");
 * if (before) storage.onNextSessionRestoreBookmark(before); // the next event sees the items again
 * ```
 * @throws {SqlError} `"not-allowed"` at once, nothing asked: not a bookmark,
 *   or one after the current state; no history is kept
 *   (a node served with `--no-history`);
 *   inside an open transaction; after a delete in this event. `"internal"`:
 *   the current state is not known to be kept.
 */
export function onNextSessionRestoreBookmark(bookmark: string): string {
  requireEvent("storage.onNextSessionRestoreBookmark");
  if (typeof bookmark !== "string") throw new TypeError("storage.onNextSessionRestoreBookmark: the bookmark is a string");
  try {
    return wit.restoreOnNextSession(bookmark);
  } catch (err) {
    throw toSqlError(err);
  }
}

export { SqlError };
