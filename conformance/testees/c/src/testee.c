/* The C conformance testee (see conformance/PROTOCOL.md): runs the operations
 * a request lists through the C SDK's public API (wasmkeep.h) and answers each
 * outcome. It holds no test logic. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wasmkeep.h>

#include "json.h"

/* ------------------------------------------------------------- outcomes */

/* The outcomes so far: the text of a JSON array without its closing ']'. */
typedef struct {
    buf text;
    size_t count;
} outcomes;

static void outcome_begin(outcomes *o) {
    buf_puts(&o->text, o->count++ ? "," : "[");
}

/* One operation's error, as the protocol writes it. */
typedef struct {
    const char *kind; /* NULL: no error */
    char *message;    /* owned */
    int32_t code;
    bool has_code;
} op_error;

static op_error bad(const char *message) {
    op_error e = {"bad-op", strdup(message), 0, false};
    return e;
}

static op_error from_sql(wk_sql_error *err) {
    op_error e = {wk_status_name(err->kind), err->message, err->code, err->kind == WK_SQL_SQLITE};
    err->message = NULL; /* moved into e */
    return e;
}

/* Closes the outcomes and wraps them: {"outcomes":[...]}. */
static char *outcomes_json(const outcomes *o) {
    buf b = {0};
    buf_puts(&b, "{\"outcomes\":");
    if (o->count) buf_add(&b, o->text.data, o->text.len);
    else buf_puts(&b, "[");
    buf_puts(&b, "]}");
    return b.data;
}

/* ------------------------------------------------------------ op fields */

static const json *field(const json *op, const char *name, op_error *e) {
    const json *f = json_get(op, name);
    if (!f && !e->kind) {
        buf m = {0};
        buf_printf(&m, "missing field \"%s\"", name);
        *e = bad(m.data);
        buf_free(&m);
    }
    return f;
}

static const char *str_field(const json *op, const char *name, op_error *e) {
    const json *f = field(op, name, e);
    if (!f) return NULL;
    if (f->kind != JSON_STRING) {
        if (!e->kind) *e = bad("a field that must be a string is not");
        return NULL;
    }
    return f->text;
}

/* A u64 given as a decimal string (or, leniently, a JSON number). */
static bool parse_u64(const json *f, uint64_t *out) {
    if (!f || (f->kind != JSON_STRING && f->kind != JSON_NUMBER) || !f->text[0] || f->text[0] == '-') return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(f->text, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

static bool u64_field(const json *op, const char *name, uint64_t *out, op_error *e) {
    const json *f = field(op, name, e);
    if (!f) return false;
    if (!parse_u64(f, out)) {
        if (!e->kind) *e = bad("a field must be a decimal string of a u64");
        return false;
    }
    return true;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The op's "params" as SDK values; text and blobs point into `op` or into
 * *blobs (freed by the caller with free_params). */
static wk_value *params_of(const json *op, size_t *n, op_error *e) {
    const json *p = json_get(op, "params");
    *n = 0;
    if (!p || p->kind == JSON_NULL) return NULL;
    if (p->kind != JSON_ARRAY) { *e = bad("\"params\" must be an array"); return NULL; }
    wk_value *values = calloc(p->n ? p->n : 1, sizeof(wk_value));
    if (!values) abort();
    for (size_t i = 0; i < p->n; i++) {
        const json *v = &p->items[i];
        if (v->kind != JSON_OBJECT || v->n != 1) { *e = bad("a value is an object with one key"); break; }
        const char *kind = v->keys[0];
        const json *inner = &v->items[0];
        char *end;
        if (strcmp(kind, "null") == 0) {
            values[i] = wk_null();
        } else if (strcmp(kind, "integer") == 0 && (inner->kind == JSON_STRING || inner->kind == JSON_NUMBER)) {
            errno = 0;
            long long x = strtoll(inner->text, &end, 10);
            if (errno || *end || !inner->text[0]) { *e = bad("invalid integer value"); break; }
            values[i] = wk_int(x);
        } else if (strcmp(kind, "real") == 0 && inner->kind == JSON_NUMBER) {
            values[i] = wk_real(strtod(inner->text, NULL));
        } else if (strcmp(kind, "text") == 0 && inner->kind == JSON_STRING) {
            values[i] = wk_text_n(inner->text, inner->len);
        } else if (strcmp(kind, "blob") == 0 && inner->kind == JSON_STRING && inner->len % 2 == 0) {
            uint8_t *bytes = malloc(inner->len / 2 + 1);
            if (!bytes) abort();
            bool ok = true;
            for (size_t k = 0; k < inner->len / 2; k++) {
                int hi = hexval(inner->text[2 * k]), lo = hexval(inner->text[2 * k + 1]);
                if (hi < 0 || lo < 0) ok = false;
                bytes[k] = (uint8_t)(hi << 4 | lo);
            }
            values[i] = wk_blob(bytes, inner->len / 2);
            *n = i + 1; /* so that free_params frees it */
            if (!ok) { *e = bad("invalid blob value"); break; }
        } else {
            *e = bad("unknown or invalid value kind");
            break;
        }
        *n = i + 1;
    }
    return values;
}

static void free_params(wk_value *values, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (values[i].kind == WK_BLOB) free((void *)values[i].as.blob.ptr);
    free(values);
}

static void write_hex(buf *b, const uint8_t *data, size_t len) {
    static const char digits[] = "0123456789abcdef";
    buf_puts(b, "\"");
    for (size_t i = 0; i < len; i++) {
        char pair[2] = {digits[data[i] >> 4], digits[data[i] & 15]};
        buf_add(b, pair, 2);
    }
    buf_puts(b, "\"");
}

static void write_value(buf *b, const wk_value *v) {
    switch (v->kind) {
    case WK_INTEGER: buf_printf(b, "{\"integer\":\"%" PRId64 "\"}", v->as.integer); break;
    case WK_REAL: buf_puts(b, "{\"real\":"); buf_json_real(b, v->as.real); buf_puts(b, "}"); break;
    case WK_TEXT: buf_puts(b, "{\"text\":"); buf_json_string(b, v->as.text.ptr, v->as.text.len); buf_puts(b, "}"); break;
    case WK_BLOB: buf_puts(b, "{\"blob\":"); write_hex(b, v->as.blob.ptr, v->as.blob.len); buf_puts(b, "}"); break;
    default: buf_puts(b, "{\"null\":true}"); break;
    }
}

/* ------------------------------------------------------------ operations */

static void run_ops(const json *ops, wk_responder *res, outcomes *out);

static void respond_json_before_kept(wk_responder *res, uint16_t status, const char *body) {
    wk_header h = {"content-type", "application/json"};
    wk_respond_before_kept(res, status, &h, 1, body, strlen(body));
}

/* Where `alloc` publishes its block, so that the allocation really happens. */
static void *volatile alloc_sink;

/* Runs one operation; on success appends its ok value to `ok` and returns an
 * error with kind NULL. */
static op_error run_op(const json *op, wk_responder *res, const outcomes *so_far, buf *ok) {
    op_error e = {NULL, NULL, 0, false};
    wk_sql_error err = {0};
    const char *name = op->kind == JSON_OBJECT ? str_field(op, "op", &e) : NULL;
    if (!name) return e.kind ? e : bad("an operation is a JSON object");

    bool is_exec = strcmp(name, "exec") == 0, is_durable = strcmp(name, "exec-durable") == 0;
    if (is_exec || is_durable || strcmp(name, "query") == 0) {
        const char *sql = str_field(op, "sql", &e);
        size_t n;
        wk_value *params = sql ? params_of(op, &n, &e) : NULL;
        if (!e.kind) {
            if (is_exec || is_durable) {
                uint64_t changed;
                int s = is_exec ? wk_storage_exec(sql, params, n, &changed, &err)
                                : wk_storage_exec_durable(sql, params, n, &changed, &err);
                if (s == WK_OK) buf_printf(ok, "{\"changed\":%" PRIu64 "}", changed);
                else e = from_sql(&err);
            } else {
                wk_rows *rows;
                if (wk_storage_query(sql, params, n, &rows, &err) == WK_OK) {
                    buf_puts(ok, "{\"columns\":[");
                    for (size_t c = 0; c < rows->n_columns; c++) {
                        if (c) buf_puts(ok, ",");
                        buf_json_string(ok, rows->columns[c], strlen(rows->columns[c]));
                    }
                    buf_puts(ok, "],\"rows\":[");
                    for (size_t r = 0; r < rows->n_rows; r++) {
                        buf_puts(ok, r ? ",[" : "[");
                        for (size_t c = 0; c < rows->n_columns; c++) {
                            if (c) buf_puts(ok, ",");
                            write_value(ok, wk_rows_at(rows, r, c));
                        }
                        buf_puts(ok, "]");
                    }
                    buf_puts(ok, "]}");
                    wk_rows_free(rows);
                } else {
                    e = from_sql(&err);
                }
            }
        }
        free_params(params, params ? n : 0);
        return e;
    }
    int s = WK_OK;
    if (strcmp(name, "begin") == 0) s = wk_storage_begin(&err);
    else if (strcmp(name, "commit") == 0) s = wk_storage_commit(&err);
    else if (strcmp(name, "rollback") == 0) s = wk_storage_rollback(&err);
    else if (strcmp(name, "flush") == 0) s = wk_storage_flush(&err);
    else if (strcmp(name, "delete-self") == 0) wk_storage_delete_self();
    else if (strcmp(name, "delete-self-durable") == 0) s = wk_storage_delete_self_durable(&err);
    else if (strcmp(name, "clear-alarm") == 0) wk_alarm_clear();
    else goto not_unit;
    if (s != WK_OK) return from_sql(&err);
    buf_puts(ok, "null");
    return e;

not_unit:
    if (strcmp(name, "get-alarm") == 0) {
        uint64_t at;
        if (wk_alarm_get(&at)) buf_printf(ok, "{\"at\":\"%" PRIu64 "\",\"pending\":true}", at);
        else buf_puts(ok, "{\"pending\":false}");
    } else if (strcmp(name, "set-alarm") == 0) {
        uint64_t t;
        if (json_get(op, "at")) {
            if (!u64_field(op, "at", &t, &e)) return e;
            wk_alarm_set(t);
        } else if (json_get(op, "in")) {
            if (!u64_field(op, "in", &t, &e)) return e;
            uint64_t now = wk_now();
            wk_alarm_set(t > UINT64_MAX - now ? UINT64_MAX : now + t);
        } else {
            return bad("set-alarm needs \"at\" or \"in\"");
        }
        buf_puts(ok, "null");
    } else if (strcmp(name, "current-bookmark") == 0 || strcmp(name, "bookmark-for-time") == 0) {
        char *b;
        uint64_t at = 0;
        bool now = strcmp(name, "current-bookmark") == 0;
        if (!now && !u64_field(op, "at", &at, &e)) return e;
        if ((now ? wk_storage_current_bookmark(&b, &err) : wk_storage_bookmark_for_time(at, &b, &err)) != WK_OK)
            return from_sql(&err);
        if (b) {
            buf_puts(ok, "{\"bookmark\":");
            buf_json_string(ok, b, strlen(b));
            buf_puts(ok, "}");
        } else {
            buf_puts(ok, "{\"none\":true}");
        }
        free(b);
    } else if (strcmp(name, "restore-on-next-session") == 0) {
        const char *b = str_field(op, "bookmark", &e);
        if (!b) return e;
        char *undo;
        if (wk_storage_restore_on_next_session(b, &undo, &err) != WK_OK) return from_sql(&err);
        buf_puts(ok, "{\"undo\":");
        buf_json_string(ok, undo, strlen(undo));
        buf_puts(ok, "}");
        free(undo);
    } else if (strcmp(name, "now") == 0) {
        buf_printf(ok, "{\"now\":\"%" PRIu64 "\"}", wk_now());
    } else if (strcmp(name, "previous-deletion") == 0) {
        uint64_t at;
        wk_deletion_cause cause;
        if (wk_previous_deletion(&at, &cause))
            buf_printf(ok, "{\"deleted\":true,\"at\":\"%" PRIu64 "\",\"cause\":\"%s\"}", at,
                       wk_deletion_cause_name(cause));
        else buf_puts(ok, "{\"deleted\":false}");
    } else if (strcmp(name, "self") == 0) {
        /* Keys in sorted order, as the other testees write them: the runner
         * compares a call's payload as text. */
        buf_puts(ok, "{\"app\":");
        buf_json_string(ok, wk_app(), strlen(wk_app()));
        buf_puts(ok, ",\"class\":");
        buf_json_string(ok, wk_self_class(), strlen(wk_self_class()));
        buf_puts(ok, ",\"name\":");
        buf_json_string(ok, wk_self_name(), strlen(wk_self_name()));
        buf_puts(ok, "}");
    } else if (strcmp(name, "log") == 0) {
        const char *m = str_field(op, "message", &e);
        if (!m) return e;
        wk_log(WK_LOG_INFO, "%s", m);
        buf_puts(ok, "null");
    } else if (strcmp(name, "respond") == 0) {
        const json *st = json_get(op, "status");
        uint64_t status = 200;
        if (st && st->kind != JSON_NULL && (!parse_u64(st, &status) || status > 65535))
            return bad("\"status\" must be a number");
        if (!res || wk_responded(res)) return bad("respond: no request to answer (already answered, or a call)");
        char *body = outcomes_json(so_far);
        const json *kept = json_get(op, "kept");
        if (kept && kept->kind == JSON_BOOL && kept->boolean) {
            wk_respond_json(res, (uint16_t)status, body);
        } else {
            respond_json_before_kept(res, (uint16_t)status, body);
        }
        free(body);
        buf_puts(ok, "null");
    } else if (strcmp(name, "trap") == 0) {
        wk_fail("trap requested by the conformance case");
    } else if (strcmp(name, "loop") == 0) {
        volatile uint64_t spin = 0;
        for (;;) spin++;
    } else if (strcmp(name, "alloc") == 0) {
        uint64_t mb;
        if (!u64_field(op, "mb", &mb, &e)) return e;
        if (mb > 4096) return bad("mb is too large");
        size_t size = (size_t)mb << 20;
        uint8_t *block = malloc(size ? size : 1);
        if (!block) {
            /* The event traps; the host answers with this report and the trap. */
            wk_fail("alloc: out of memory: allocating %zu bytes failed", size);
        }
        memset(block, 1, size);
        alloc_sink = block; /* escapes: the compiler may not elide the allocation */
        buf_printf(ok, "{\"bytes\":%zu}", size);
        free(block);
        alloc_sink = NULL;
    } else if (strcmp(name, "call") == 0) {
        const char *cls = str_field(op, "class", &e), *nm = str_field(op, "name", &e),
                   *payload = str_field(op, "payload", &e);
        if (e.kind) return e;
        wk_bytes answer;
        wk_call_error cerr = {0};
        int cs = wk_call(cls, nm, payload, strlen(payload), &answer, &cerr);
        if (cs != WK_OK) {
            op_error ce = {wk_status_name(cerr.kind), cerr.message, 0, false};
            return ce;
        }
        buf_puts(ok, "{\"payload\":");
        buf_json_string(ok, (const char *)answer.data, answer.len);
        buf_puts(ok, "}");
        wk_bytes_free(&answer);
    } else if (strcmp(name, "sockets") == 0) {
        wk_socket_id ids[64];
        size_t n = wk_open_sockets(ids, 64);
        buf_puts(ok, "{\"sockets\":[");
        for (size_t i = 0; i < n && i < 64; i++) buf_printf(ok, "%s\"%" PRIu64 "\"", i ? "," : "", ids[i]);
        buf_puts(ok, "]}");
    } else if (strcmp(name, "send") == 0 || strcmp(name, "close") == 0) {
        uint64_t socket;
        if (!u64_field(op, "socket", &socket, &e)) return e;
        int ss;
        if (name[0] == 's') {
            const char *text = str_field(op, "text", &e);
            if (!text) return e;
            ss = wk_socket_send_text(socket, text);
        } else {
            uint64_t code;
            const char *reason = str_field(op, "reason", &e);
            if (!reason) return e;
            const json *c = json_get(op, "code");
            if (!c || c->kind != JSON_NUMBER || !parse_u64(c, &code) || code > 65535)
                return bad("\"code\" must be a number");
            ss = wk_socket_close(socket, (uint16_t)code, reason);
        }
        if (ss != WK_OK) {
            op_error se = {"not-open", strdup("socket not open"), 0, false};
            return se;
        }
        buf_puts(ok, "null");
    } else {
        buf m = {0};
        buf_puts(&m, "unknown op ");
        buf_json_string(&m, name, strlen(name));
        e = bad(m.data);
        buf_free(&m);
    }
    return e;
}

static void run_ops(const json *ops, wk_responder *res, outcomes *out) {
    for (size_t i = 0; i < ops->n; i++) {
        buf ok = {0};
        op_error e = run_op(&ops->items[i], res, out, &ok);
        outcome_begin(out);
        if (e.kind) {
            buf_puts(&out->text, "{\"err\":{");
            if (e.has_code) buf_printf(&out->text, "\"code\":%d,", (int)e.code);
            buf_puts(&out->text, "\"kind\":");
            buf_json_string(&out->text, e.kind, strlen(e.kind));
            buf_puts(&out->text, ",\"message\":");
            buf_json_string(&out->text, e.message ? e.message : "", e.message ? strlen(e.message) : 0);
            buf_puts(&out->text, "}}");
            free(e.message);
        } else {
            buf_puts(&out->text, "{\"ok\":");
            buf_add(&out->text, ok.data, ok.len);
            buf_puts(&out->text, "}");
        }
        buf_free(&ok);
    }
}

/* The "ops" list of a body: returns the parsed document (ops in *ops), or
 * NULL with a message. An empty body is no operations. */
static json *parse_ops(const uint8_t *body, size_t len, const json **ops, char **message) {
    static const json none = {JSON_ARRAY, false, NULL, 0, NULL, NULL, 0};
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t')) i++;
    json *doc = NULL;
    if (i == len) {
        *ops = &none;
        doc = calloc(1, sizeof(json)); /* an empty document to free */
        if (!doc) abort();
        return doc;
    }
    const char *error;
    doc = json_parse((const char *)body, len, &error);
    if (!doc) {
        buf m = {0};
        buf_printf(&m, "invalid JSON: %s", error);
        *message = m.data;
        return NULL;
    }
    const json *list = json_get(doc, "ops");
    if (!list || list->kind != JSON_ARRAY) {
        json_free(doc);
        *message = strdup("the body must be an object with an \"ops\" array");
        return NULL;
    }
    *ops = list;
    return doc;
}

/* ---------------------------------------------------------------- events */

void wk_on_init(void) {
    wk_sql_error err = {0};
    if (wk_storage_exec("CREATE TABLE IF NOT EXISTS init_log(n INTEGER)", NULL, 0, NULL, &err) != WK_OK ||
        wk_storage_exec("INSERT INTO init_log(n) VALUES ((SELECT count(*) FROM init_log) + 1)", NULL, 0, NULL,
                        &err) != WK_OK) {
        wk_fail("init_log: %s", err.message); /* as the Rust testee's expect: on-init runs again */
    }
}

void wk_on_request(const wk_request *req, wk_responder *res) {
    const json *ops;
    char *message = NULL;
    json *doc = parse_ops(req->body, req->body_len, &ops, &message);
    if (!doc) {
        buf b = {0};
        buf_puts(&b, "{\"error\":");
        buf_json_string(&b, message, strlen(message));
        buf_puts(&b, "}");
        wk_respond_json(res, 400, b.data);
        buf_free(&b);
        free(message);
        return;
    }
    outcomes out = {{0}, 0};
    run_ops(ops, res, &out);
    if (!wk_responded(res)) {
        /* The WIT's own semantics (answer, then the event's end keeps the
         * writes); a case asks for the SDK's kept answer with respond's kept. */
        char *body = outcomes_json(&out);
        respond_json_before_kept(res, 200, body);
        free(body);
    }
    buf_free(&out.text);
    json_free(doc);
}

void wk_on_alarm(void) {
    char now[24];
    snprintf(now, sizeof now, "%" PRIu64, wk_now());
    wk_value at[] = {wk_text(now)};
    wk_sql_error err = {0};
    if (wk_storage_exec("CREATE TABLE IF NOT EXISTS alarm_log(at TEXT)", NULL, 0, NULL, &err) != WK_OK ||
        wk_storage_exec("INSERT INTO alarm_log(at) VALUES (?1)", WK_PARAMS(at), NULL, &err) != WK_OK) {
        wk_fail("alarm_log: %s", err.message);
    }
}

void wk_on_call(const wk_address *caller, const uint8_t *payload, size_t len, wk_call_reply *reply) {
    (void)caller;
    const json *ops;
    char *message = NULL;
    json *doc = parse_ops(payload, len, &ops, &message);
    if (!doc) {
        wk_reply_reject(reply, message);
        free(message);
        return;
    }
    outcomes out = {{0}, 0};
    run_ops(ops, NULL, &out);
    char *body = outcomes_json(&out);
    wk_reply_text(reply, body);
    free(body);
    buf_free(&out.text);
    json_free(doc);
}

/* Records a socket event in socket_log(event, socket, detail). */
static void log_socket(const char *event, wk_socket_id socket, const char *detail, size_t len) {
    char id[24];
    snprintf(id, sizeof id, "%" PRIu64, socket);
    wk_value row[] = {wk_text(event), wk_text(id), wk_text_n(detail, len)};
    wk_sql_error err = {0};
    if (wk_storage_exec("CREATE TABLE IF NOT EXISTS socket_log(event TEXT, socket TEXT, detail TEXT)", NULL, 0, NULL,
                        &err) != WK_OK ||
        wk_storage_exec("INSERT INTO socket_log(event, socket, detail) VALUES (?1, ?2, ?3)", WK_PARAMS(row), NULL,
                        &err) != WK_OK) {
        wk_log(WK_LOG_ERROR, "socket_log: %s", err.message);
        wk_sql_error_free(&err);
    }
}

void wk_on_socket_open(wk_socket_id socket, const char *path) { log_socket("open", socket, path, strlen(path)); }

void wk_on_socket_message(wk_socket_id socket, const wk_message *message) {
    if (message->is_binary) {
        buf hex = {0};
        write_hex(&hex, message->data, message->len);
        log_socket("message", socket, hex.data + 1, hex.len - 2); /* without the quotes */
        buf_free(&hex);
        return;
    }
    const char *text = (const char *)message->data;
    log_socket("message", socket, text, message->len);
    if (message->len >= 5 && memcmp(text, "echo:", 5) == 0 &&
        wk_socket_send_text_n(socket, text + 5, message->len - 5) != WK_OK)
        wk_log(WK_LOG_WARN, "echo on socket %" PRIu64 ": not open", socket);
}

void wk_on_socket_close(wk_socket_id socket, uint16_t code, const char *reason) {
    buf detail = {0};
    buf_printf(&detail, "%u %s", (unsigned)code, reason);
    log_socket("close", socket, detail.data, detail.len);
    buf_free(&detail);
}
