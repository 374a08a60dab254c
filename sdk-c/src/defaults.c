/* Weak defaults of the events: an actor defines only the events it answers.
 * Kept apart from events.c so that no caller can inline a default. */
#include "wasmkeep.h"

__attribute__((weak)) void wk_on_init(void) {}

__attribute__((weak)) void wk_on_request(const wk_request *req, wk_responder *res) {
    (void)req;
    wk_respond_text(res, 501, "this actor answers no requests: define wk_on_request");
}

__attribute__((weak)) void wk_on_alarm(void) {}

__attribute__((weak)) void wk_on_call(const wk_address *caller, const uint8_t *payload, size_t len,
                                      wk_call_reply *reply) {
    (void)caller;
    (void)payload;
    (void)len;
    wk_reply_reject(reply, "this actor takes no calls: define wk_on_call");
}

__attribute__((weak)) void wk_on_socket_open(wk_socket_id socket, const char *path) {
    (void)socket;
    (void)path;
}

__attribute__((weak)) void wk_on_socket_message(wk_socket_id socket, const wk_message *message) {
    (void)socket;
    (void)message;
}

__attribute__((weak)) void wk_on_socket_close(wk_socket_id socket, uint16_t code, const char *reason) {
    (void)socket;
    (void)code;
    (void)reason;
}
