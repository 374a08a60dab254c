/* Helpers shared by the SDK's sources (not part of the public API). */
#ifndef WASMKEEP_INTERNAL_H
#define WASMKEEP_INTERNAL_H

#include "actor.h"
#include "wasmkeep.h"

/* A borrowed C string as the bindings' string (no copy). */
actor_string_t wk__str(const char *s);
/* Tells the host why the event is failing (context.report-failure), before
 * the SDK traps it; allocates nothing. */
void wk__report_failure(const char *message);

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

/* True while one of the actor's wk_on_* functions runs (events.c sets it
 * with wk__enter_event). A trap leaves it set, but the host never reuses an
 * instance that trapped. */
extern bool wk__in_event;

/* Host calls exist only inside an event. Outside one (a constructor,
 * __attribute__((constructor)), runs when the component is instantiated, and
 * the host does not show a failed instantiation's output) this returns true
 * and remembers `what` (the SDK function, e.g. "wk_storage_exec"): the caller
 * then does nothing and returns its failure value, and the next event fails
 * at once, printing why (wk__enter_event). */
bool wk__outside_event(const char *what);

/* What the storage functions answer outside an event: WK_SQL_NOT_ALLOWED. */
int wk__sql_outside_event(const char *what, wk_sql_error *err);

/* Called by every export before the actor's function: fails the event (the
 * message on stderr comes first in its answer, then abort) if a host call
 * was made outside an event in this instance; else sets wk__in_event. */
void wk__enter_event(void);
void wk__leave_event(void);

#endif
