/* The counter's test, in the C SDK's native harness (wasmkeep_harness.h):
 * a host in this process runs the built component.
 *
 *   counter_test path/to/counter-c.wasm      (make test builds and runs it) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wasmkeep_harness.h>

static int failures;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            failures++;                                                    \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

static const char *APP = "examples/counter-c";

/* Sends a request and returns "<status> <body>" in out (the test's own buffer). */
static void send(wkh_host *h, const char *name, const char *method, char *out, size_t cap) {
    wkh_response *r = wkh_request(h, APP, "counter", name, method, "/", NULL, 0, NULL, 0);
    if (!r) {
        snprintf(out, cap, "no answer: %s", wkh_last_error());
        return;
    }
    snprintf(out, cap, "%u %s", r->status, (const char *)r->body);
    wkh_response_free(r);
}

static wkh_host *start(const char *component) {
    wkh_host *h = wkh_host_new(NULL);
    if (!h) {
        fprintf(stderr, "wkh_host_new: %s\n", wkh_last_error());
        exit(1);
    }
    wkh_class counter = {"counter", component, WKH_ACCESS_OPEN};
    if (wkh_add_app(h, APP, &counter, 1) != 0) {
        fprintf(stderr, "wkh_add_app: %s\n", wkh_last_error());
        exit(1);
    }
    return h;
}

static void counts_reads_and_deletes(const char *component) {
    wkh_host *h = start(component);
    char got[256];
    send(h, "visits", "GET", got, sizeof got);
    CHECK(strcmp(got, "200 0") == 0, "%s", got);
    send(h, "visits", "POST", got, sizeof got);
    CHECK(strcmp(got, "200 1") == 0, "%s", got);
    send(h, "visits", "POST", got, sizeof got);
    CHECK(strcmp(got, "200 2") == 0, "%s", got);

    wkh_table *t = wkh_table_read(h, APP, "counter", "visits", "counter");
    CHECK(t != NULL, "%s", wkh_last_error());
    if (t) {
        CHECK(t->row_count == 1 && t->column_count == 2, "%zu rows, %zu columns", t->row_count, t->column_count);
        CHECK(strcmp(t->columns[1], "n") == 0 && t->values[1].kind == WKH_VALUE_KIND_INTEGER &&
                  t->values[1].integer == 2,
              "the row is (1, 2)");
        wkh_table_free(t);
    }
    send(h, "other", "GET", got, sizeof got);
    CHECK(strcmp(got, "200 0") == 0, "each counter is its own actor: %s", got);

    send(h, "visits", "DELETE", got, sizeof got);
    CHECK(strcmp(got, "200 deleted") == 0, "%s", got);
    CHECK(wkh_exists(h, APP, "counter", "visits") == 0, "the counter is gone");
    send(h, "visits", "GET", got, sizeof got);
    CHECK(strcmp(got, "200 0") == 0, "the next request meets a new counter: %s", got);
    wkh_host_free(h);
}

static void failed_durable_delete_answers_500(const char *component) {
    wkh_host *h = start(component);
    char got[512];
    send(h, "f", "POST", got, sizeof got);
    CHECK(wkh_arm_fault(h, "fail-removal", 1) == 0, "%s", wkh_last_error());
    send(h, "f", "DELETE", got, sizeof got);
    CHECK(strncmp(got, "500 internal: ", 14) == 0, "%s", got);
    send(h, "f", "GET", got, sizeof got);
    CHECK(strcmp(got, "200 0") == 0, "the end of the event removed the files: a new counter: %s", got);
    CHECK(wkh_arm_fault(h, "no-such-fault", 1) == -1 && strstr(wkh_last_error(), "fail-removal"),
          "an unknown fault is refused, naming the known ones");
    wkh_host_free(h);
}

static void other_methods_are_refused(const char *component) {
    wkh_host *h = start(component);
    char got[256];
    send(h, "m", "PUT", got, sizeof got);
    CHECK(strncmp(got, "405 ", 4) == 0, "%s", got);
    wkh_host_free(h);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s path/to/counter-c.wasm\n", argv[0]);
        return 2;
    }
    counts_reads_and_deletes(argv[1]);
    failed_durable_delete_answers_500(argv[1]);
    other_methods_are_refused(argv[1]);
    if (failures) {
        fprintf(stderr, "counter_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("counter_test: 3 tests passed (harness %s)\n", wkh_version());
    return 0;
}
