/* Storage: SQL values in and out, errors, rows, transactions, deletes. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef wasmkeep_actor_types_sql_value_t bind_value;

wk_value wk_text(const char *s) { return wk_text_n(s, s ? strlen(s) : 0); }

void wk_sql_error_free(wk_sql_error *err) {
    if (!err) return;
    free(err->message);
    err->kind = WK_OK;
    err->code = 0;
    err->message = NULL;
}

/* Moves the bindings' error into *err (or frees it) and returns its kind. */
static int sql_failed(wasmkeep_actor_types_sql_error_t *e, wk_sql_error *err) {
    wk_status kind;
    int32_t code = 0;
    char *message;
    switch (e->tag) {
    case WASMKEEP_ACTOR_TYPES_SQL_ERROR_NOT_ALLOWED:
        kind = WK_SQL_NOT_ALLOWED;
        message = wk__take_cstr(&e->val.not_allowed);
        break;
    case WASMKEEP_ACTOR_TYPES_SQL_ERROR_INTERNAL:
        kind = WK_SQL_INTERNAL;
        message = wk__take_cstr(&e->val.internal);
        break;
    default:
        kind = WK_SQL_SQLITE;
        code = e->val.sqlite.code;
        message = wk__take_cstr(&e->val.sqlite.message);
        break;
    }
    if (err) {
        free(err->message); /* a struct reused without wk_sql_error_free */
        err->kind = kind;
        err->code = code;
        err->message = message;
    } else {
        free(message);
    }
    return kind;
}

static void sql_ok(wk_sql_error *err) {
    if (err) wk_sql_error_free(err);
}

/* The parameters as the bindings lay them out. The bytes stay the caller's:
 * only the array is new. Small lists use `stack` (no allocation). */
enum { STACK_PARAMS = 16 };
static bind_value *bind(const wk_value *params, size_t n, bind_value *stack) {
    bind_value *out = n <= STACK_PARAMS ? stack : wk__alloc(n * sizeof(bind_value));
    for (size_t i = 0; i < n; i++) {
        const wk_value *v = &params[i];
        bind_value *b = &out[i];
        switch (v->kind) {
        case WK_INTEGER:
            b->tag = WASMKEEP_ACTOR_TYPES_SQL_VALUE_INTEGER;
            b->val.integer = v->as.integer;
            break;
        case WK_REAL:
            b->tag = WASMKEEP_ACTOR_TYPES_SQL_VALUE_REAL;
            b->val.real = v->as.real;
            break;
        case WK_TEXT:
            b->tag = WASMKEEP_ACTOR_TYPES_SQL_VALUE_TEXT;
            b->val.text.ptr = (uint8_t *)v->as.text.ptr;
            b->val.text.len = v->as.text.len;
            break;
        case WK_BLOB:
            b->tag = WASMKEEP_ACTOR_TYPES_SQL_VALUE_BLOB;
            b->val.blob.ptr = (uint8_t *)v->as.blob.ptr;
            b->val.blob.len = v->as.blob.len;
            break;
        default:
            b->tag = WASMKEEP_ACTOR_TYPES_SQL_VALUE_NULL;
            break;
        }
    }
    return out;
}

static void unbind(bind_value *b, bind_value *stack) {
    if (b != stack) free(b);
}

typedef bool (*exec_fn)(actor_string_t *, wasmkeep_actor_storage_list_sql_value_t *, uint64_t *,
                        wasmkeep_actor_storage_sql_error_t *);

static int run_exec(const char *what, exec_fn f, const char *sql, const wk_value *params, size_t n_params, uint64_t *changed,
                    wk_sql_error *err) {
    if (wk__outside_event(what)) {
        if (changed) *changed = 0;
        return wk__sql_outside_event(what, err);
    }
    bind_value stack[STACK_PARAMS];
    actor_string_t text = wk__str(sql);
    wasmkeep_actor_storage_list_sql_value_t list = {bind(params, n_params, stack), n_params};
    uint64_t n = 0;
    wasmkeep_actor_storage_sql_error_t e;
    bool ok = f(&text, &list, &n, &e);
    unbind(list.ptr, stack);
    if (changed) *changed = ok ? n : 0;
    if (!ok) return sql_failed(&e, err);
    sql_ok(err);
    return WK_OK;
}

int (wk_storage_exec)(const char *sql, const wk_value *params, size_t n_params, uint64_t *changed, wk_sql_error *err) {
    return run_exec("wk_storage_exec", wasmkeep_actor_storage_exec, sql, params, n_params, changed, err);
}

int (wk_storage_exec_durable)(const char *sql, const wk_value *params, size_t n_params, uint64_t *changed,
                            wk_sql_error *err) {
    return run_exec("wk_storage_exec_durable", wasmkeep_actor_storage_exec_durable, sql, params, n_params, changed, err);
}

/* The rows, built from the bindings' result: each string and blob buffer is
 * reused (NUL-terminated in place), the nested lists are freed. */
struct rows_owned {
    wk_rows pub;
    char **columns;
    wk_value *values;
};

static wk_rows *rows_from(wasmkeep_actor_types_query_result_t *r) {
    struct rows_owned *out = wk__alloc(sizeof *out);
    size_t nc = r->columns.len, nr = r->rows.len;
    out->columns = wk__alloc(nc * sizeof(char *));
    for (size_t c = 0; c < nc; c++) out->columns[c] = wk__take_cstr(&r->columns.ptr[c]);
    out->values = wk__alloc(nr * nc * sizeof(wk_value));
    for (size_t i = 0; i < nr; i++) {
        wasmkeep_actor_types_list_sql_value_t *row = &r->rows.ptr[i];
        for (size_t c = 0; c < nc; c++) {
            wk_value *v = &out->values[i * nc + c];
            if (c >= row->len) { /* never from the host; keeps the shape safe */
                *v = wk_null();
                continue;
            }
            bind_value *s = &row->ptr[c];
            switch (s->tag) {
            case WASMKEEP_ACTOR_TYPES_SQL_VALUE_INTEGER: *v = wk_int(s->val.integer); break;
            case WASMKEEP_ACTOR_TYPES_SQL_VALUE_REAL: *v = wk_real(s->val.real); break;
            case WASMKEEP_ACTOR_TYPES_SQL_VALUE_TEXT: {
                size_t len = s->val.text.len;
                *v = wk_text_n(wk__take_cstr(&s->val.text), len);
                break;
            }
            case WASMKEEP_ACTOR_TYPES_SQL_VALUE_BLOB: {
                size_t len;
                uint8_t *b = wk__take_bytes(&s->val.blob, &len);
                *v = wk_blob(b, len);
                break;
            }
            default: *v = wk_null(); break;
            }
        }
    }
    /* Everything taken is empty now: this frees only what is left (lists). */
    wasmkeep_actor_types_query_result_free(r);
    out->pub.n_columns = nc;
    out->pub.n_rows = nr;
    out->pub.columns = (const char *const *)out->columns;
    out->pub.values = out->values;
    return &out->pub;
}

void wk_rows_free(wk_rows *rows) {
    if (!rows) return;
    struct rows_owned *o = (struct rows_owned *)rows;
    for (size_t c = 0; c < rows->n_columns; c++) free(o->columns[c]);
    for (size_t i = 0; i < rows->n_rows * rows->n_columns; i++) {
        wk_value *v = &o->values[i];
        if (v->kind == WK_TEXT) free((void *)v->as.text.ptr);
        if (v->kind == WK_BLOB) free((void *)v->as.blob.ptr);
    }
    free(o->columns);
    free(o->values);
    free(o);
}

const wk_value *wk_rows_at(const wk_rows *rows, size_t row, size_t column) {
    if (!rows || row >= rows->n_rows || column >= rows->n_columns) return NULL;
    return &rows->values[row * rows->n_columns + column];
}

int wk_rows_column(const wk_rows *rows, const char *name) {
    if (!rows || !name) return -1;
    for (size_t c = 0; c < rows->n_columns; c++)
        if (strcmp(rows->columns[c], name) == 0) return (int)c;
    return -1;
}

int64_t wk_rows_int(const wk_rows *rows, size_t row, size_t column, int64_t fallback) {
    const wk_value *v = wk_rows_at(rows, row, column);
    if (v && v->kind == WK_INTEGER) return v->as.integer;
    if (v && v->kind == WK_REAL) return (int64_t)v->as.real;
    return fallback;
}

const char *wk_rows_text(const wk_rows *rows, size_t row, size_t column) {
    const wk_value *v = wk_rows_at(rows, row, column);
    return v && v->kind == WK_TEXT ? v->as.text.ptr : NULL;
}

int (wk_storage_query)(const char *sql, const wk_value *params, size_t n_params, wk_rows **rows, wk_sql_error *err) {
    if (wk__outside_event("wk_storage_query")) {
        if (rows) *rows = NULL;
        return wk__sql_outside_event("wk_storage_query", err);
    }
    bind_value stack[STACK_PARAMS];
    actor_string_t text = wk__str(sql);
    wasmkeep_actor_storage_list_sql_value_t list = {bind(params, n_params, stack), n_params};
    wasmkeep_actor_types_query_result_t r;
    wasmkeep_actor_storage_sql_error_t e;
    bool ok = wasmkeep_actor_storage_query(&text, &list, &r, &e);
    unbind(list.ptr, stack);
    if (!ok) {
        if (rows) *rows = NULL;
        return sql_failed(&e, err);
    }
    if (rows) {
        *rows = rows_from(&r);
    } else {
        wasmkeep_actor_types_query_result_free(&r);
    }
    sql_ok(err);
    return WK_OK;
}

static int unit(bool ok, wasmkeep_actor_storage_sql_error_t *e, wk_sql_error *err) {
    if (!ok) return sql_failed(e, err);
    sql_ok(err);
    return WK_OK;
}

int wk_storage_flush(wk_sql_error *err) {
    if (wk__outside_event("wk_storage_flush")) return wk__sql_outside_event("wk_storage_flush", err);
    wasmkeep_actor_storage_sql_error_t e;
    return unit(wasmkeep_actor_storage_flush(&e), &e, err);
}

int wk_storage_begin(wk_sql_error *err) {
    if (wk__outside_event("wk_storage_begin")) return wk__sql_outside_event("wk_storage_begin", err);
    wasmkeep_actor_storage_sql_error_t e;
    return unit(wasmkeep_actor_storage_begin(&e), &e, err);
}

int wk_storage_commit(wk_sql_error *err) {
    if (wk__outside_event("wk_storage_commit")) return wk__sql_outside_event("wk_storage_commit", err);
    wasmkeep_actor_storage_sql_error_t e;
    return unit(wasmkeep_actor_storage_commit(&e), &e, err);
}

int wk_storage_rollback(wk_sql_error *err) {
    if (wk__outside_event("wk_storage_rollback")) return wk__sql_outside_event("wk_storage_rollback", err);
    wasmkeep_actor_storage_sql_error_t e;
    return unit(wasmkeep_actor_storage_rollback(&e), &e, err);
}

void wk_storage_delete_self(void) {
    if (wk__outside_event("wk_storage_delete_self")) return;
    wasmkeep_actor_storage_delete_self();
}

int wk_storage_delete_self_durable(wk_sql_error *err) {
    if (wk__outside_event("wk_storage_delete_self_durable")) return wk__sql_outside_event("wk_storage_delete_self_durable", err);
    wasmkeep_actor_storage_sql_error_t e;
    return unit(wasmkeep_actor_storage_delete_self_durable(&e), &e, err);
}

/* An option<string> of the bindings as a C string of the caller's (NULL when none). */
static char *optional_cstr(actor_option_string_t *o) {
    return o->is_some ? wk__take_cstr(&o->val) : NULL;
}

int wk_storage_current_bookmark(char **bookmark, wk_sql_error *err) {
    if (bookmark) *bookmark = NULL;
    if (wk__outside_event("wk_storage_current_bookmark"))
        return wk__sql_outside_event("wk_storage_current_bookmark", err);
    actor_option_string_t r;
    wasmkeep_actor_storage_sql_error_t e;
    if (!wasmkeep_actor_storage_current_bookmark(&r, &e)) return sql_failed(&e, err);
    char *b = optional_cstr(&r);
    if (bookmark) *bookmark = b; else free(b);
    sql_ok(err);
    return WK_OK;
}

int wk_storage_bookmark_for_time(uint64_t at_ms, char **bookmark, wk_sql_error *err) {
    if (bookmark) *bookmark = NULL;
    if (wk__outside_event("wk_storage_bookmark_for_time"))
        return wk__sql_outside_event("wk_storage_bookmark_for_time", err);
    actor_option_string_t r;
    wasmkeep_actor_storage_sql_error_t e;
    if (!wasmkeep_actor_storage_bookmark_for_time(at_ms, &r, &e)) return sql_failed(&e, err);
    char *b = optional_cstr(&r);
    if (bookmark) *bookmark = b; else free(b);
    sql_ok(err);
    return WK_OK;
}

int wk_storage_restore_on_next_session(const char *bookmark, char **undo, wk_sql_error *err) {
    if (undo) *undo = NULL;
    if (wk__outside_event("wk_storage_restore_on_next_session"))
        return wk__sql_outside_event("wk_storage_restore_on_next_session", err);
    /* The bytes stay the caller's: the bindings only read them. A NULL is "", which is no bookmark. */
    actor_string_t b = {(uint8_t *)(bookmark ? bookmark : ""), bookmark ? strlen(bookmark) : 0};
    actor_string_t r;
    wasmkeep_actor_storage_sql_error_t e;
    if (!wasmkeep_actor_storage_restore_on_next_session(&b, &r, &e)) return sql_failed(&e, err);
    char *u = wk__take_cstr(&r);
    if (undo) *undo = u; else free(u);
    sql_ok(err);
    return WK_OK;
}
