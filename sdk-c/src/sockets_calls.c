/* The actor's WebSockets and its calls to other actors. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int socket_result(bool ok) { return ok ? WK_OK : WK_SOCKET_NOT_OPEN; }

int wk_socket_send_text_n(wk_socket_id socket, const char *text, size_t len) {
    if (wk__outside_event("wk_socket_send_text")) return WK_SOCKET_NOT_OPEN;
    wasmkeep_actor_types_message_t m;
    m.tag = WASMKEEP_ACTOR_TYPES_MESSAGE_TEXT;
    m.val.text.ptr = (uint8_t *)text;
    m.val.text.len = len;
    wasmkeep_actor_sockets_socket_error_t e;
    return socket_result(wasmkeep_actor_sockets_send(socket, &m, &e));
}

int wk_socket_send_text(wk_socket_id socket, const char *text) {
    return wk_socket_send_text_n(socket, text, text ? strlen(text) : 0);
}

int wk_socket_send_binary(wk_socket_id socket, const void *data, size_t len) {
    if (wk__outside_event("wk_socket_send_binary")) return WK_SOCKET_NOT_OPEN;
    wasmkeep_actor_types_message_t m;
    m.tag = WASMKEEP_ACTOR_TYPES_MESSAGE_BINARY;
    m.val.binary.ptr = (uint8_t *)data;
    m.val.binary.len = len;
    wasmkeep_actor_sockets_socket_error_t e;
    return socket_result(wasmkeep_actor_sockets_send(socket, &m, &e));
}

int wk_socket_close(wk_socket_id socket, uint16_t code, const char *reason) {
    if (wk__outside_event("wk_socket_close")) return WK_SOCKET_NOT_OPEN;
    actor_string_t r = wk__str(reason);
    wasmkeep_actor_sockets_socket_error_t e;
    return socket_result(wasmkeep_actor_sockets_close(socket, code, &r, &e));
}

size_t wk_open_sockets(wk_socket_id *ids, size_t cap) {
    if (wk__outside_event("wk_open_sockets")) return 0;
    wasmkeep_actor_sockets_list_socket_id_t list;
    wasmkeep_actor_sockets_open_sockets(&list);
    size_t n = list.len;
    for (size_t i = 0; i < n && i < cap; i++) ids[i] = list.ptr[i];
    wasmkeep_actor_sockets_list_socket_id_free(&list);
    return n;
}

void wk_call_error_free(wk_call_error *err) {
    if (!err) return;
    free(err->message);
    err->kind = WK_OK;
    err->message = NULL;
}

void wk_bytes_free(wk_bytes *b) {
    if (!b) return;
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

int wk_call(const char *class_name, const char *name, const void *payload, size_t len, wk_bytes *answer,
            wk_call_error *err) {
    wasmkeep_actor_calls_address_t target = {wk__str(class_name), wk__str(name)};
    actor_list_u8_t p = {(uint8_t *)payload, len};
    actor_list_u8_t ret;
    wasmkeep_actor_calls_call_error_t e;
    if (answer) {
        answer->data = NULL;
        answer->len = 0;
    }
    if (wk__outside_event("wk_call")) {
        if (err) {
            free(err->message);
            err->kind = WK_CALL_REFUSED;
            err->message = wk__strndup("wk_call() outside an event", 26);
        }
        return WK_CALL_REFUSED;
    }
    if (wasmkeep_actor_calls_call(&target, &p, &ret, &e)) {
        if (answer) {
            answer->data = wk__take_bytes(&ret, &answer->len);
        } else {
            actor_list_u8_free(&ret);
        }
        wk_call_error_free(err);
        return WK_OK;
    }
    wk_status kind;
    actor_string_t *m;
    switch (e.tag) {
    case WASMKEEP_ACTOR_CALLS_CALL_ERROR_REFUSED: kind = WK_CALL_REFUSED; m = &e.val.refused; break;
    case WASMKEEP_ACTOR_CALLS_CALL_ERROR_REJECTED: kind = WK_CALL_REJECTED; m = &e.val.rejected; break;
    default: kind = WK_CALL_FAILED; m = &e.val.failed; break;
    }
    char *message = wk__take_cstr(m);
    if (err) {
        free(err->message);
        err->kind = kind;
        err->message = message;
    } else {
        free(message);
    }
    return kind;
}
