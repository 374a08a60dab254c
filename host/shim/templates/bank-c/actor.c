/* A bank account whose every 200 is kept, in a cluster too.
 *
 * - POST /deposit?op=<id>&amount=<n> and POST /withdraw?op=<id>&amount=<n>
 *   move money once per operation id: a client that retries after a 503 or a
 *   lost answer repeats the id, and the retry changes nothing and answers what
 *   the first try did. A withdrawal beyond the balance is refused with 409,
 *   and that refusal is kept for its id too.
 * - GET / answers {"balance": <n>, "interest": <total paid>}.
 * - Interest: 1% of the balance (rounded down) every virtual day, paid by the
 *   alarm, which sets itself again.
 * - DELETE / closes the account with a durable delete.
 *
 * Nothing here waits for a write by hand: wk_respond sends each answer only
 * once the transaction before it is kept (ADR 019), and answers 503 when it
 * is not known to be. Built with -DBANK_BROKEN_IDEMPOTENCY it is the
 * deliberately wrong variant the chaos test must catch: a deposit records its
 * operation id only after its answer went out, so a host that stops between
 * the two (a crash) leaves the money moved and the id unknown, and a client
 * that did not get the answer retries and is counted twice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wasmkeep.h>

#define DAY_MS (24ULL * 3600 * 1000)

void wk_on_init(void) {
    wk_storage_exec("CREATE TABLE account(id INTEGER PRIMARY KEY CHECK (id = 1), balance INTEGER NOT NULL);"
                    "INSERT INTO account VALUES (1, 0);"
                    "CREATE TABLE ops(id TEXT PRIMARY KEY, status INTEGER NOT NULL, answer TEXT NOT NULL);"
                    "CREATE TABLE interest(paid INTEGER NOT NULL);",
                    NULL, 0, NULL, NULL);
    wk_alarm_set(wk_now() + DAY_MS);
}

/* One integer a query answers in its first cell; WK_OK or the error. */
static int query_int(const char *sql, long long *out, wk_sql_error *err) {
    wk_rows *rows;
    int s = wk_storage_query(sql, NULL, 0, &rows, err);
    if (s != WK_OK) return s;
    *out = (long long)wk_rows_int(rows, 0, 0, 0);
    wk_rows_free(rows);
    return WK_OK;
}

/* "503 <what went wrong>; try again": not known to be done, so the client retries. */
static void failed(wk_responder *res, wk_sql_error *err) {
    wk_respond_printf(res, 503, "%s: %s; try again", wk_status_name(err->kind), err->message ? err->message : "");
    wk_sql_error_free(err);
}

static void operation(const wk_request *req, wk_responder *res, int deposit) {
    char *op = wk_request_query(req, "op"), *amount_text = wk_request_query(req, "amount");
    char *end = NULL;
    long long amount = amount_text ? strtoll(amount_text, &end, 10) : 0;
    if (!op || !*op || !amount_text || *end != '\0' || amount <= 0) {
        wk_respond_text(res, 400, "give ?op=<id>&amount=<a positive whole number>");
        free(op);
        free(amount_text);
        return;
    }
    wk_sql_error err = {0};
    if (wk_storage_begin(&err) != WK_OK) goto fail;
    int record_after = 0;
#ifdef BANK_BROKEN_IDEMPOTENCY
    record_after = deposit;
#endif
    {
        /* A retry of an operation already done answers what it answered. */
        wk_value id[] = {wk_text(op)};
        wk_rows *done;
        if (wk_storage_query("SELECT status, answer FROM ops WHERE id = ?1", WK_PARAMS(id), &done, &err) != WK_OK) goto fail_open;
        if (done->n_rows) {
            int status = (int)wk_rows_int(done, 0, 0, 500);
            const char *answer = wk_rows_text(done, 0, 1);
            char *copy = strdup(answer ? answer : "");
            wk_rows_free(done);
            if (wk_storage_commit(&err) != WK_OK) {
                free(copy);
                goto fail_open;
            }
            wk_respond_text(res, (uint16_t)status, copy);
            free(copy);
            goto done;
        }
        wk_rows_free(done);
    }
    long long balance;
    if (query_int("SELECT balance FROM account", &balance, &err) != WK_OK) goto fail_open;
    int status = 200;
    char answer[96];
    if (!deposit && amount > balance) {
        status = 409;
        snprintf(answer, sizeof answer, "refused: the balance is %lld", balance);
    } else {
        long long delta = deposit ? amount : -amount;
        wk_value d[] = {wk_int(delta)};
        if (wk_storage_exec("UPDATE account SET balance = balance + ?1", WK_PARAMS(d), NULL, &err) != WK_OK) goto fail_open;
        snprintf(answer, sizeof answer, "%lld", balance + delta);
    }
    wk_value row[] = {wk_text(op), wk_int(status), wk_text(answer)};
    if (!record_after &&
        wk_storage_exec("INSERT OR REPLACE INTO ops(id, status, answer) VALUES (?1, ?2, ?3)", WK_PARAMS(row), NULL, &err) !=
            WK_OK)
        goto fail_open;
    if (wk_storage_commit(&err) != WK_OK) goto fail_open;
    wk_respond_text(res, (uint16_t)status, answer);
    /* The broken variant's mistake: the id is written after the answer went out. */
    if (record_after && wk_storage_exec("INSERT OR REPLACE INTO ops(id, status, answer) VALUES (?1, ?2, ?3)", WK_PARAMS(row),
                                        NULL, &err) != WK_OK)
        wk_sql_error_free(&err);
    goto done;
fail_open:
    wk_storage_rollback(NULL);
fail:
    failed(res, &err);
done:
    free(op);
    free(amount_text);
}

static void statement(wk_responder *res) {
    wk_sql_error err = {0};
    long long balance, interest;
    if (query_int("SELECT balance FROM account", &balance, &err) != WK_OK ||
        query_int("SELECT coalesce(sum(paid), 0) FROM interest", &interest, &err) != WK_OK) {
        failed(res, &err);
        return;
    }
    char body[96];
    snprintf(body, sizeof body, "{\"balance\": %lld, \"interest\": %lld}", balance, interest);
    wk_respond_json(res, 200, body);
}

void wk_on_request(const wk_request *req, wk_responder *res) {
    const char *q = strchr(req->path, '?');
    size_t len = q ? (size_t)(q - req->path) : strlen(req->path);
    int get = strcmp(req->method, "GET") == 0, post = strcmp(req->method, "POST") == 0;
    if (get && len == 1 && req->path[0] == '/') {
        statement(res);
    } else if (post && len == 8 && strncmp(req->path, "/deposit", 8) == 0) {
        operation(req, res, 1);
    } else if (post && len == 9 && strncmp(req->path, "/withdraw", 9) == 0) {
        operation(req, res, 0);
    } else if (strcmp(req->method, "DELETE") == 0 && len == 1 && req->path[0] == '/') {
        wk_sql_error err = {0};
        if (wk_storage_delete_self_durable(&err) != WK_OK) failed(res, &err);
        else wk_respond_text(res, 200, "closed");
    } else {
        wk_respond_text(res, 405, "use GET /, POST /deposit?op=<id>&amount=<n>, POST /withdraw?op=<id>&amount=<n> or DELETE /");
    }
}

void wk_on_alarm(void) {
    wk_sql_error err = {0};
    long long balance;
    if (wk_storage_begin(&err) == WK_OK && query_int("SELECT balance FROM account", &balance, &err) == WK_OK) {
        wk_value paid[] = {wk_int(balance / 100)};
        if (wk_storage_exec("UPDATE account SET balance = balance + ?1", WK_PARAMS(paid), NULL, &err) == WK_OK &&
            wk_storage_exec("INSERT INTO interest(paid) VALUES (?1)", WK_PARAMS(paid), NULL, &err) == WK_OK &&
            wk_storage_commit(&err) == WK_OK) {
            wk_alarm_set(wk_now() + DAY_MS);
            return;
        }
    }
    wk_log(WK_LOG_WARN, "interest not paid: %s", err.message ? err.message : "");
    wk_sql_error_free(&err);
    wk_storage_rollback(NULL);
    wk_alarm_set(wk_now() + DAY_MS);
}
