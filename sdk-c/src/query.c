/* The request's query string, decoded as a form is. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes [s, s + n) into a new string: '+' a space, %XX a byte. */
static char *decode(const char *s, size_t n) {
    char *out = wk__alloc(n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '+') {
            *o++ = ' ';
        } else if (s[i] == '%' && i + 2 < n && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            *o++ = (char)(hex(s[i + 1]) * 16 + hex(s[i + 2]));
            i += 2;
        } else {
            *o++ = s[i];
        }
    }
    *o = '\0';
    return out;
}

char *wk_request_query(const wk_request *req, const char *name) {
    if (!req || !req->path || !name) return NULL;
    const char *q = strchr(req->path, '?');
    if (!q) return NULL;
    size_t want = strlen(name);
    for (const char *p = q + 1; *p;) {
        const char *end = strchr(p, '&');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        size_t key_len = eq ? (size_t)(eq - p) : len;
        char *key = decode(p, key_len);
        int match = strlen(key) == want && memcmp(key, name, want) == 0;
        free(key);
        if (match && len > 0) return eq ? decode(eq + 1, len - key_len - 1) : decode("", 0);
        if (!end) break;
        p = end + 1;
    }
    return NULL;
}
