/* Helpers shared by the SDK's sources (not part of the public API). */
#ifndef WASMKEEP_INTERNAL_H
#define WASMKEEP_INTERNAL_H

#include "actor.h"
#include "wasmkeep.h"

/* A borrowed C string as the bindings' string (no copy). */
actor_string_t wk__str(const char *s);

/* Takes a string the bindings allocated and returns it NUL-terminated,
 * reusing its buffer (the bindings allocate with realloc); the source is left
 * empty. Never NULL: aborts when out of memory, as the bindings do. */
char *wk__take_cstr(actor_string_t *s);

/* The same for a byte list: the bytes followed by a NUL; *len gets the length. */
uint8_t *wk__take_bytes(actor_list_u8_t *l, size_t *len);

/* A NUL-terminated copy of `len` bytes (aborts when out of memory). */
char *wk__strndup(const char *s, size_t len);

/* malloc that aborts when out of memory (a trap: the event fails cleanly). */
void *wk__alloc(size_t n);

#endif
