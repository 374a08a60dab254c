/**
 * The errors the SDK throws: {@link SqlError} from storage calls,
 * {@link SocketError} from socket calls, {@link CallError} from calls to other
 * actors. Each extends `Error`, so `instanceof` and `err.message` work.
 */

/** Why a storage call failed: the WIT `sql-error` variant's case. */
export type SqlErrorCode = "not-allowed" | "internal" | "sqlite";

/**
 * A storage call failed.
 *
 * - `"not-allowed"`: refused in this state; nothing was changed ("deleted in
 *   this event", "open transaction", "database closed by a failed delete",
 *   "no open transaction", or a forbidden statement such as `ATTACH` or
 *   `BEGIN` written as SQL).
 * - `"internal"`: the host failed; what the call asked for is not known to be
 *   durable. `deleteSelfDurable()` may be called again.
 * - `"sqlite"`: SQLite refused the statement; {@link SqlError.sqliteCode} is
 *   its primary result code (1 = `SQLITE_ERROR`, 19 = `SQLITE_CONSTRAINT`, ...).
 *
 * ```ts
 * try {
 *   storage.exec("INSERT INTO users(id) VALUES (?)", id);
 * } catch (err) {
 *   if (err instanceof SqlError && err.sqliteCode === 19) return text("taken", 409);
 *   throw err;
 * }
 * ```
 */
export class SqlError extends Error {
  /** Which kind of failure. */
  readonly code: SqlErrorCode;
  /** SQLite's primary result code when `code` is `"sqlite"`, else `undefined`. */
  readonly sqliteCode: number | undefined;

  constructor(code: SqlErrorCode, message: string, sqliteCode?: number) {
    super(message);
    this.name = "SqlError";
    this.code = code;
    this.sqliteCode = sqliteCode;
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

/** A socket call failed: the socket is closed, closing, or not this actor's. */
export class SocketError extends Error {
  /** Always `"not-open"`. */
  readonly code: "not-open";

  constructor(message = "socket not open") {
    super(message);
    this.name = "SocketError";
    this.code = "not-open";
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

/** Why a call to another actor failed: the WIT `call-error` variant's case. */
export type CallErrorCode = "refused" | "rejected" | "failed";

/**
 * A call to another actor failed.
 *
 * - `"refused"`: not delivered (unknown class, a class that takes no calls, a
 *   call back along the call chain, the host is stopping).
 * - `"rejected"`: delivered; the callee's `onCall` threw or answered an error.
 * - `"failed"`: delivered; the callee's event failed (trap or time limit). Its
 *   writes before the failure may have been kept.
 */
export class CallError extends Error {
  /** Which kind of failure. */
  readonly code: CallErrorCode;

  constructor(code: CallErrorCode, message: string) {
    super(message);
    this.name = "CallError";
    this.code = code;
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

/**
 * The value of a WIT `result`'s `err` that an import threw: the bindings
 * throw an error whose `payload` is it (StarlingMonkey a `ComponentError`,
 * QuickJS a plain `Error`). `undefined` for any other throw.
 */
export function errorValueOf(err: unknown): unknown {
  if (err !== null && typeof err === "object" && "payload" in err) return (err as { payload: unknown }).payload;
  return undefined;
}

/** {@link errorValueOf} when it is a variant case: `{tag, val}`. */
export function payloadOf(err: unknown): { tag: string; val: unknown } | undefined {
  const p = errorValueOf(err);
  if (p !== null && typeof p === "object" && "tag" in p) return p as { tag: string; val: unknown };
  return undefined;
}

/** Turns what a storage import threw into a {@link SqlError} (or rethrows it). */
export function toSqlError(err: unknown): unknown {
  const p = payloadOf(err);
  if (p === undefined) return err;
  switch (p.tag) {
    case "not-allowed":
    case "internal":
      return new SqlError(p.tag, String(p.val));
    case "sqlite": {
      const f = p.val as { code: number; message: string };
      return new SqlError("sqlite", f.message, f.code);
    }
    default:
      return err;
  }
}
