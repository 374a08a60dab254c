/* Alarms, the actor's context (address, app, clock, log) and its previous deletion. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "internal.h"

bool wk_alarm_get(uint64_t *at) {
    if (wk__outside_event("wk_alarm_get")) {
        if (at) *at = 0;
        return false;
    }
    uint64_t t = 0;
    bool pending = wasmkeep_actor_alarms_get_alarm(&t);
    if (at) *at = pending ? t : 0;
    return pending;
}

void wk_alarm_set(uint64_t at) {
    if (wk__outside_event("wk_alarm_set")) return;
    wasmkeep_actor_alarms_set_alarm(at);
}

void wk_alarm_clear(void) {
    if (wk__outside_event("wk_alarm_clear")) return;
    wasmkeep_actor_alarms_clear_alarm();
}

/* An instance serves one actor: its address and app are asked once. */
static char *self_class, *self_name, *self_app;

static bool load_self(const char *what) {
    if (self_class) return true;
    if (wk__outside_event(what)) return false;
    wasmkeep_actor_context_address_t a;
    wasmkeep_actor_context_self_address(&a);
    self_class = wk__take_cstr(&a.class_);
    self_name = wk__take_cstr(&a.name);
    return true;
}

const char *wk_self_class(void) {
    return load_self("wk_self_class") ? self_class : "";
}

const char *wk_self_name(void) {
    return load_self("wk_self_name") ? self_name : "";
}

const char *wk_app(void) {
    if (!self_app) {
        if (wk__outside_event("wk_app")) return "";
        actor_string_t s;
        wasmkeep_actor_context_app(&s);
        self_app = wk__take_cstr(&s);
    }
    return self_app;
}

uint64_t wk_now(void) {
    if (wk__outside_event("wk_now")) return 0;
    return wasmkeep_actor_context_now();
}

void wk_log(wk_log_level level, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (n < 0) return; /* a bad format: nothing sensible to log */
    char *line = wk__alloc((size_t)n + 1);
    va_start(args, format);
    vsnprintf(line, (size_t)n + 1, format, args);
    va_end(args);
    if (!wk__in_event) {
        /* No host log outside an event: stderr (the failed event's answer shows it). */
        fprintf(stderr, "wasmkeep: log outside an event: %s\n", line);
        free(line);
        return;
    }
    actor_string_t text = {(uint8_t *)line, (size_t)n};
    wasmkeep_actor_context_log((wasmkeep_actor_context_log_level_t)level, &text);
    free(line);
}

void wk__report_failure(const char *message) {
    /* A string passed to the host is read in place: reporting allocates
     * nothing, so it works when memory ran out. */
    wasmkeep_actor_context_failure_report_t report = {
        .message = {(uint8_t *)message, strlen(message)},
        .detail = {(uint8_t *)"", 0},
    };
    wasmkeep_actor_context_report_failure(&report);
}

void wk_fail(const char *format, ...) {
    char fixed[1024];
    va_list args;
    va_start(args, format);
    int n = vsnprintf(fixed, sizeof fixed, format, args);
    va_end(args);
    char *message = fixed;
    if (n >= (int)sizeof fixed) {
        /* Longer than the buffer: format it again whole, if memory allows. */
        char *whole = malloc((size_t)n + 1);
        if (whole) {
            va_start(args, format);
            vsnprintf(whole, (size_t)n + 1, format, args);
            va_end(args);
            message = whole;
        }
    } else if (n < 0) {
        message = "wk_fail: the message's format is not valid";
    }
    wk__report_failure(message);
    /* Also on stderr, which `wasmkeep-shim serve` shows in its log. */
    fprintf(stderr, "wasmkeep: the event failed: %s\n", message);
    abort();
}

const char *wk_deletion_cause_name(wk_deletion_cause cause) {
    switch (cause) {
    case WK_DELETED_BY_DELETE_SELF: return "delete-self";
    case WK_DELETED_BY_DELETE_SELF_DURABLE: return "delete-self-durable";
    case WK_DELETED_BY_OPERATOR: return "operator";
    case WK_DELETED_BY_EXPIRY: return "expired";
    default: return "unknown";
    }
}

bool wk_previous_deletion(uint64_t *at, wk_deletion_cause *cause) {
    if (wk__outside_event("wk_previous_deletion")) {
        if (at) *at = 0;
        if (cause) *cause = WK_DELETED_BY_DELETE_SELF;
        return false;
    }
    wasmkeep_actor_context_deletion_t d;
    bool some = wasmkeep_actor_context_previous_deletion(&d);
    if (at) *at = some ? d.at : 0;
    if (cause) *cause = some ? (wk_deletion_cause)d.cause : WK_DELETED_BY_DELETE_SELF;
    return some;
}
