/* The harness's own tests: every part of wasmkeep_harness.h against the C
 * conformance testee (which answers operations sent as JSON; see
 * conformance/PROTOCOL.md). Run by sdk-c/scripts/test.sh, also under valgrind.
 *
 *   harness_test path/to/conformance-testee-c.wasm */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* dup, dup2 */
#include <wasmkeep_harness.h>

#include "check.h"

static const char *APP = "tests/harness";

/* A failed call is checked by its kind (wkh_last_error_kind), not by the
 * words of its message: the message is for people and may be reworded. */
static int last_kind_is(const char *want) {
    const char *kind = wkh_last_error_kind();
    return kind && strcmp(kind, want) == 0;
}

/* The last kind, for a failed check's message. */
static const char *last_kind(void) {
    const char *kind = wkh_last_error_kind();
    return kind ? kind : "(no kind)";
}

/* Whether the C layer refused an argument itself: a message and no kind (the
 * header's contract). Call wkh_clear_last_error before the call. */
static int refused_by_the_c_layer(void) {
    return wkh_last_error() != NULL && wkh_last_error_kind() == NULL;
}

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
    /* The testee answers JSON; under chaos an answer may be lost (the host's 503). */
    CHECK(r->status != 200 || (type && strcmp(type, "application/json") == 0), "content-type %s",
          type ? type : "(none)");
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
    /* The harness's own refusal, without a kind: its message lists the tables there are (a table name, not words). */
    CHECK(wkh_table_read(h, APP, "t", "a", "nope") == NULL && strstr(wkh_last_error(), "init_log"),
          "a missing table names the tables: %s", wkh_last_error());
    CHECK(wkh_request(h, APP, "nope", "a", "GET", "/", NULL, 0, NULL, 0) == NULL && last_kind_is("no-such-class"),
          "an unknown class is refused: %s: %s", last_kind(), wkh_last_error());
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
    wkh_clear_last_error();
    CHECK(wkh_socket_take(h, 999999) == NULL && last_kind_is("no-such-socket"), "an unknown socket: %s: %s",
          last_kind(), wkh_last_error() ? wkh_last_error() : "(no error)");
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

/* The text `ops` answers when sent to node `node` (0: wkh_request). */
static char *ops_on(wkh_host *h, unsigned node, const char *name, const char *list, unsigned *status) {
    char body[2048];
    snprintf(body, sizeof body, "{\"ops\": %s}", list);
    wkh_header ct = {"content-type", "application/json"};
    wkh_response *r = node ? wkh_request_on(h, node, APP, "t", name, "POST", "/ops", &ct, 1, (const uint8_t *)body,
                                            strlen(body))
                           : wkh_request(h, APP, "t", name, "POST", "/ops", &ct, 1, (const uint8_t *)body, strlen(body));
    if (!r) {
        *status = 0;
        return strdup(wkh_last_error());
    }
    *status = r->status;
    char *text = strdup((const char *)r->body);
    wkh_response_free(r);
    return text;
}

/* What `f(h)` wrote to stderr (fd 2), into out. */
static void capture_stderr(void (*f)(wkh_host *), wkh_host *h, char *out, size_t cap) {
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    if (saved < 0 || !tmp) {
        snprintf(out, cap, "(could not capture stderr)");
        return;
    }
    dup2(fileno(tmp), 2);
    f(h);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(out, 1, cap - 1, tmp);
    out[n] = 0;
    fclose(tmp);
}

static void log_then_trap(wkh_host *h) {
    unsigned status;
    char *out = ops_on(h, 0, "trapper", "[{\"op\":\"log\",\"message\":\"about to trap\"},{\"op\":\"trap\"}]", &status);
    CHECK(status == 500, "a trap answers 500: %u %s", status, out);
    free(out);
}

static void failures_print_the_actors_logs(wkh_host *h) {
    char err[4096];
    capture_stderr(log_then_trap, h, err, sizeof err);
    CHECK(strstr(err, "tests/harness:t/trapper answered 500") && strstr(err, "about to trap"),
          "an answer >= 500 prints what the actor logged: %s", err);
    setenv("WASMKEEP_HARNESS_QUIET", "1", 1);
    capture_stderr(log_then_trap, h, err, sizeof err);
    unsetenv("WASMKEEP_HARNESS_QUIET");
    CHECK(err[0] == 0, "WASMKEEP_HARNESS_QUIET=1 prints nothing: %s", err);
}

static void restart_and_operator_delete(wkh_host *h) {
    unsigned status;
    char *out = ops(h, "r", "[{\"op\":\"exec\",\"sql\":\"CREATE TABLE k(x)\"},{\"op\":\"exec\",\"sql\":\"INSERT INTO k VALUES (1)\"}]",
                    &status);
    free(out);
    CHECK(wkh_restart(h, APP, "t", "r") == 0, "%s", wkh_last_error());
    out = ops(h, "r", "[{\"op\":\"query\",\"sql\":\"SELECT count(*) FROM k\"}]", &status);
    CHECK(status == 200 && strstr(out, "\"integer\":\"1\""), "a restarted actor recovers from its database: %s", out);
    free(out);

    wkh_admin_deleted done = WKH_ADMIN_DELETED_ABSENT;
    CHECK(wkh_operator_delete(h, APP, "t", "r", &done) == 0 && done == WKH_ADMIN_DELETED_DELETED, "%s",
          wkh_last_error());
    CHECK(wkh_exists(h, APP, "t", "r") == 0, "deleted");
    CHECK(wkh_operator_delete(h, APP, "t", "r", &done) == 0 && done == WKH_ADMIN_DELETED_ABSENT, "absent");
    CHECK(wkh_operator_delete(h, APP, "t", "r", NULL) == 0, "the outcome may be NULL");
    wkh_deletion *d = wkh_deletion_status(h, APP, "t", "r");
    CHECK(d && d->kind == WKH_DELETION_KIND_DELETED && d->how && strcmp(d->how, "operator") == 0 && d->at_ms > 0 &&
              !d->reason,
          "%s", d ? (d->how ? d->how : "(no how)") : wkh_last_error());
    wkh_deletion_free(d);
    d = wkh_deletion_status(h, APP, "t", "never");
    CHECK(d && d->kind == WKH_DELETION_KIND_NOT_DELETED && !d->how && !d->reason, "never existed: not deleted");
    wkh_deletion_free(d);
    out = ops(h, "r", "[{\"op\":\"previous-deletion\"}]", &status);
    CHECK(strstr(out, "\"cause\":\"operator\""), "the next actor there sees the operator's delete: %s", out);
    free(out);
}

static void single_node_refuses_cluster_verbs(wkh_host *h) {
    CHECK(wkh_cut_off(h, 1) == -1 && last_kind_is("needs-cluster"), "%s: %s", last_kind(), wkh_last_error());
    CHECK(wkh_request_operator_delete(h, APP, "t", "a") == NULL && last_kind_is("needs-cluster"), "%s: %s",
          last_kind(), wkh_last_error());
    CHECK(wkh_delete_app(h, APP) == -1 && last_kind_is("needs-cluster"), "%s: %s", last_kind(), wkh_last_error());
    CHECK(wkh_request_on(h, 2, APP, "t", "a", "GET", "/", NULL, 0, NULL, 0) == NULL && last_kind_is("no-such-node"),
          "%s: %s", last_kind(), wkh_last_error());
    CHECK(wkh_run_expiry_passes(h) == 0, "no expiry on one node");
}

static void null_arguments_are_refused(void) {
    wkh_clear_last_error();
    CHECK(wkh_restart(NULL, APP, "t", "a") == -1 && refused_by_the_c_layer(), "restart: %s", last_kind());
    CHECK(wkh_operator_delete(NULL, APP, "t", "a", NULL) == -1, "operator delete");
    CHECK(wkh_deletion_status(NULL, APP, "t", "a") == NULL, "deletion status");
    wkh_clear_last_error();
    CHECK(wkh_reset(NULL) == -1 && refused_by_the_c_layer(), "reset: %s", last_kind());
    CHECK(wkh_cut_off(NULL, 1) == -1, "cut off");
    CHECK(wkh_request_on(NULL, 1, APP, "t", "a", "GET", "/", NULL, 0, NULL, 0) == NULL, "request on");
    CHECK(wkh_request_operator_delete(NULL, APP, "t", "a") == NULL, "request operator delete");
    CHECK(wkh_set_expire_after_idle(NULL, APP, "t", 0) == -1, "expire after idle");
    wkh_clear_last_error();
    CHECK(wkh_run_expiry_passes(NULL) == 0 && refused_by_the_c_layer(), "expiry passes: %s", last_kind());
    CHECK(wkh_delete_app(NULL, APP) == -1, "delete app");
    CHECK(wkh_chaos_start(NULL, 1) == -1, "chaos start");
    CHECK(wkh_chaos_end(NULL) == NULL, "chaos end");
    wkh_clear_last_error();
    CHECK(wkh_run_chaos(NULL, 0, 1, NULL, NULL) == NULL && refused_by_the_c_layer(), "run chaos: %s", last_kind());
    wkh_clear_last_error();
    CHECK(wkh_run_chaos_seeds(NULL, NULL, 0, NULL, NULL) == NULL && refused_by_the_c_layer(), "run chaos seeds: %s",
          last_kind());
    wkh_deletion_free(NULL);
    wkh_chaos_result_free(NULL);
}

/* Run last on the single host: a reset forgets everything, sockets included. */
static void reset_starts_over(wkh_host *h) {
    uint64_t start_clock = wkh_now(h);
    wkh_advance_clock(h, 5000);
    uint64_t id = wkh_socket_open(h, APP, "t", "s2", "/chat");
    CHECK(id != 0, "%s", wkh_last_error());
    CHECK(wkh_arm_fault(h, "fail-removal", 1) == 0, "armed");
    CHECK(wkh_reset(h) == 0, "%s", wkh_last_error());
    wkh_clear_last_error();
    CHECK(wkh_socket_take(h, id) == NULL && last_kind_is("no-such-socket"), "the socket is gone: %s: %s", last_kind(),
          wkh_last_error() ? wkh_last_error() : "(no error)");
    CHECK(wkh_exists(h, APP, "t", "a") == 0 && wkh_exists(h, APP, "t", "s2") == 0, "no actor is left");
    CHECK(wkh_now(h) == start_clock, "the clock is back at its start");
    char *logs = wkh_logs_json(h);
    CHECK(logs && strcmp(logs, "[]") == 0, "no log line is left: %s", logs);
    wkh_string_free(logs);
    unsigned status;
    char *out = ops(h, "d2", "[{\"op\":\"delete-self-durable\"}]", &status);
    CHECK(strstr(out, "{\"ok\":null}"), "the fault armed before is gone: %s", out);
    free(out);
    out = ops(h, "a", "[{\"op\":\"now\"}]", &status);
    CHECK(status == 200, "the app is loaded again: %u %s", status, out);
    free(out);
}

static int32_t chaos_body(wkh_host *h, uint64_t seed, void *ctx, char *message, size_t cap);

static void cluster(const char *testee) {
    wkh_host_options o = {0};
    o.nodes = 2;
    wkh_host *h = wkh_host_new(&o);
    CHECK(h != NULL, "%s", wkh_last_error());
    if (!h) return;
    wkh_class t = {"t", testee, WKH_ACCESS_OPEN};
    CHECK(wkh_add_app(h, APP, &t, 1) == 0, "%s", wkh_last_error());
    unsigned status;
    char *out = ops_on(h, 1, "c",
                       "[{\"op\":\"exec\",\"sql\":\"CREATE TABLE k(x)\"},{\"op\":\"exec\",\"sql\":\"INSERT INTO k VALUES (7)\"}]",
                       &status);
    CHECK(status == 200, "%u %s", status, out);
    free(out);
    out = ops_on(h, 2, "c", "[{\"op\":\"query\",\"sql\":\"SELECT x FROM k\"}]", &status);
    CHECK(status == 200 && strstr(out, "\"integer\":\"7\""), "node 2 forwards to the holder: %s", out);
    free(out);
    CHECK(wkh_request_on(h, 3, APP, "t", "c", "GET", "/", NULL, 0, NULL, 0) == NULL && last_kind_is("no-such-node"),
          "%s: %s", last_kind(), wkh_last_error());
    CHECK(wkh_cut_off(h, 3) == -1 && last_kind_is("no-such-node"), "%s: %s", last_kind(), wkh_last_error());
    wkh_deletion *d = wkh_deletion_status(h, APP, "t", "c");
    CHECK(d && d->kind == WKH_DELETION_KIND_NOT_DELETED, "%s", d ? "kind" : wkh_last_error());
    wkh_deletion_free(d);
    char *id = wkh_request_operator_delete(h, APP, "t", "c");
    CHECK(id && id[0], "%s", id ? "empty id" : wkh_last_error());
    wkh_string_free(id);
    d = wkh_deletion_status(h, APP, "t", "c");
    CHECK(d && d->kind == WKH_DELETION_KIND_DELETED && d->how && strcmp(d->how, "operator") == 0, "%s",
          d && d->how ? d->how : "not deleted");
    wkh_deletion_free(d);
    out = ops_on(h, 2, "c", "[{\"op\":\"query\",\"sql\":\"SELECT name FROM sqlite_master WHERE name = 'k'\"}]", &status);
    CHECK(status == 200 && strstr(out, "\"rows\":[]"), "the next request meets a new actor: %s", out);
    free(out);

    CHECK(wkh_set_expire_after_idle(h, APP, "t", 60000) == -1 && last_kind_is("bad-argument"),
          "a limit below an hour: %s: %s", last_kind(), wkh_last_error());
    CHECK(wkh_set_expire_after_idle(h, APP, "t", 3600000) == 0, "%s", wkh_last_error());
    out = ops_on(h, 1, "idle", "[{\"op\":\"exec\",\"sql\":\"CREATE TABLE k(x)\"}]", &status);
    free(out);
    CHECK(wkh_hibernate_all(h) == 0, "hibernate");
    CHECK(wkh_exists(h, APP, "t", "idle") == 1, "it exists before");
    wkh_advance_clock(h, 2 * 3600 * 1000);
    (void)wkh_run_expiry_passes(h); /* the moving clock ran one already */
    CHECK(wkh_exists(h, APP, "t", "idle") == 0, "an actor idle past its limit is collected");
    CHECK(wkh_set_expire_after_idle(h, APP, "t", 0) == 0, "0 removes the limit: %s", wkh_last_error());

    CHECK(wkh_delete_app(h, APP) == 0, "%s", wkh_last_error());
    CHECK(wkh_request_on(h, 2, APP, "t", "after", "GET", "/", NULL, 0, NULL, 0) == NULL && last_kind_is("no-such-app"),
          "a deleted app is served no more: %s: %s", last_kind(), wkh_last_error());
    /* A reset keeps the options: still two nodes, the app loaded again. */
    CHECK(wkh_reset(h) == 0, "%s", wkh_last_error());
    out = ops_on(h, 1, "c",
                 "[{\"op\":\"exec\",\"sql\":\"CREATE TABLE k(x)\"},{\"op\":\"exec\",\"sql\":\"INSERT INTO k VALUES (8)\"}]",
                 &status);
    CHECK(status == 200, "after the reset, the app is served again: %u %s", status, out);
    free(out);
    CHECK(wkh_cut_off(h, 1) == 0, "%s", wkh_last_error());
    out = ops_on(h, 2, "c", "[{\"op\":\"query\",\"sql\":\"SELECT x FROM k\"}]", &status);
    CHECK(status == 200 && strstr(out, "\"rows\":[[{\"integer\":\"8\"}]]"), "node 2 takes over from the bucket: %s", out);
    free(out);

    /* Chaos on a cluster: each seed resets both nodes, and its schedule names the node of each step. */
    wkh_chaos_result *r = wkh_run_chaos(h, 0, 10, chaos_body, NULL);
    CHECK(r && !r->failed && r->ran == 10, "%s", r ? (r->report ? r->report : "ran") : wkh_last_error());
    wkh_chaos_result_free(r);
    CHECK(wkh_chaos_start(h, 3) == 0, "%s", wkh_last_error());
    for (int i = 0; i < 30; i++) free(ops_on(h, 0, "c", "[{\"op\":\"now\"}]", &status));
    char *schedule = wkh_chaos_end(h);
    CHECK(schedule && strstr(schedule, " on node "), "%s", schedule);
    wkh_string_free(schedule);

    wkh_host_free(h);
}

/* A chaos body: a few events; fails under the seed in ctx (if any). */
static int32_t chaos_body(wkh_host *h, uint64_t seed, void *ctx, char *message, size_t cap) {
    unsigned status;
    char *out = ops_on(h, 0, "x", "[{\"op\":\"exec\",\"sql\":\"CREATE TABLE IF NOT EXISTS k(x)\"}]", &status);
    free(out);
    out = ops_on(h, 0, "x", "[{\"op\":\"delete-self-durable\"}]", &status);
    free(out);
    const uint64_t *fail_at = ctx;
    if (fail_at && seed == *fail_at) {
        snprintf(message, cap, "seed %llu fails on purpose", (unsigned long long)seed);
        return 1;
    }
    return 0;
}

static int32_t silent_failure(wkh_host *h, uint64_t seed, void *ctx, char *message, size_t cap) {
    (void)h, (void)seed, (void)ctx, (void)message, (void)cap;
    return 3;
}

/* A body for wkh_run_chaos_seeds: notes each seed it runs; fails under
 * `fail_at`, with `message` (any length) when there is one. */
struct listed {
    uint64_t seen[16];
    size_t n;
    uint64_t fail_at;
    const char *message;
};

static int32_t listed_body(wkh_host *h, uint64_t seed, void *ctx, wkh_chaos_message *message) {
    (void)h;
    struct listed *l = ctx;
    if (l->n < 16) l->seen[l->n] = seed;
    l->n++;
    if (seed != l->fail_at) return 0;
    if (l->message && wkh_chaos_message_set(message, l->message, strlen(l->message)) != 0) return 9;
    return 2;
}

/* wkh_run_chaos_seeds: the seeds as listed, in their order; the failing
 * body's message whole, however long; WASMKEEP_CHAOS_SEED runs its seed once. */
static void listed_chaos(wkh_host *h) {
    const uint64_t seeds[] = {7, 3, 4, 9, 4};
    struct listed l = {.fail_at = UINT64_MAX};
    wkh_chaos_result *r = wkh_run_chaos_seeds(h, seeds, 5, listed_body, &l);
    CHECK(r && !r->failed && r->ran == 5, "%s", r ? "5 seeds pass" : wkh_last_error());
    CHECK(l.n == 5 && l.seen[0] == 7 && l.seen[1] == 3 && l.seen[2] == 4 && l.seen[3] == 9 && l.seen[4] == 4,
          "the seeds run as listed (%zu ran)", l.n);
    wkh_chaos_result_free(r);

    static char long_message[3001];
    memset(long_message, 'x', 3000);
    long_message[2999] = 'y';
    l = (struct listed){.fail_at = 9, .message = long_message};
    r = wkh_run_chaos_seeds(h, seeds, 5, listed_body, &l);
    CHECK(r && r->failed && r->seed == 9 && r->ran == 4, "%s", r ? "seed 9 fails" : wkh_last_error());
    if (r && r->failed) {
        CHECK(strcmp(r->message, long_message) == 0, "the message comes back whole (%zu bytes)", strlen(r->message));
        CHECK(strstr(r->report, long_message) && strstr(r->report, "WASMKEEP_CHAOS_SEED=9"), "the report has it whole");
    }
    wkh_chaos_result_free(r);

    l = (struct listed){.fail_at = 4};
    r = wkh_run_chaos_seeds(h, seeds, 5, listed_body, &l);
    CHECK(r && r->failed && r->seed == 4 && strstr(r->message, "returned 2"), "%s",
          r ? r->message : wkh_last_error());
    wkh_chaos_result_free(r);

    setenv("WASMKEEP_CHAOS_SEED", "4", 1);
    l = (struct listed){.fail_at = UINT64_MAX};
    r = wkh_run_chaos_seeds(h, seeds, 5, listed_body, &l);
    CHECK(r && !r->failed && r->ran == 1 && l.n == 1 && l.seen[0] == 4, "the replayed seed runs once (%zu ran)", l.n);
    wkh_chaos_result_free(r);
    unsetenv("WASMKEEP_CHAOS_SEED");

    r = wkh_run_chaos_seeds(h, NULL, 0, listed_body, &l);
    CHECK(r && !r->failed && r->ran == 0, "no seeds: none run");
    wkh_chaos_result_free(r);
    wkh_clear_last_error();
    CHECK(wkh_run_chaos_seeds(h, NULL, 2, listed_body, &l) == NULL && refused_by_the_c_layer(), "NULL seeds: %s",
          last_kind());
    wkh_clear_last_error();
    CHECK(wkh_run_chaos_seeds(h, seeds, 1, NULL, NULL) == NULL && refused_by_the_c_layer(), "a NULL body: %s",
          last_kind());
    wkh_clear_last_error();
    CHECK(wkh_chaos_message_set(NULL, "x", 1) == -1 && refused_by_the_c_layer(), "a NULL message: %s", last_kind());
}

static void seeded_chaos(wkh_host *h) {
    CHECK(wkh_chaos_start(h, 7) == 0, "%s", wkh_last_error());
    for (int i = 0; i < 20; i++) {
        unsigned status;
        free(ops(h, "c", "[{\"op\":\"now\"}]", &status));
    }
    char *schedule = wkh_chaos_end(h);
    CHECK(schedule && strstr(schedule, "before event "), "20 events draw some steps: %s", schedule);
    char *again = wkh_chaos_end(h);
    CHECK(again && again[0] == 0, "ended: nothing more: %s", again);
    wkh_string_free(again);

    wkh_chaos_result *r = wkh_run_chaos(h, 100, 20, chaos_body, NULL);
    CHECK(r && !r->failed && r->ran == 20 && !r->report && !r->schedule, "%s", r ? "20 seeds pass" : wkh_last_error());
    wkh_chaos_result_free(r);
    again = wkh_chaos_end(h);
    CHECK(again && again[0] == 0, "the runner leaves no chaos running: %s", again);
    wkh_string_free(again);

    uint64_t fail_at = 105;
    r = wkh_run_chaos(h, 100, 20, chaos_body, &fail_at);
    CHECK(r && r->failed && r->seed == 105 && r->ran == 6, "%s", r ? "seed 105 fails" : wkh_last_error());
    if (r && r->failed) {
        CHECK(strstr(r->report, "seed 105") && strstr(r->report, "WASMKEEP_CHAOS_SEED=105") &&
                  strstr(r->report, "seed 105 fails on purpose"),
              "%s", r->report);
        CHECK(strcmp(r->message, "seed 105 fails on purpose") == 0, "%s", r->message);
        wkh_chaos_result *replay = wkh_run_chaos(h, 105, 1, chaos_body, &fail_at);
        CHECK(replay && replay->failed && strcmp(replay->schedule, r->schedule) == 0,
              "the seed replays its schedule: %s vs %s", replay ? replay->schedule : wkh_last_error(), r->schedule);
        wkh_chaos_result_free(replay);
        setenv("WASMKEEP_CHAOS_SEED", "105", 1);
        replay = wkh_run_chaos(h, 0, 1000, chaos_body, &fail_at);
        CHECK(replay && replay->ran == 1 && replay->failed && replay->seed == 105 &&
                  strcmp(replay->schedule, r->schedule) == 0,
              "WASMKEEP_CHAOS_SEED runs that seed alone");
        wkh_chaos_result_free(replay);
        setenv("WASMKEEP_CHAOS_SEED", "x1", 1);
        CHECK(wkh_run_chaos(h, 0, 10, chaos_body, NULL) == NULL && last_kind_is("bad-argument"), "%s: %s",
              last_kind(), wkh_last_error());
        unsetenv("WASMKEEP_CHAOS_SEED");
    }
    wkh_chaos_result_free(r);
    r = wkh_run_chaos(h, 0, 3, silent_failure, NULL);
    CHECK(r && r->failed && r->seed == 0 && strstr(r->message, "returned 3"), "%s", r ? r->message : wkh_last_error());
    wkh_chaos_result_free(r);
    wkh_clear_last_error();
    CHECK(wkh_run_chaos(h, 0, 3, NULL, NULL) == NULL && refused_by_the_c_layer(), "a NULL body: %s", last_kind());
    wkh_string_free(schedule);
}

/* Going back in time: a single node started with history lists the actor's
 * positions; a restore to a time gives the state written at or before it,
 * and a restore to its `undo` the later one again. */
static void history_and_restore(const char *testee) {
    wkh_host_options o = {0};
    o.history = 1;
    wkh_host *h = wkh_host_new(&o);
    CHECK(h != NULL, "%s", wkh_last_error());
    if (!h) return;
    wkh_class t = {"t", testee, WKH_ACCESS_OPEN};
    CHECK(wkh_add_app(h, APP, &t, 1) == 0, "%s", wkh_last_error());
    unsigned status;
    char *out = ops(h, "h", "[{\"op\":\"exec\",\"sql\":\"CREATE TABLE k(x)\"},{\"op\":\"exec\",\"sql\":\"INSERT INTO k VALUES (1)\"}]",
                    &status);
    CHECK(status == 200, "%u %s", status, out);
    free(out);
    wkh_advance_clock(h, 1000);
    uint64_t one = wkh_now(h);
    wkh_advance_clock(h, 1000);
    out = ops(h, "h", "[{\"op\":\"exec\",\"sql\":\"INSERT INTO k VALUES (2)\"}]", &status);
    CHECK(status == 200, "%u %s", status, out);
    free(out);

    char *history = wkh_history(h, APP, "t", "h");
    CHECK(history && history[0] == '[' && strstr(history, "\"bookmark\":\"") && strstr(history, "\"head\":true"),
          "%s", history ? history : wkh_last_error());
    wkh_string_free(history);
    history = wkh_history(h, APP, "t", "never");
    CHECK(history && strcmp(history, "[]") == 0, "an actor never written has no history: %s",
          history ? history : wkh_last_error());
    wkh_string_free(history);

    wkh_restored *r = wkh_restore(h, APP, "t", "h", NULL, one);
    CHECK(r && r->from && r->at && r->undo && strcmp(r->at, r->undo) > 0, "%s",
          r ? "bookmarks" : wkh_last_error());
    out = ops(h, "h", "[{\"op\":\"query\",\"sql\":\"SELECT count(*) FROM k\"}]", &status);
    CHECK(status == 200 && strstr(out, "\"integer\":\"1\""), "restored to the time of the first row: %s", out);
    free(out);
    if (r) {
        wkh_restored *undone = wkh_restore(h, APP, "t", "h", r->undo, 0);
        CHECK(undone != NULL, "%s", wkh_last_error());
        wkh_restored_free(undone);
    }
    wkh_restored_free(r);
    out = ops(h, "h", "[{\"op\":\"query\",\"sql\":\"SELECT count(*) FROM k\"}]", &status);
    CHECK(status == 200 && strstr(out, "\"integer\":\"2\""), "the undo brings the second row back: %s", out);
    free(out);

    CHECK(wkh_restore(h, APP, "t", "h", "yesterday", 0) == NULL && last_kind_is("bad-argument"),
          "a malformed bookmark: %s: %s", last_kind(), wkh_last_error());
    CHECK(wkh_restore(h, APP, "t", "h", NULL, 1) == NULL && last_kind_is("bad-argument"),
          "a time before the first state: %s: %s", last_kind(), wkh_last_error());
    CHECK(wkh_restore(h, APP, "t", "never", NULL, one) == NULL && last_kind_is("no-such-actor"),
          "an actor that never was: %s: %s", last_kind(), wkh_last_error());
    wkh_clear_last_error();
    CHECK(wkh_history(NULL, APP, "t", "h") == NULL && refused_by_the_c_layer(), "history: %s", last_kind());
    CHECK(wkh_restore(NULL, APP, "t", "h", NULL, one) == NULL, "restore");
    wkh_restored_free(NULL);
    wkh_host_free(h);
}

/* A host started without history keeps none: both verbs say so by kind. */
static void no_history_without_the_option(wkh_host *h) {
    CHECK(wkh_history(h, APP, "t", "a") == NULL && last_kind_is("bad-argument"), "%s: %s", last_kind(),
          wkh_last_error());
    CHECK(wkh_restore(h, APP, "t", "a", NULL, wkh_now(h)) == NULL && last_kind_is("bad-argument"), "%s: %s",
          last_kind(), wkh_last_error());
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
    CHECK(wkh_add_app(h, "tests/bad", &bad, 1) == -1 && last_kind_is("component"), "a missing component: %s: %s",
          last_kind(), wkh_last_error());
    requests_and_tables(h);
    clock_and_alarms(h);
    sockets(h);
    calls_faults_and_listings(h);
    failures_print_the_actors_logs(h);
    restart_and_operator_delete(h);
    single_node_refuses_cluster_verbs(h);
    no_history_without_the_option(h);
    null_arguments_are_refused();
    seeded_chaos(h);
    listed_chaos(h);
    reset_starts_over(h);
    wkh_host_free(h);
    cluster(argv[1]);
    history_and_restore(argv[1]);
    if (failures) {
        fprintf(stderr, "harness_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("harness_test: requests, tables, clock, alarms, sockets, calls, faults, listings, logs on failure, "
           "restart, operator delete, deletion status, chaos, reset, cluster, history and restore passed (harness %s)\n",
           wkh_version());
    return 0;
}
