/* The SDK's answers to mistakes, against the guest in this directory
 * (actor.c: a constructor that uses storage). Run by sdk-c/scripts/test.sh:
 *
 *   misuse_test path/to/sdk-c-misuse.wasm */
#include <stdio.h>
#include <string.h>
#include <wasmkeep_harness.h>

#include "../check.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: misuse_test <sdk-c-misuse.wasm>\n");
        return 2;
    }
    wkh_host *h = wkh_host_new(NULL);
    wkh_class c = {"misuse", argv[1], WKH_ACCESS_OPEN};
    if (!h || wkh_add_app(h, "tests/misuse", &c, 1) != 0) {
        fprintf(stderr, "%s\n", wkh_last_error());
        return 1;
    }
    /* Storage in a constructor: every event fails, and its answer says why first. */
    for (int i = 0; i < 2; i++) {
        wkh_response *r = wkh_request(h, "tests/misuse", "misuse", "a", "GET", "/", NULL, 0, NULL, 0);
        CHECK(r != NULL, "%s", wkh_last_error());
        if (!r) break;
        const char *body = (const char *)r->body;
        CHECK(r->status == 500, "status %u: %s", r->status, body);
        static const char want[] =
            "every event of this actor fails: wk_storage_exec() was called outside an event, from a constructor";
        const char *at = strstr(body, want);
        CHECK(at != NULL, "the SDK's message: %s", body);
        CHECK(strstr(body, "Move it into wk_on_init") && strstr(body, "or into an event handler"), "%s", body);
        CHECK(at && !strstr(at + strlen(want), "was called outside an event"), "the message is there once: %s", body);
        wkh_response_free(r);
    }
    struct wkh_table *t = wkh_table_read(h, "tests/misuse", "misuse", "a", "made_by_a_constructor");
    CHECK(t == NULL, "the constructor created no table");
    wkh_table_free(t);
    wkh_host_free(h);
    if (failures) {
        fprintf(stderr, "misuse_test: %d check(s) failed\n", failures);
        return 1;
    }
    puts("misuse_test: ok");
    return 0;
}
