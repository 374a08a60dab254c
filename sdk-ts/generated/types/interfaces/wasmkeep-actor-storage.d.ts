/// <reference path="./wasmkeep-actor-types.d.ts" />
declare module 'wasmkeep:actor/storage@0.2.4' {
  /**
   * Runs SQL and returns the number of rows it changed.
   * 
   * With parameters the text must be one statement (`?1`, `?2`, ... or `?`
   * are bound in order); without parameters it may be several statements
   * separated by `;`, run in order, all or nothing: if one fails, none of
   * them changed anything. SQL still running when the event's time is up is
   * interrupted and the event fails. Statements that reach outside the
   * actor's database (ATTACH, VACUUM INTO, load_extension, PRAGMAs that
   * touch files) and transaction control written as SQL are `not-allowed`.
   * After `delete-self-durable` answered `ok` in this event: `not-allowed`
   * ("deleted in this event").
   */
  export function exec(sql: string, params: Array<SqlValue>): bigint;
  /**
   * Runs one statement and returns its rows. The same refusals as `exec`.
   */
  export function query(sql: string, params: Array<SqlValue>): QueryResult;
  /**
   * Like `exec` but always exactly one statement, and returns only once the
   * write is durable: on one node, synced to disk; in a cluster,
   * acknowledged by the bucket. Inside an open transaction: `not-allowed`
   * ("open transaction"), nothing changes. `internal`: not known to be durable.
   */
  export function execDurable(sql: string, params: Array<SqlValue>): bigint;
  /**
   * Returns once every write this event has made so far, outside an open
   * transaction, is kept: what the end of the event would keep, but before
   * the answer goes out. Call it before setting an answer that acknowledges
   * those writes (the SDKs do, by default, before they send an answer).
   * 
   * - In a cluster: the database as it is now is uploaded if it changed
   *   since it was last acknowledged, and `ok` means the bucket
   *   acknowledged it while the hold was valid (as `exec-durable`).
   * - On one node: committed writes are already kept (they survive a crash
   *   of the host), so it returns `ok` at once. It does not sync the disk;
   *   `exec-durable` does.
   * - In `on-init`, and after `delete-self-durable` answered `ok`: `ok`,
   *   nothing to do.
   * - `not-allowed` inside an open transaction: nothing changes. Commit
   *   first.
   * - `internal`: not known to be kept. The upload may still land.
   *   Replication stops for this actor as after a failed `exec-durable`:
   *   the event's writes are not kept, and the next event restores what
   *   the bucket holds. Answer so that the client retries.
   */
  export function flush(): void;
  /**
   * Opens a transaction. `not-allowed` if one is already open.
   */
  export function begin(): void;
  /**
   * Commits the open transaction. `not-allowed` if none is open.
   */
  export function commit(): void;
  /**
   * Rolls the open transaction back. `not-allowed` if none is open.
   */
  export function rollback(): void;
  /**
   * Deletes the actor when this event ends. Storage keeps working until
   * then. At the end of the event: the alarm is forgotten, sockets are
   * closed with 1000 "actor deleted", the files are removed and the actor is
   * given up; the next event at this address meets a new, empty actor
   * (`on-init` runs again). In a cluster the delete is replicated when the
   * event ends and is lost if that upload fails.
   */
  export function deleteSelf(): void;
  /**
   * Deletes the actor inside the call, so that the answer can follow it.
   * 
   * - `ok`: the actor is deleted (one node: the WAL then the database
   *   removed and the directory synced; cluster: the reset acknowledged by
   *   the bucket while the hold was valid). Every later storage call in this
   *   event is `not-allowed` ("deleted in this event"), `get-alarm` returns
   *   none, `set-alarm` and `clear-alarm` do nothing. The rest happens when
   *   the event ends, as after `delete-self`.
   * - `not-allowed` inside an open transaction: nothing changes; the
   *   transaction stays open. Commit or roll back first.
   * - `internal`: not known to be durable. One node: the files could not be
   *   removed; storage stays refused (the database is closed), a retry
   *   removes the files again and answers by its own outcome, and the end
   *   of the event removes them. Cluster: the upload may still land; the
   *   event's local writes are not kept and the next event restores what
   *   the bucket holds. Calling it again is safe.
   */
  export function deleteSelfDurable(): void;
  /**
   * The bookmark of the actor's state as it is now: an opaque string
   * naming a position in the actor's history (ADR 064). Bookmarks of one
   * actor sort as their positions do, so a later state's bookmark sorts
   * after an earlier one's. What the event wrote so far is made durable
   * first, as `flush` does, so the bookmark names a state that holds
   * those writes.
   * 
   * - `none` where the host keeps no history for the actor (a node
   *   served with `--no-history`, or a host started without history).
   * - `not-allowed` inside an open transaction (commit first), and after
   *   `delete-self-durable` answered `ok` in this event.
   * - `internal`: the writes are not known to be kept, as for `flush`.
   */
  export function currentBookmark(): string | undefined;
  /**
   * The bookmark of the last state written at or before `at`
   * (milliseconds since the Unix epoch, on the host's clock: `now`), or
   * `none` if no state of the actor was written then, that state lies
   * before its newest delete, or the host keeps no history (as for
   * `current-bookmark`). The history is kept for the app's retention window; a state
   * older than that may answer `none` or a later bookmark.
   * `internal`: the history could not be read.
   */
  export function bookmarkForTime(at: bigint): string | undefined;
  /**
   * Asks the host to restore the actor to `bookmark` once the current
   * event has ended (Durable Objects' `onNextSessionRestoreBookmark`),
   * and returns the bookmark to undo it with: the state as it is now,
   * made durable first as `current-bookmark` does.
   * 
   * When the event ends with its writes kept, the host restores the
   * state at `bookmark` as a new position on the actor's history, before
   * the actor's next event: its open sockets are closed with 1012 "actor
   * restored" (their close events run first, on the old state), its
   * alarm becomes the restored state's, the instance is dropped, and the
   * next event starts a fresh instance on the restored state (`on-init`
   * does not run again). The last call of an event counts. An event that
   * deletes the actor, or whose writes are not kept, restores nothing.
   * A restore the host refuses then (a bookmark before the actor's
   * newest delete, or one the retention window no longer holds) changes
   * nothing and is logged by the host; the guest is not told.
   * 
   * - `not-allowed` at once, nothing asked: `bookmark` is not a bookmark
   *   (`not a bookmark: ...`), or names no state of this actor yet (it
   *   sorts after the current one); the host keeps no history for the
   *   actor ("no history is kept ..."); inside an open transaction; after
   *   a delete in this event.
   * - `internal`: the current state is not known to be kept (as for
   *   `flush`); nothing is asked.
   */
  export function restoreOnNextSession(bookmark: string): string;
  export type SqlValue = import('wasmkeep:actor/types@0.2.4').SqlValue;
  export type SqlError = import('wasmkeep:actor/types@0.2.4').SqlError;
  export type QueryResult = import('wasmkeep:actor/types@0.2.4').QueryResult;
}
