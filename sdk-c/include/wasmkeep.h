/* wasmkeep.h: the C SDK for wasmkeep actors (WIT package wasmkeep:actor@0.2.4).
 *
 * An actor is a C file that includes this header and defines the events it
 * answers (wk_on_request, wk_on_init, ...; see "Events" below). Build it into a
 * component with the SDK's Makefile fragment (mk/wasmkeep.mk), its CMake
 * toolchain file, or its pkg-config file; the C SDK's README.md says how.
 *
 * Conventions, the same for every function:
 * - Every name starts with wk_ (types, functions) or WK_ (constants).
 * - Strings passed in are NUL-terminated UTF-8 and borrowed: the SDK reads them
 *   during the call and keeps nothing. Functions taking a pointer and a length
 *   (_n variants, blobs, payloads) read exactly that many bytes.
 * - A call that can fail returns WK_OK (0) on success, or the kind of the
 *   failure (a positive WK_* constant). If the caller passed an error struct,
 *   it is filled, and its message is then owned by the caller: release it with
 *   the matching wk_*_error_free (which also resets the struct). Pass NULL to
 *   ignore the details; the SDK frees them itself.
 * - Whatever the SDK returns by pointer says who owns it: "borrowed" (valid
 *   until the stated point; never free it), or "owned" (free it with the named
 *   function; wk_free for plain buffers).
 * - Text the SDK hands out is always followed by a NUL, also when a length is
 *   given, so it can be used as a C string (unless it contains NULs itself).
 *
 * The SDK is single-threaded, as a wasm32-wasi actor is: one event at a time. */
#ifndef WASMKEEP_H
#define WASMKEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The SDK's version, also returned by wk_version(). */
#define WASMKEEP_VERSION "0.2.0"
/** The WIT package the SDK is built on. */
#define WASMKEEP_WIT_PACKAGE "wasmkeep:actor@0.2.4"

/** WASMKEEP_VERSION, as a static string (never freed). */
const char *wk_version(void);

/** Frees a buffer the SDK documents as "owned, free with wk_free" (it is free()). */
void wk_free(void *ptr);

/* ------------------------------------------------------------------ status */

/** What a call answered. WK_OK is 0; every failure is positive. */
typedef enum wk_status {
    WK_OK = 0,
    /* Storage (wk_sql_error.kind). */
    /** Refused in this state; nothing changed ("deleted in this event", "open
     * transaction", "database closed by a failed delete", "no open
     * transaction", or a forbidden statement such as ATTACH). */
    WK_SQL_NOT_ALLOWED = 1,
    /** The host failed: what the call asked for is not known to be durable. */
    WK_SQL_INTERNAL = 2,
    /** SQLite refused the statement; wk_sql_error.code is its result code. */
    WK_SQL_SQLITE = 3,
    /* Sockets. */
    /** The socket is closed, closing, or not one of this actor's. */
    WK_SOCKET_NOT_OPEN = 10,
    /* Calls (wk_call_error.kind). */
    /** Not delivered: unknown class, a class that takes no calls, a call to
     * itself or back along its call chain, or the host is stopping. */
    WK_CALL_REFUSED = 20,
    /** Delivered; the callee's wk_on_call rejected it. */
    WK_CALL_REJECTED = 21,
    /** Delivered; the callee's event failed (trap or time limit). */
    WK_CALL_FAILED = 22,
    /* Responses. */
    /** The request was already answered (or the responder is not a request's). */
    WK_ALREADY_ANSWERED = 30,
} wk_status;

/** A static name for a status: "ok", "not-allowed", "internal", "sqlite",
 * "not-open", "refused", "rejected", "failed", "already-answered". */
const char *wk_status_name(int status);

/* ----------------------------------------------------------------- values */

/** The type of a SQL value. */
typedef enum wk_value_kind {
    WK_NULL = 0,
    WK_INTEGER = 1,
    WK_REAL = 2,
    WK_TEXT = 3,
    WK_BLOB = 4,
} wk_value_kind;

/** One SQLite value: a parameter you bind, or a cell of a query's rows.
 * The pointers are borrowed: as a parameter, from you for the call; in
 * wk_rows, from the rows until wk_rows_free. Text is followed by a NUL. */
typedef struct wk_value {
    wk_value_kind kind;
    union {
        int64_t integer;
        double real;
        struct {
            const char *ptr;
            size_t len;
        } text;
        struct {
            const uint8_t *ptr;
            size_t len;
        } blob;
    } as;
} wk_value;

/** Parameter constructors (no allocation; text and blobs stay yours). */
static inline wk_value wk_null(void) {
    wk_value v;
    v.kind = WK_NULL;
    v.as.integer = 0;
    return v;
}
static inline wk_value wk_int(int64_t i) {
    wk_value v;
    v.kind = WK_INTEGER;
    v.as.integer = i;
    return v;
}
static inline wk_value wk_real(double r) {
    wk_value v;
    v.kind = WK_REAL;
    v.as.real = r;
    return v;
}
/** Text of `len` bytes (need not be NUL-terminated). */
static inline wk_value wk_text_n(const char *s, size_t len) {
    wk_value v;
    v.kind = WK_TEXT;
    v.as.text.ptr = s;
    v.as.text.len = len;
    return v;
}
/** A NUL-terminated string as text. */
wk_value wk_text(const char *s);
static inline wk_value wk_blob(const void *data, size_t len) {
    wk_value v;
    v.kind = WK_BLOB;
    v.as.blob.ptr = (const uint8_t *)data;
    v.as.blob.len = len;
    return v;
}

/** Counts a parameter array: wk_storage_exec(sql, WK_PARAMS(p), ...). */
#define WK_PARAMS(array) (array), (sizeof(array) / sizeof((array)[0]))

/* ---------------------------------------------------------------- storage */

/** Why a storage call failed. `message` is owned by the struct once a call
 * filled it: release it with wk_sql_error_free. Zero-initialise it
 * (wk_sql_error err = {0};) before the first use. */
typedef struct wk_sql_error {
    /** WK_SQL_NOT_ALLOWED, WK_SQL_INTERNAL or WK_SQL_SQLITE (WK_OK when unset). */
    wk_status kind;
    /** The SQLite primary result code (1 SQLITE_ERROR, 19 SQLITE_CONSTRAINT, ...)
     * for WK_SQL_SQLITE; 0 otherwise. */
    int32_t code;
    /** What happened, NUL-terminated; NULL when unset. */
    char *message;
} wk_sql_error;

/** Frees err->message and resets *err to {WK_OK, 0, NULL}. NULL does nothing;
 * safe to call on a reset or zeroed struct. */
void wk_sql_error_free(wk_sql_error *err);

/** The rows of a query. Owned by the caller: free the whole (values, column
 * names, the struct) with one wk_rows_free. Read cells with wk_rows_at or
 * directly: values[row * n_columns + column]. */
typedef struct wk_rows {
    size_t n_columns;
    size_t n_rows;
    /** The column names, NUL-terminated. */
    const char *const *columns;
    /** n_rows * n_columns values, row after row. */
    const wk_value *values;
} wk_rows;

/** Frees rows and everything in them. NULL does nothing. */
void wk_rows_free(wk_rows *rows);

/** The cell at (row, column), borrowed from rows; NULL when out of range. */
const wk_value *wk_rows_at(const wk_rows *rows, size_t row, size_t column);

/** The index of the column called `name`, or -1. */
int wk_rows_column(const wk_rows *rows, const char *name);

/** Reads an integer cell (a real is truncated); `fallback` if it is NULL,
 * text, a blob, or out of range. */
int64_t wk_rows_int(const wk_rows *rows, size_t row, size_t column, int64_t fallback);

/** Reads a text cell as a C string borrowed from rows; NULL if not text. */
const char *wk_rows_text(const wk_rows *rows, size_t row, size_t column);

/** Runs SQL and sets *changed (may be NULL) to the number of rows changed.
 * With parameters the text must be one statement (?1, ?2 ... or ? bound in
 * order); without (params NULL, n_params 0) it may be several statements
 * separated by ';', all or nothing. Transaction control written as SQL and
 * statements that reach outside the actor's database are WK_SQL_NOT_ALLOWED.
 * Returns WK_OK or the error kind (details in *err if err is not NULL). */
int wk_storage_exec(const char *sql, const wk_value *params, size_t n_params, uint64_t *changed, wk_sql_error *err);

/** Runs one statement and returns its rows in *rows (owned by you: wk_rows_free;
 * set to NULL on failure). The same refusals as wk_storage_exec. */
int wk_storage_query(const char *sql, const wk_value *params, size_t n_params, wk_rows **rows, wk_sql_error *err);

/** Like wk_storage_exec with exactly one statement, but returns only once the
 * write is durable (one node: synced to disk; cluster: acknowledged by the
 * bucket). Inside an open transaction: WK_SQL_NOT_ALLOWED, nothing changes.
 * WK_SQL_INTERNAL: not known to be durable. */
int wk_storage_exec_durable(const char *sql, const wk_value *params, size_t n_params, uint64_t *changed,
                            wk_sql_error *err);

/* The parameter list of wk_storage_exec, wk_storage_query and
 * wk_storage_exec_durable is checked when you compile (C11 and later): it must
 * be a wk_value array (or pointer), or NULL. Anything else, such as a string
 * (wk_storage_exec(sql, name, 1, ...) instead of wk_value p[] = {wk_text(name)};
 * ... WK_PARAMS(p)), is a compile error that names
 * `struct wk_params_must_be_a_wk_value_array_or_NULL`, not a warning and a
 * NULL stored at run time. Define WK_NO_PARAM_CHECK before including this
 * header to turn the check off. */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus) && !defined(WK_NO_PARAM_CHECK)
struct wk_params_must_be_a_wk_value_array_or_NULL {
    int see_wasmkeep_h;
};
#define WK_CHECKED_PARAMS_(p)                                                                                   \
    _Generic((p), wk_value *: (p), const wk_value *: (p), void *: (p),                                           \
             default: (struct wk_params_must_be_a_wk_value_array_or_NULL){0})
/* Two steps, so that WK_PARAMS(p) is split into its two arguments first. */
#define wk_storage_exec(sql, ...) WK_EXEC_(wk_storage_exec, sql, __VA_ARGS__)
#define wk_storage_exec_durable(sql, ...) WK_EXEC_(wk_storage_exec_durable, sql, __VA_ARGS__)
#define wk_storage_query(sql, ...) WK_EXEC_(wk_storage_query, sql, __VA_ARGS__)
#define WK_EXEC_(f, sql, params, n_params, out, err) (f)((sql), WK_CHECKED_PARAMS_(params), (n_params), (out), (err))
#endif

/** Returns once every write this event has made so far is kept: what the end
 * of the event would keep, but before the answer goes out. wk_respond (and
 * the wk_respond_* helpers) and wk_reply call it for you, so a 200
 * acknowledges the writes before it; call it yourself before an answer that
 * leaves another way (a socket message). In a cluster the database is
 * uploaded if it changed since it was last acknowledged; on one node
 * committed writes are already kept (they survive a crash of the host;
 * wk_storage_exec_durable also syncs the disk), so it returns at once.
 * WK_SQL_NOT_ALLOWED inside an open transaction (commit first).
 * WK_SQL_INTERNAL: not known to be kept (the upload may still land); the
 * event's writes are then not kept, and the next event restores what the
 * bucket holds: answer so that the client retries. WIT 0.2.2. */
int wk_storage_flush(wk_sql_error *err);

/** Opens a transaction (WK_SQL_NOT_ALLOWED if one is open). A transaction still
 * open when the event ends, or when the event traps, is rolled back. */
int wk_storage_begin(wk_sql_error *err);
/** Commits the open transaction (WK_SQL_NOT_ALLOWED if none is open). */
int wk_storage_commit(wk_sql_error *err);
/** Rolls the open transaction back (WK_SQL_NOT_ALLOWED if none is open). */
int wk_storage_rollback(wk_sql_error *err);

/** Deletes the actor when this event ends; storage keeps working until then.
 * Then: the alarm is forgotten, sockets are closed with 1000 "actor deleted",
 * the files are removed; the next event meets a new, empty actor (wk_on_init
 * runs again). In a cluster it is replicated when the event ends and lost if
 * that upload fails: use wk_storage_delete_self_durable to know. */
void wk_storage_delete_self(void);

/** Deletes the actor inside the call, so that the answer can follow it.
 * - WK_OK: deleted. Every later storage call in this event is
 *   WK_SQL_NOT_ALLOWED ("deleted in this event"), wk_alarm_get finds none,
 *   wk_alarm_set and wk_alarm_clear do nothing.
 * - WK_SQL_NOT_ALLOWED inside an open transaction: nothing changes, the
 *   transaction stays open; commit or roll back first.
 * - WK_SQL_INTERNAL: not known to be durable; calling it again is safe (one
 *   node: storage stays refused until a retry succeeds or the event ends). */
int wk_storage_delete_self_durable(wk_sql_error *err);

/* Going back in time (WIT 0.2.4; Durable Objects' getCurrentBookmark,
 * getBookmarkForTime and onNextSessionRestoreBookmark). A bookmark is an
 * opaque NUL-terminated string naming a position in the actor's history;
 * bookmarks of one actor sort as their positions do (strcmp: a later
 * state's sorts after an earlier one's). A bookmark a call returns is yours:
 * free() it. */

/** Sets *bookmark to the bookmark of the actor's state as it is now, or to
 * NULL where the host keeps no history (a node served with `--no-history`;
 * otherwise it is kept for the app's retention window). What the event
 * wrote so far is made durable first, as wk_storage_flush does. Errors as wk_storage_flush:
 * WK_SQL_NOT_ALLOWED inside an open transaction or after a durable delete;
 * WK_SQL_INTERNAL: the writes are not known to be kept. *bookmark is NULL on
 * failure. */
int wk_storage_current_bookmark(char **bookmark, wk_sql_error *err);

/** Sets *bookmark to the bookmark of the last state written at or before
 * `at_ms` (ms since the epoch on the host's clock: wk_now()), or to NULL: no
 * state was written by then, it lies before the actor's newest delete, or
 * the host keeps no history (a node served with `--no-history`).
 * WK_SQL_INTERNAL: the history could not be read. */
int wk_storage_bookmark_for_time(uint64_t at_ms, char **bookmark, wk_sql_error *err);

/** Asks the host to restore the actor to `bookmark` once this event has
 * ended, and sets *undo (may be NULL) to the bookmark that undoes it: the
 * state as it is now, made durable first as wk_storage_current_bookmark
 * does. When the event ends with its writes kept, the state at `bookmark`
 * becomes the actor's newest state before its next event: open sockets are
 * closed with 1012 "actor restored", the alarm becomes the restored state's,
 * and the next event starts a fresh instance on the restored state
 * (wk_on_init does not run again). The last call of an event counts; an
 * event that deletes the actor, or whose writes are not kept, restores
 * nothing. A restore the host refuses then (a bookmark before the actor's
 * newest delete, or older than the retention window) changes nothing and is
 * logged by the host.
 * - WK_SQL_NOT_ALLOWED at once, nothing asked: not a bookmark, or one after
 *   the current state; no history is kept (a node served with
 *   `--no-history`); inside an open transaction; after a delete in this
 *   event.
 * - WK_SQL_INTERNAL: the current state is not known to be kept. */
int wk_storage_restore_on_next_session(const char *bookmark, char **undo, wk_sql_error *err);

/* ----------------------------------------------------------------- alarms */

/** The pending alarm: returns true and sets *at (ms since the Unix epoch; may
 * be NULL) if one is pending, false if none (or after a durable delete). */
bool wk_alarm_get(uint64_t *at);
/** Sets or moves the alarm to `at` (ms since the epoch; use wk_now() as the
 * base: it is the host's clock, virtual under tests). Fires once. */
void wk_alarm_set(uint64_t at);
/** Clears the pending alarm, if any. */
void wk_alarm_clear(void);

/* ---------------------------------------------------------------- context */

/** This actor's class, borrowed (static for the instance's life). */
const char *wk_self_class(void);
/** This actor's name, borrowed (static for the instance's life). */
const char *wk_self_name(void);
/** The app, as "tenant/app", borrowed (static for the instance's life). */
const char *wk_app(void);
/** The host's time in ms since the Unix epoch (the clock alarms run on). */
uint64_t wk_now(void);

/** Severity of a log line. */
typedef enum wk_log_level { WK_LOG_DEBUG = 0, WK_LOG_INFO = 1, WK_LOG_WARN = 2, WK_LOG_ERROR = 3 } wk_log_level;

/** Writes a printf-formatted line to the host's log, tagged with the actor's
 * address. */
void wk_log(wk_log_level level, const char *format, ...) __attribute__((format(printf, 2, 3)));

/** Fails the current event: the printf-formatted message is reported to the
 * host (`context.report-failure`), which answers the event with it (a
 * request's 500 body, a caller's `failed` error), then the event traps. Does
 * not return. What the event wrote outside an open transaction is kept; an
 * open transaction is rolled back. The SDK's own fatal errors (out of memory)
 * are reported the same way. */
_Noreturn void wk_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

/** How an earlier incarnation of this address was deleted. */
typedef enum wk_deletion_cause {
    WK_DELETED_BY_DELETE_SELF = 0,
    WK_DELETED_BY_DELETE_SELF_DURABLE = 1,
    WK_DELETED_BY_OPERATOR = 2,
    WK_DELETED_BY_EXPIRY = 3,
} wk_deletion_cause;

/** A static name: "delete-self", "delete-self-durable", "operator", "expired". */
const char *wk_deletion_cause_name(wk_deletion_cause cause);

/** The last deletion of this address before its current database was created:
 * returns true and fills *at (ms since the epoch) and *cause (either may be
 * NULL), or false if the address was never deleted. Known from positive
 * evidence only: use it to refuse a late write (a webhook for a deleted
 * account) instead of recreating state. WIT 0.2.1. */
bool wk_previous_deletion(uint64_t *at, wk_deletion_cause *cause);

/* ---------------------------------------------------------------- sockets */

/** Identifies one WebSocket for its whole life; never reused by a host run. */
typedef uint64_t wk_socket_id;

/** A WebSocket message, borrowed for the event that received it. `data` is
 * followed by a NUL (a text message is a C string). */
typedef struct wk_message {
    bool is_binary;
    const uint8_t *data;
    size_t len;
} wk_message;

/** Sends a NUL-terminated text message. WK_OK or WK_SOCKET_NOT_OPEN. */
int wk_socket_send_text(wk_socket_id socket, const char *text);
/** Sends `len` bytes of text. WK_OK or WK_SOCKET_NOT_OPEN. */
int wk_socket_send_text_n(wk_socket_id socket, const char *text, size_t len);
/** Sends a binary message. WK_OK or WK_SOCKET_NOT_OPEN. */
int wk_socket_send_binary(wk_socket_id socket, const void *data, size_t len);
/** Closes a socket with a close code (1000 normal, 4000-4999 the app's own)
 * and a reason; wk_on_socket_close follows. WK_OK or WK_SOCKET_NOT_OPEN. */
int wk_socket_close(wk_socket_id socket, uint16_t code, const char *reason);
/** Copies up to `cap` of the actor's open socket ids into ids (may be NULL
 * when cap is 0) and returns how many are open (may exceed cap: call again
 * with a bigger buffer). */
size_t wk_open_sockets(wk_socket_id *ids, size_t cap);

/* ------------------------------------------------------------------ calls */

/** Why a call failed. `message` is owned once filled: wk_call_error_free. */
typedef struct wk_call_error {
    /** WK_CALL_REFUSED, WK_CALL_REJECTED or WK_CALL_FAILED (WK_OK when unset). */
    wk_status kind;
    /** NUL-terminated; NULL when unset. */
    char *message;
} wk_call_error;

/** Frees err->message and resets *err. NULL does nothing. */
void wk_call_error_free(wk_call_error *err);

/** Bytes the SDK allocated for you: `len` bytes then a NUL. Free `data` with
 * wk_bytes_free (or wk_free). */
typedef struct wk_bytes {
    uint8_t *data;
    size_t len;
} wk_bytes;

/** Frees b->data and resets *b. NULL does nothing. */
void wk_bytes_free(wk_bytes *b);

/** Calls the actor class_name/name of the same app: its wk_on_call runs with
 * the payload (`len` bytes) and this actor as the caller; this actor waits.
 * On WK_OK *answer holds the reply (owned: wk_bytes_free); otherwise *answer
 * is empty and the kind is returned (details in *err if not NULL). */
int wk_call(const char *class_name, const char *name, const void *payload, size_t len, wk_bytes *answer,
            wk_call_error *err);

/* ------------------------------------------------------------------- http */

/** One header, NUL-terminated name and value. */
typedef struct wk_header {
    const char *name;
    const char *value;
} wk_header;

/** A request routed to this actor: /<class>/<name><path>. Everything in it is
 * borrowed until wk_on_request returns; the body is followed by a NUL. */
typedef struct wk_request {
    /** "GET", "POST", ... */
    const char *method;
    /** What follows /<class>/<name>, with the query: "/", "/items?page=2". */
    const char *path;
    const wk_header *headers;
    size_t n_headers;
    const uint8_t *body;
    size_t body_len;
} wk_request;

/** The value of the first header called `name` (ASCII case-insensitive),
 * borrowed from the request; NULL if absent. */
const char *wk_request_header(const wk_request *req, const char *name);

/** The decoded value of the first query parameter called `name` (from
 * "/path?name=value&..."; '+' is a space, %XX a byte), as a new
 * NUL-terminated string you free(); NULL if there is none. A parameter
 * without '=' has the value "". */
char *wk_request_query(const wk_request *req, const char *name);

/** Where a request's answer goes (opaque). Borrowed by wk_on_request until it
 * returns. The answer goes out the moment it is set, before the event ends,
 * whatever the event does afterwards; an event that sets none is answered 500. */
typedef struct wk_responder wk_responder;

/** Sends the answer: a status, `n_headers` headers, `len` bytes of body (all
 * borrowed for the call), once the event's writes so far are kept
 * (wk_storage_flush): a 200 then promises what it acknowledges, in a cluster
 * too. If they are not known to be kept, the client is answered 503 (with
 * retry-after: wk_respond_not_kept) instead, so it retries; an answer of 500
 * or more goes out as it is. WK_OK, or WK_ALREADY_ANSWERED (nothing sent). */
int wk_respond(wk_responder *res, uint16_t status, const wk_header *headers, size_t n_headers, const void *body,
               size_t len);
/** Like wk_respond, but sends the answer now, without waiting for the event's
 * writes to be kept: in a cluster they are uploaded when the event ends,
 * after the answer, and may be lost. For answers that acknowledge no write. */
int wk_respond_before_kept(wk_responder *res, uint16_t status, const wk_header *headers, size_t n_headers,
                           const void *body, size_t len);
/** Sends a text answer (content-type text/plain; charset=utf-8). */
int wk_respond_text(wk_responder *res, uint16_t status, const char *text);
/** Sends a JSON answer (content-type application/json). */
int wk_respond_json(wk_responder *res, uint16_t status, const char *json);
/** Sends a printf-formatted text answer. */
int wk_respond_printf(wk_responder *res, uint16_t status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/** Sends the answer for when what the request would acknowledge is not known
 * to be kept (wk_storage_flush, wk_storage_exec_durable or
 * wk_storage_delete_self_durable failed with WK_SQL_INTERNAL): 503 with
 * retry-after: 1 and wasmkeep-failure: not-acknowledged, the kind the host
 * names the same failure by in its own answers, so that a client knows to
 * retry; the body names err's message (err is borrowed; NULL: no message).
 * wk_respond answers it by itself when the writes before the answer were not
 * kept; a failed durable delete, which may be called again, answers it too:
 *
 *     if (wk_storage_delete_self_durable(&err) == WK_SQL_INTERNAL) {
 *         wk_respond_not_kept(res, &err);
 *         wk_sql_error_free(&err);
 *         return;
 *     }
 *
 * WK_OK, or WK_ALREADY_ANSWERED (nothing sent). */
int wk_respond_not_kept(wk_responder *res, const wk_sql_error *err);
/** Whether the answer was already sent. */
bool wk_responded(const wk_responder *res);

/* ------------------------------------------------------------------ calls in */

/** Where wk_on_call's answer goes (opaque), borrowed until wk_on_call returns.
 * Answer once; if wk_on_call sets nothing, the caller gets WK_CALL_REJECTED
 * ("no reply"). */
typedef struct wk_call_reply wk_call_reply;

/** Answers the call with `len` bytes (copied). */
void wk_reply(wk_call_reply *reply, const void *data, size_t len);
/** Answers the call with a NUL-terminated string (copied). */
void wk_reply_text(wk_call_reply *reply, const char *text);
/** Rejects the call with a message (copied): the caller sees WK_CALL_REJECTED. */
void wk_reply_reject(wk_call_reply *reply, const char *message);

/** The caller of wk_on_call (borrowed for the event). */
typedef struct wk_address {
    const char *class_name;
    const char *name;
} wk_address;

/* ----------------------------------------------------------------- events
 *
 * Define the events your actor answers; each has a weak default in the SDK,
 * so define only what you need. Each runs alone (one event at a time).
 *
 *   wk_on_init           once per new database, before the first other event,
 *                        in the same event; again after the actor was deleted.
 *                        Default: nothing.
 *   wk_on_request        a request. Default: 501 "wk_on_request is not defined".
 *   wk_on_alarm          the alarm's time came (already cleared: set it again
 *                        to repeat). Default: nothing.
 *   wk_on_call           another actor (caller) or the host (caller NULL)
 *                        called. Default: rejects "this actor takes no calls".
 *   wk_on_socket_open    a WebSocket opened on /<class>/<name><path>.
 *   wk_on_socket_message a message arrived on an open socket.
 *   wk_on_socket_close   a socket closed (by the client, or after the event
 *                        that closed it). Sockets closed because the actor was
 *                        deleted get no event. Defaults: nothing.
 */
void wk_on_init(void);
void wk_on_request(const wk_request *req, wk_responder *res);
void wk_on_alarm(void);
void wk_on_call(const wk_address *caller, const uint8_t *payload, size_t len, wk_call_reply *reply);
void wk_on_socket_open(wk_socket_id socket, const char *path);
void wk_on_socket_message(wk_socket_id socket, const wk_message *message);
void wk_on_socket_close(wk_socket_id socket, uint16_t code, const char *reason);

#ifdef __cplusplus
}
#endif

#endif /* WASMKEEP_H */
