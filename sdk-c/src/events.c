/* The component's exported events: each lifts the bindings' arguments into
 * the SDK's types, calls the actor's wk_on_* function and frees what it took. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

struct wk_responder {
    wasmkeep_actor_http_own_response_outparam_t out;
    bool answered;
};

struct wk_call_reply {
    bool set;
    bool rejected;
    uint8_t *data;
    size_t len;
};

/* Every export runs the actor's function between wk__enter_event and
 * wk__leave_event: host calls are allowed inside (and only inside) events. */
void exports_wasmkeep_actor_events_on_init(void) {
    wk__enter_event();
    wk_on_init();
    wk__leave_event();
}

void exports_wasmkeep_actor_events_on_alarm(void) {
    wk__enter_event();
    wk_on_alarm();
    wk__leave_event();
}

const char *wk_request_header(const wk_request *req, const char *name) {
    if (!req || !name) return NULL;
    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, name) == 0) return req->headers[i].value;
    return NULL;
}

void exports_wasmkeep_actor_events_on_request(exports_wasmkeep_actor_events_request_t *request,
                                              exports_wasmkeep_actor_events_own_response_outparam_t out) {
    wk_request req;
    req.method = wk__take_cstr(&request->method);
    req.path = wk__take_cstr(&request->path);
    size_t nh = request->headers.len;
    wk_header *headers = wk__alloc(nh * sizeof(wk_header));
    for (size_t i = 0; i < nh; i++) {
        headers[i].name = wk__take_cstr(&request->headers.ptr[i].f0);
        headers[i].value = wk__take_cstr(&request->headers.ptr[i].f1);
    }
    if (nh) free(request->headers.ptr);
    req.headers = headers;
    req.n_headers = nh;
    req.body = wk__take_bytes(&request->body, &req.body_len);

    struct wk_responder res = {out, false};
    wk__enter_event();
    wk_on_request(&req, &res);
    wk__leave_event();
    /* No answer set: dropping the handle makes the host answer 500. */
    if (!res.answered) wasmkeep_actor_http_response_outparam_drop_own(res.out);

    for (size_t i = 0; i < nh; i++) {
        free((void *)headers[i].name);
        free((void *)headers[i].value);
    }
    free(headers);
    free((void *)req.method);
    free((void *)req.path);
    free((void *)req.body);
}

int wk_respond(wk_responder *res, uint16_t status, const wk_header *headers, size_t n_headers, const void *body,
               size_t len) {
    if (!res || res->answered) return WK_ALREADY_ANSWERED;
    /* The answer acknowledges the writes before it: they are kept first. */
    wk_sql_error e = {0};
    if (wk_storage_flush(&e) != WK_OK && status < 500) {
        int r = wk_respond_not_kept(res, &e);
        wk_sql_error_free(&e);
        return r;
    }
    wk_sql_error_free(&e);
    return wk_respond_before_kept(res, status, headers, n_headers, body, len);
}

int wk_respond_not_kept(wk_responder *res, const wk_sql_error *err) {
    if (!res || res->answered) return WK_ALREADY_ANSWERED;
    const char *why = err && err->message ? err->message : "no message";
    const char *fmt = "the writes of this request are not known to be kept (%s); try again";
    int n = snprintf(NULL, 0, fmt, why);
    char *text = wk__alloc((size_t)(n < 0 ? 0 : n) + 1);
    snprintf(text, (size_t)(n < 0 ? 0 : n) + 1, fmt, why);
    wk_header h[3] = {{"content-type", "text/plain; charset=utf-8"},
                      {"retry-after", "1"},
                      {"wasmkeep-failure", "not-acknowledged"}};
    /* A 503 acknowledges nothing: it goes out without waiting for a flush. */
    int r = wk_respond_before_kept(res, 503, h, 3, text, strlen(text));
    free(text);
    return r;
}

int wk_respond_before_kept(wk_responder *res, uint16_t status, const wk_header *headers, size_t n_headers,
                           const void *body, size_t len) {
    if (!res || res->answered) return WK_ALREADY_ANSWERED;
    actor_tuple2_string_string_t stack[8];
    actor_tuple2_string_string_t *h = n_headers <= 8 ? stack : wk__alloc(n_headers * sizeof *h);
    for (size_t i = 0; i < n_headers; i++) {
        h[i].f0 = wk__str(headers[i].name);
        h[i].f1 = wk__str(headers[i].value);
    }
    wasmkeep_actor_http_response_t r;
    r.status = status;
    r.headers.ptr = h;
    r.headers.len = n_headers;
    r.body.ptr = (uint8_t *)body;
    r.body.len = len;
    res->answered = true;
    wasmkeep_actor_http_static_response_outparam_set(res->out, &r);
    if (h != stack) free(h);
    return WK_OK;
}

static int respond_typed(wk_responder *res, uint16_t status, const char *type, const char *text) {
    wk_header h = {"content-type", type};
    return wk_respond(res, status, &h, 1, text, text ? strlen(text) : 0);
}

int wk_respond_text(wk_responder *res, uint16_t status, const char *text) {
    return respond_typed(res, status, "text/plain; charset=utf-8", text);
}

int wk_respond_json(wk_responder *res, uint16_t status, const char *json) {
    return respond_typed(res, status, "application/json", json);
}

int wk_respond_printf(wk_responder *res, uint16_t status, const char *format, ...) {
    if (!res || res->answered) return WK_ALREADY_ANSWERED;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (n < 0) n = 0;
    char *text = wk__alloc((size_t)n + 1);
    va_start(args, format);
    vsnprintf(text, (size_t)n + 1, format, args);
    va_end(args);
    int status_out = wk_respond_text(res, status, text);
    free(text);
    return status_out;
}

bool wk_responded(const wk_responder *res) { return res && res->answered; }

static void reply_set(wk_call_reply *reply, bool rejected, const void *data, size_t len) {
    if (!reply) return;
    free(reply->data);
    reply->set = true;
    reply->rejected = rejected;
    reply->len = len;
    reply->data = NULL;
    if (len) {
        reply->data = wk__alloc(len);
        memcpy(reply->data, data, len);
    }
}

void wk_reply(wk_call_reply *reply, const void *data, size_t len) { reply_set(reply, false, data, len); }

void wk_reply_text(wk_call_reply *reply, const char *text) {
    reply_set(reply, false, text, text ? strlen(text) : 0);
}

void wk_reply_reject(wk_call_reply *reply, const char *message) {
    reply_set(reply, true, message, message ? strlen(message) : 0);
}

bool exports_wasmkeep_actor_events_on_call(exports_wasmkeep_actor_events_address_t *maybe_caller,
                                           actor_list_u8_t *payload, actor_list_u8_t *ret, actor_string_t *err) {
    wk_address caller = {NULL, NULL};
    if (maybe_caller) {
        caller.class_name = wk__take_cstr(&maybe_caller->class_);
        caller.name = wk__take_cstr(&maybe_caller->name);
    }
    size_t len;
    uint8_t *data = wk__take_bytes(payload, &len);
    wk_call_reply reply = {false, false, NULL, 0};
    wk__enter_event();
    wk_on_call(maybe_caller ? &caller : NULL, data, len, &reply);
    wk__leave_event();
    free(data);
    free((void *)caller.class_name);
    free((void *)caller.name);
    if (!reply.set) wk_reply_reject(&reply, "no reply: wk_on_call returned without wk_reply or wk_reply_reject");
    if (!reply.rejected) {
        /* The caller hears the answer only once what this call wrote is kept. */
        wk_sql_error e = {0};
        wk__enter_event();
        int kept = wk_storage_flush(&e);
        wk__leave_event();
        if (kept != WK_OK) {
            const char *why = e.message ? e.message : "no message";
            const char *fmt = "the call's writes are not known to be kept (%s); try again";
            int n = snprintf(NULL, 0, fmt, why);
            char *text = wk__alloc((size_t)(n < 0 ? 0 : n) + 1);
            snprintf(text, (size_t)(n < 0 ? 0 : n) + 1, fmt, why);
            wk_reply_reject(&reply, text);
            free(text);
        }
        wk_sql_error_free(&e);
    }
    /* The bindings' post-return frees these buffers (when not empty). */
    if (reply.rejected) {
        err->ptr = reply.data;
        err->len = reply.len;
        return false;
    }
    ret->ptr = reply.data;
    ret->len = reply.len;
    return true;
}

void exports_wasmkeep_actor_events_on_socket_open(exports_wasmkeep_actor_events_socket_id_t socket,
                                                  actor_string_t *path) {
    char *p = wk__take_cstr(path);
    wk__enter_event();
    wk_on_socket_open(socket, p);
    wk__leave_event();
    free(p);
}

void exports_wasmkeep_actor_events_on_socket_message(exports_wasmkeep_actor_events_socket_id_t socket,
                                                     exports_wasmkeep_actor_events_message_t *message) {
    wk_message m;
    m.is_binary = message->tag == WASMKEEP_ACTOR_TYPES_MESSAGE_BINARY;
    m.data = m.is_binary ? wk__take_bytes(&message->val.binary, &m.len)
                         : wk__take_bytes((actor_list_u8_t *)&message->val.text, &m.len);
    wk__enter_event();
    wk_on_socket_message(socket, &m);
    wk__leave_event();
    free((void *)m.data);
}

void exports_wasmkeep_actor_events_on_socket_close(exports_wasmkeep_actor_events_socket_id_t socket, uint16_t code,
                                                   actor_string_t *reason) {
    char *r = wk__take_cstr(reason);
    wk__enter_event();
    wk_on_socket_close(socket, code, r);
    wk__leave_event();
    free(r);
}
