/* The harness's own tests: every part of wasmkeep_harness.h against the C
 * conformance testee (which answers operations sent as JSON; see
 * conformance/PROTOCOL.md). Run by sdk-c/scripts/test.sh, also under valgrind.
 *
 *   harness_test path/to/conformance-testee-c.wasm */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wasmkeep_harness.h>

#include "check.h"

static const char *APP = "tests/harness";

/* POSTs `ops` (a JSON array) to actor t/<name>; returns the body (caller frees). */
static char *ops(wkh_host *h, const char *name, const char *list, unsigned *status) {
    char body[2048];
    snprintf(body, sizeof body, "{\"ops\": %s}", list);
    wkh_header ct = {"content-type", "application/json"};
    wkh_response *r = wkh_request(h, APP, "t", name, "POST", "/ops", &ct, 1, (const uint8_t *)body, strlen(body));
    if (!r) {
        fprintf(stderr, "request: %s\n", wkh_last_error());
        exit(1);
    }
    *status = r->status;
    char *text = strdup((const char *)r->body);
    const char *type = wkh_response_header(r, "Content-Type");
    CHECK(type && strcmp(type, "application/json") == 0, "content-type %s", type ? type : "(none)");
    wkh_response_free(r);
    return text;
}

static void requests_and_tables(wkh_host *h) {
    unsigned status;
    char *out = ops(h, "a",
                    "[{\"op\":\"exec\",\"sql\":\"CREATE TABLE v(i, r, t, b, n)\"},"
                    "{\"op\":\"exec\",\"sql\":\"INSERT INTO v VALUES (-7, 2.5, 'grüße', x'00ff', NULL)\"}]",
                    &status);
    CHECK(status == 200 && strstr(out, "{\"ok\":{\"changed\":1}}"), "%u %s", status, out);
    free(out);
    wkh_table *t = wkh_table_read(h, APP, "t", "a", "v");
    CHECK(t && t->row_count == 1 && t->column_count == 5, "%s", t ? "shape" : wkh_last_error());
    if (t) {
        const wkh_value *v = t->values;
        CHECK(v[0].kind == WKH_VALUE_KIND_INTEGER && v[0].integer == -7, "integer");
        CHECK(v[1].kind == WKH_VALUE_KIND_REAL && v[1].real == 2.5, "real");
        CHECK(v[2].kind == WKH_VALUE_KIND_TEXT && strcmp((const char *)v[2].data, "grüße") == 0, "text");
        CHECK(v[3].kind == WKH_VALUE_KIND_BLOB && v[3].len == 2 && v[3].data[1] == 0xff, "blob");
        CHECK(v[4].kind == WKH_VALUE_KIND_NULL, "null");
        wkh_table_free(t);
    }
    CHECK(wkh_table_read(h, APP, "t", "a", "nope") == NULL && strstr(wkh_last_error(), "init_log"),
          "a missing table names the tables: %s", wkh_last_error());
    CHECK(wkh_request(h, APP, "nope", "a", "GET", "/", NULL, 0, NULL, 0) == NULL &&
              strstr(wkh_last_error(), "no class"),
          "an unknown class is refused: %s", wkh_last_error());
}

static void clock_and_alarms(wkh_host *h) {
    unsigned status;
    uint64_t start = wkh_now(h);
    char *out = ops(h, "alarm", "[{\"op\":\"set-alarm\",\"in\":\"60000\"}]", &status);
    free(out);
    CHECK(wkh_run_due_alarms(h) == 0, "not due yet");
    CHECK(wkh_advance_clock(h, 60000) == start + 60000, "the clock moved");
    CHECK(wkh_run_due_alarms(h) == 1, "one alarm ran");
    wkh_table *t = wkh_table_read(h, APP, "t", "alarm", "alarm_log");
    CHECK(t && t->row_count == 1, "%s", t ? "one alarm_log row" : wkh_last_error());
    wkh_table_free(t);
}

static void sockets(wkh_host *h) {
    uint64_t id = wkh_socket_open(h, APP, "t", "s", "/chat");
    CHECK(id != 0, "%s", wkh_last_error());
    CHECK(wkh_socket_send_text(h, id, "echo:hi") == 0, "%s", wkh_last_error());
    uint8_t bytes[] = {1, 2};
    CHECK(wkh_socket_send_binary(h, id, bytes, 2) == 0, "%s", wkh_last_error());
    wkh_settle(h, APP, "t", "s");
    wkh_outbound *o = wkh_socket_take(h, id);
    CHECK(o && o->kind == WKH_OUTBOUND_KIND_TEXT && strcmp((const char *)o->data, "hi") == 0, "echo");
    wkh_outbound_free(o);
    CHECK(wkh_socket_take(h, id) == NULL, "nothing else");
    CHECK(wkh_socket_close(h, id, 4000, "bye") == 0, "%s", wkh_last_error());
    wkh_settle(h, APP, "t", "s");
    wkh_table *t = wkh_table_read(h, APP, "t", "s", "socket_log");
    CHECK(t && t->row_count == 4, "open, message, message, close: %zu rows", t ? t->row_count : 0);
    wkh_table_free(t);
    CHECK(wkh_socket_take(h, 999999) == NULL && strstr(wkh_last_error(), "999999"), "unknown socket");
}

static void calls_faults_and_listings(wkh_host *h) {
    const char *payload = "{\"ops\":[{\"op\":\"self\"}]}";
    wkh_call_result *c = wkh_call(h, APP, "t", "callee", (const uint8_t *)payload, strlen(payload));
    CHECK(c && c->status == WKH_CALL_STATUS_OK && strstr((const char *)c->data, "\"name\":\"callee\""), "%s",
          c ? (const char *)c->data : wkh_last_error());
    wkh_call_result_free(c);
    c = wkh_call(h, APP, "t", "callee", (const uint8_t *)"not json", 8);
    CHECK(c && c->status == WKH_CALL_STATUS_REJECTED, "a bad payload is rejected");
    wkh_call_result_free(c);

    unsigned status;
    CHECK(wkh_arm_fault(h, "fail-removal", 1) == 0, "%s", wkh_last_error());
    char *out = ops(h, "d", "[{\"op\":\"delete-self-durable\"},{\"op\":\"log\",\"message\":\"after\"}]", &status);
    CHECK(strstr(out, "\"kind\":\"internal\""), "%s", out);
    free(out);
    CHECK(wkh_clear_faults(h) == 0, "cleared");
    CHECK(wkh_exists(h, APP, "t", "d") == 0, "the end of the event removed the files");

    char *actors = wkh_actors_json(h);
    CHECK(actors && strstr(actors, "\"name\":\"callee\""), "%s", actors);
    wkh_string_free(actors);
    char *logs = wkh_logs_json(h);
    CHECK(logs && strstr(logs, "after"), "%s", logs);
    wkh_string_free(logs);
    char *metrics = wkh_metrics(h);
    CHECK(metrics && strstr(metrics, "wasmkeep_events_total"), "metrics");
    wkh_string_free(metrics);
    char *dir = wkh_data_dir(h);
    CHECK(dir && dir[0] == '/', "%s", dir);
    wkh_string_free(dir);
    CHECK(wkh_hibernate_all(h) == 0, "hibernate");
    out = ops(h, "a", "[{\"op\":\"query\",\"sql\":\"SELECT count(*) FROM v\"}]", &status);
    CHECK(strstr(out, "\"integer\":\"1\""), "an actor wakes from its files: %s", out);
    free(out);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s path/to/conformance-testee-c.wasm\n", argv[0]);
        return 2;
    }
    wkh_host *h = wkh_host_new(NULL);
    if (!h) {
        fprintf(stderr, "wkh_host_new: %s\n", wkh_last_error());
        return 1;
    }
    wkh_class t = {"t", argv[1], WKH_ACCESS_OPEN};
    if (wkh_add_app(h, APP, &t, 1) != 0) {
        fprintf(stderr, "wkh_add_app: %s\n", wkh_last_error());
        return 1;
    }
    wkh_class bad = {"x", "/no/such/component.wasm", WKH_ACCESS_OPEN};
    CHECK(wkh_add_app(h, "tests/bad", &bad, 1) == -1 && strstr(wkh_last_error(), "component.wasm"), "%s",
          wkh_last_error());
    requests_and_tables(h);
    clock_and_alarms(h);
    sockets(h);
    calls_faults_and_listings(h);
    wkh_host_free(h);
    if (failures) {
        fprintf(stderr, "harness_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("harness_test: requests, tables, clock, alarms, sockets, calls, faults, listings passed (harness %s)\n",
           wkh_version());
    return 0;
}
