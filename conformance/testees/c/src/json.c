/* See json.h. Strict enough for the runner's operations; not a validator. */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *p, *end;
    const char *error;
} reader;

static void *xalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) abort();
    return p;
}

static void skip_ws(reader *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
}

static bool fail(reader *r, const char *message) {
    if (!r->error) r->error = message;
    return false;
}

static bool parse_value(reader *r, json *out, int depth);

static int hex4(const char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else return -1;
    }
    return v;
}

static void put_utf8(buf *b, unsigned cp) {
    char s[4];
    size_t n;
    if (cp < 0x80) { s[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { s[0] = (char)(0xC0 | cp >> 6); s[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        s[0] = (char)(0xE0 | cp >> 12); s[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); s[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        s[0] = (char)(0xF0 | cp >> 18); s[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        s[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); s[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
    }
    buf_add(b, s, n);
}

static bool parse_string(reader *r, char **text, size_t *len) {
    r->p++; /* the opening quote */
    buf b = {0};
    buf_add(&b, "", 0);
    while (r->p < r->end && *r->p != '"') {
        char c = *r->p++;
        if (c != '\\') { buf_add(&b, &c, 1); continue; }
        if (r->p >= r->end) break;
        char e = *r->p++;
        switch (e) {
        case '"': case '\\': case '/': buf_add(&b, &e, 1); break;
        case 'b': buf_add(&b, "\b", 1); break;
        case 'f': buf_add(&b, "\f", 1); break;
        case 'n': buf_add(&b, "\n", 1); break;
        case 'r': buf_add(&b, "\r", 1); break;
        case 't': buf_add(&b, "\t", 1); break;
        case 'u': {
            int cp = r->end - r->p >= 4 ? hex4(r->p) : -1;
            if (cp < 0) { buf_free(&b); return fail(r, "invalid \\u escape"); }
            r->p += 4;
            unsigned u = (unsigned)cp;
            if (u >= 0xD800 && u < 0xDC00 && r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u') {
                int lo = hex4(r->p + 2);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    u = 0x10000 + ((u - 0xD800) << 10) + ((unsigned)lo - 0xDC00);
                    r->p += 6;
                }
            }
            put_utf8(&b, u);
            break;
        }
        default: buf_free(&b); return fail(r, "invalid escape in a string");
        }
    }
    if (r->p >= r->end) { buf_free(&b); return fail(r, "unterminated string"); }
    r->p++; /* the closing quote */
    *text = b.data;
    *len = b.len;
    return true;
}

static bool parse_container(reader *r, json *out, int depth, bool object) {
    char close = object ? '}' : ']';
    r->p++;
    size_t cap = 0;
    out->kind = object ? JSON_OBJECT : JSON_ARRAY;
    skip_ws(r);
    if (r->p < r->end && *r->p == close) { r->p++; return true; }
    for (;;) {
        if (out->n == cap) {
            cap = cap ? cap * 2 : 4;
            out->items = realloc(out->items, cap * sizeof(json));
            if (object) out->keys = realloc(out->keys, cap * sizeof(char *));
            if (!out->items || (object && !out->keys)) abort();
        }
        skip_ws(r);
        if (object) {
            size_t klen;
            if (r->p >= r->end || *r->p != '"') return fail(r, "expected a string key");
            if (!parse_string(r, &out->keys[out->n], &klen)) return false;
            skip_ws(r);
            if (r->p >= r->end || *r->p != ':') { free(out->keys[out->n]); return fail(r, "expected ':'"); }
            r->p++;
        }
        memset(&out->items[out->n], 0, sizeof(json));
        out->n++; /* counted before parsing, so json_free frees a partial item */
        if (!parse_value(r, &out->items[out->n - 1], depth + 1)) return false;
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') { r->p++; continue; }
        if (r->p < r->end && *r->p == close) { r->p++; return true; }
        return fail(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static bool parse_value(reader *r, json *out, int depth) {
    if (depth > 64) return fail(r, "nested too deeply");
    skip_ws(r);
    if (r->p >= r->end) return fail(r, "unexpected end of input");
    char c = *r->p;
    if (c == '{' || c == '[') return parse_container(r, out, depth, c == '{');
    if (c == '"') { out->kind = JSON_STRING; return parse_string(r, &out->text, &out->len); }
    if (c == '-' || (c >= '0' && c <= '9')) {
        const char *start = r->p;
        while (r->p < r->end && strchr("+-0123456789.eE", *r->p)) r->p++;
        out->kind = JSON_NUMBER;
        out->len = (size_t)(r->p - start);
        out->text = xalloc(out->len + 1);
        memcpy(out->text, start, out->len);
        out->text[out->len] = '\0';
        return true;
    }
    static const struct { const char *word; json_kind kind; bool value; } words[] = {
        {"true", JSON_BOOL, true}, {"false", JSON_BOOL, false}, {"null", JSON_NULL, false}};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i].word);
        if ((size_t)(r->end - r->p) >= n && memcmp(r->p, words[i].word, n) == 0) {
            r->p += n;
            out->kind = words[i].kind;
            out->boolean = words[i].value;
            return true;
        }
    }
    return fail(r, "unexpected character");
}

static void free_inner(json *j) {
    free(j->text);
    for (size_t i = 0; i < j->n; i++) {
        free_inner(&j->items[i]);
        if (j->keys) free(j->keys[i]);
    }
    free(j->items);
    free(j->keys);
}

json *json_parse(const char *text, size_t len, const char **error) {
    reader r = {text, text + len, NULL};
    json *j = xalloc(sizeof *j);
    memset(j, 0, sizeof *j);
    bool ok = parse_value(&r, j, 0);
    skip_ws(&r);
    if (ok && r.p != r.end) ok = fail(&r, "trailing characters after the value");
    if (!ok) {
        json_free(j);
        *error = r.error;
        return NULL;
    }
    return j;
}

void json_free(json *j) {
    if (!j) return;
    free_inner(j);
    free(j);
}

const json *json_get(const json *obj, const char *key) {
    if (!obj || obj->kind != JSON_OBJECT) return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
    return NULL;
}

void buf_add(buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1) cap *= 2;
        b->data = realloc(b->data, cap);
        if (!b->data) abort();
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void buf_puts(buf *b, const char *s) { buf_add(b, s, strlen(s)); }

void buf_printf(buf *b, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (n <= 0) return;
    char *s = xalloc((size_t)n + 1);
    va_start(args, format);
    vsnprintf(s, (size_t)n + 1, format, args);
    va_end(args);
    buf_add(b, s, (size_t)n);
    free(s);
}

void buf_json_string(buf *b, const char *s, size_t n) {
    buf_add(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"') buf_add(b, "\\\"", 2);
        else if (c == '\\') buf_add(b, "\\\\", 2);
        else if (c == '\n') buf_add(b, "\\n", 2);
        else if (c < 0x20) buf_printf(b, "\\u%04x", c);
        else buf_add(b, (const char *)&s[i], 1);
    }
    buf_add(b, "\"", 1);
}

void buf_json_real(buf *b, double r) {
    if (!isfinite(r)) { buf_puts(b, "null"); return; } /* JSON has no inf or NaN */
    char s[40];
    snprintf(s, sizeof s, "%.17g", r);
    /* The shortest of %.15g..%.17g that reads back exactly, for tidy output. */
    for (int p = 15; p < 17; p++) {
        char t[40];
        snprintf(t, sizeof t, "%.*g", p, r);
        if (strtod(t, NULL) == r) { memcpy(s, t, sizeof t); break; }
    }
    buf_puts(b, s);
    if (!strpbrk(s, ".eEn")) buf_puts(b, ".0");
}

void buf_free(buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
