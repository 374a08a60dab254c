/* A small JSON reader (to a tree) and writer (to a growing buffer): what the
 * testee needs to read the runner's operations and answer their outcomes. */
#ifndef TESTEE_JSON_H
#define TESTEE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_kind;

typedef struct json {
    json_kind kind;
    bool boolean;
    /* JSON_NUMBER: its text as written (exact integers survive); JSON_STRING:
     * the decoded UTF-8, NUL-terminated, `len` bytes. */
    char *text;
    size_t len;
    /* JSON_ARRAY, JSON_OBJECT: `n` items (and their keys, for objects). */
    struct json *items;
    char **keys;
    size_t n;
} json;

/* Parses `len` bytes; returns a tree to free with json_free, or NULL with a
 * message in *error (static text). */
json *json_parse(const char *text, size_t len, const char **error);
void json_free(json *j);

/* The member `key` of an object, or NULL. */
const json *json_get(const json *obj, const char *key);

/* A growing text buffer (always NUL-terminated). */
typedef struct buf {
    char *data;
    size_t len, cap;
} buf;

void buf_add(buf *b, const char *s, size_t n);
void buf_puts(buf *b, const char *s);
void buf_printf(buf *b, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* Appends `n` bytes as a JSON string literal (quotes and escapes added). */
void buf_json_string(buf *b, const char *s, size_t n);
/* Appends a double as a JSON number that reads back as a real (1 -> 1.0). */
void buf_json_real(buf *b, double r);
void buf_free(buf *b);

#endif
