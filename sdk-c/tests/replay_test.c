/* A chaos seed replays exactly on two nodes (issue 58, ADR 080): 100 seeds
 * of the bank's life (examples/bank-c: deposits and withdrawals with
 * operation ids, a statement after each, every 5xx retried) run twice on one
 * two-node host, each seed after wkh_reset under wkh_chaos_start, and each
 * seed's record must be the same both times: the schedule wkh_chaos_end
 * returns, then every answer the client got (retries included) and how the
 * body ended. A seed that differs is printed with both records. Run by
 * sdk-c/scripts/test.sh.
 *
 *   replay_test path/to/bank-c.wasm */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wasmkeep_harness.h>

#include "check.h"

static const char *APP = "tests/replay";
enum { SEEDS = 100, NODES = 2, RECORD_CAP = 1 << 16 };

/* One seed's record as it is written: the answers, then the schedule. */
typedef struct {
    char text[RECORD_CAP];
    size_t len;
} record;

static void note(record *r, const char *fmt, const char *a, const char *b) {
    if (r->len < sizeof r->text) r->len += (size_t)snprintf(r->text + r->len, sizeof r->text - r->len, fmt, a, b);
    if (r->len > sizeof r->text - 1) r->len = sizeof r->text - 1;
}

/* Sends a request (to the node the schedule draws) and notes "<method> <path>: <status> <body>". */
static int send(wkh_host *h, record *r, const char *method, const char *path) {
    char answer[256];
    unsigned status = 0;
    wkh_response *res = wkh_request(h, APP, "bank", "acct", method, path, NULL, 0, NULL, 0);
    if (res) {
        status = res->status;
        snprintf(answer, sizeof answer, "%u %s", res->status, (const char *)res->body);
        wkh_response_free(res);
    } else {
        snprintf(answer, sizeof answer, "refused: %s", wkh_last_error());
    }
    char what[128];
    snprintf(what, sizeof what, "%s %s", method, path);
    note(r, "%s: %s\n", what, answer);
    return (int)status;
}

/* Sends until the answer is not a 5xx, as a client that retries would (30 tries). */
static int answered(wkh_host *h, record *r, const char *method, const char *path) {
    int status = 0;
    for (int tries = 0; tries < 30; tries++) {
        status = send(h, r, method, path);
        if (status != 0 && status < 500) break;
    }
    return status;
}

/* The bank's life, as its chaos test lives it: ten operations, each
 * acknowledged once, a statement after each. The outcome is the record. */
static void life(wkh_host *h, record *r) {
    char path[96];
    for (long long i = 1; i <= 10; i++) {
        int withdraw = i % 4 == 0;
        long long amount = withdraw ? i * 5 : i * 10;
        snprintf(path, sizeof path, "/%s?op=%c%lld&amount=%lld", withdraw ? "withdraw" : "deposit", withdraw ? 'w' : 'd', i,
                 amount);
        if (answered(h, r, "POST", path) != 200) {
            note(r, "%s%s", "ended: an operation was not acknowledged\n", "");
            return;
        }
        if (answered(h, r, "GET", "/") != 200) {
            note(r, "%s%s", "ended: no statement\n", "");
            return;
        }
    }
    note(r, "%s%s", "ended: every operation acknowledged\n", "");
}

/* Runs every seed once; records[seed] is its record (to free). */
static void run_seeds(wkh_host *h, char **records) {
    static record r;
    for (unsigned seed = 0; seed < SEEDS; seed++) {
        r.len = 0;
        r.text[0] = 0;
        CHECK(wkh_reset(h) == 0, "reset before seed %u: %s", seed, wkh_last_error());
        CHECK(wkh_chaos_start(h, seed) == 0, "seed %u: %s", seed, wkh_last_error());
        life(h, &r);
        char *schedule = wkh_chaos_end(h);
        CHECK(schedule != NULL, "seed %u: %s", seed, wkh_last_error());
        note(&r, "the schedule:\n%s%s", schedule ? schedule : "", "");
        wkh_string_free(schedule);
        records[seed] = strdup(r.text);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s path/to/bank-c.wasm\n", argv[0]);
        return 2;
    }
    wkh_host_options options = {0};
    options.nodes = NODES;
    wkh_host *h = wkh_host_new(&options);
    if (!h) {
        fprintf(stderr, "wkh_host_new: %s\n", wkh_last_error());
        return 1;
    }
    wkh_class bank = {"bank", argv[1], WKH_ACCESS_OPEN};
    if (wkh_add_app(h, APP, &bank, 1) != 0) {
        fprintf(stderr, "wkh_add_app: %s\n", wkh_last_error());
        return 1;
    }
    static char *first[SEEDS], *second[SEEDS];
    run_seeds(h, first);
    run_seeds(h, second);
    unsigned differ = 0;
    for (unsigned seed = 0; seed < SEEDS; seed++) {
        int same = first[seed] && second[seed] && strcmp(first[seed], second[seed]) == 0;
        if (!same && differ++ < 3) {
            fprintf(stderr, "seed %u ran differently the second time.\nfirst run:\n%s\nsecond run:\n%s\n", seed,
                    first[seed] ? first[seed] : "(none)", second[seed] ? second[seed] : "(none)");
        }
        free(first[seed]);
        free(second[seed]);
    }
    CHECK(differ == 0, "%u of %d two-node seeds did not replay their schedule and outcome", differ, SEEDS);
    wkh_host_free(h);
    if (!failures) printf("replay_test: %d two-node seeds of the bank replayed exactly (schedule and every answer)\n", SEEDS);
    return failures ? 1 : 0;
}
