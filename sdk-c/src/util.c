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

void *wk__alloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        /* The event traps; the host shows this line with the trap. */
        fprintf(stderr, "wasmkeep: out of memory: allocating %zu bytes failed\n", n);
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
