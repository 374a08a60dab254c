declare module 'wasmkeep:actor/types@0.2.4' {
  /**
   * One SQLite value, bound as a parameter or read from a row.
   */
  export type SqlValue = SqlValueNull | SqlValueInteger | SqlValueReal | SqlValueText | SqlValueBlob;
  export interface SqlValueNull {
    tag: 'null',
  }
  export interface SqlValueInteger {
    tag: 'integer',
    val: bigint,
  }
  export interface SqlValueReal {
    tag: 'real',
    val: number,
  }
  export interface SqlValueText {
    tag: 'text',
    val: string,
  }
  export interface SqlValueBlob {
    tag: 'blob',
    val: Uint8Array,
  }
  /**
   * A failure reported by SQLite itself.
   */
  export interface SqliteFailure {
    /**
     * The SQLite primary result code (1 = SQLITE_ERROR, 19 = SQLITE_CONSTRAINT, ...).
     */
    code: number,
    /**
     * SQLite's message, e.g. `UNIQUE constraint failed: t.id`.
     */
    message: string,
  }
  /**
   * Why a storage call failed.
   */
  export type SqlError = SqlErrorNotAllowed | SqlErrorInternal | SqlErrorSqlite;
  /**
   * Refused in this state; nothing was changed. The message says which
   * state: "deleted in this event", "open transaction", "database closed
   * by a failed delete", "no open transaction", or the forbidden
   * statement (ATTACH, VACUUM INTO, load_extension, file PRAGMAs,
   * BEGIN/COMMIT written as SQL, the host's own tables).
   */
  export interface SqlErrorNotAllowed {
    tag: 'not-allowed',
    val: string,
  }
  /**
   * The host failed. What the call asked for is not known to be durable:
   * it may or may not have happened. Calls documented as safe to retry
   * (delete-self-durable) may be called again.
   */
  export interface SqlErrorInternal {
    tag: 'internal',
    val: string,
  }
  /**
   * SQLite refused the statement (syntax, constraint, type, ...).
   */
  export interface SqlErrorSqlite {
    tag: 'sqlite',
    val: SqliteFailure,
  }
  /**
   * The answer of a query: the column names, then each row's values in
   * that order.
   */
  export interface QueryResult {
    columns: Array<string>,
    rows: Array<Array<SqlValue>>,
  }
  /**
   * An actor's address inside its app: its class and its name.
   */
  export interface Address {
    'class': string,
    name: string,
  }
  /**
   * A WebSocket message.
   */
  export type Message = MessageText | MessageBinary;
  export interface MessageText {
    tag: 'text',
    val: string,
  }
  export interface MessageBinary {
    tag: 'binary',
    val: Uint8Array,
  }
}
