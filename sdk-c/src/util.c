/* Strings, buffers and statuses shared by the SDK's sources. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *wk_version(void) { return WASMKEEP_VERSION; }

void wk_free(void *ptr) { free(ptr); }

const char *wk_status_name(int status) {
    switch (status) {
    case WK_OK: return "ok";
    case WK_SQL_NOT_ALLOWED: return "not-allowed";
    case WK_SQL_INTERNAL: return "internal";
    case WK_SQL_SQLITE: return "sqlite";
    case WK_SOCKET_NOT_OPEN: return "not-open";
    case WK_CALL_REFUSED: return "refused";
    case WK_CALL_REJECTED: return "rejected";
    case WK_CALL_FAILED: return "failed";
    case WK_ALREADY_ANSWERED: return "already-answered";
    default: return "unknown";
    }
}

bool wk__in_event;
static const char *outside_call; /* the first host call made outside an event */

#define OUTSIDE_EVENT_MESSAGE                                                                                 \
    "%s() was called outside an event, from a constructor (__attribute__((constructor))) or other code "      \
    "that runs when the component is instantiated: storage, alarms, sockets, calls and the context exist "    \
    "only while an event runs. Move it into wk_on_init (once per new actor: CREATE TABLE goes there) or into " \
    "an event handler (wk_on_request, wk_on_alarm, ...)."

bool wk__outside_event(const char *what) {
    if (wk__in_event) return false;
    if (!outside_call) outside_call = what;
    return true;
}

int wk__sql_outside_event(const char *what, wk_sql_error *err) {
    if (err) {
        int n = snprintf(NULL, 0, OUTSIDE_EVENT_MESSAGE, what);
        free(err->message);
        err->kind = WK_SQL_NOT_ALLOWED;
        err->code = 0;
        err->message = wk__alloc((size_t)(n > 0 ? n : 0) + 1);
        snprintf(err->message, (size_t)(n > 0 ? n : 0) + 1, OUTSIDE_EVENT_MESSAGE, what);
    }
    return WK_SQL_NOT_ALLOWED;
}

void wk__enter_event(void) {
    if (outside_call) {
        char message[512];
        snprintf(message, sizeof message, "every event of this actor fails: " OUTSIDE_EVENT_MESSAGE, outside_call);
        wk__report_failure(message);
        fprintf(stderr, "wasmkeep: %s\n", message);
        abort();
    }
    wk__in_event = true;
}

void wk__leave_event(void) { wk__in_event = false; }

void *wk__alloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        /* The event traps; the host shows this line with the trap. */
        char message[96];
        snprintf(message, sizeof message, "out of memory: allocating %zu bytes failed", n);
        wk__report_failure(message);
        fprintf(stderr, "wasmkeep: %s\n", message);
        abort();
    }
    return p;
}

actor_string_t wk__str(const char *s) {
    actor_string_t out;
    out.ptr = (uint8_t *)s;
    out.len = s ? strlen(s) : 0;
    return out;
}

char *wk__strndup(const char *s, size_t len) {
    char *out = wk__alloc(len + 1);
    if (len) memcpy(out, s, len);
    out[len] = '\0';
    return out;
}

uint8_t *wk__take_bytes(actor_list_u8_t *l, size_t *len) {
    size_t n = l->len;
    uint8_t *out;
    if (n == 0) {
        /* An empty list's pointer is not an allocation: nothing to reuse. */
        out = wk__alloc(1);
    } else {
        out = realloc(l->ptr, n + 1);
        if (!out) abort();
    }
    out[n] = 0;
    l->ptr = NULL;
    l->len = 0;
    if (len) *len = n;
    return out;
}

char *wk__take_cstr(actor_string_t *s) {
    actor_list_u8_t l = {s->ptr, s->len};
    s->ptr = NULL;
    s->len = 0;
    return (char *)wk__take_bytes(&l, NULL);
}
