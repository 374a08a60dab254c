/* A counter actor: GET reads the count, POST adds one, DELETE deletes the
 * actor (the next request meets a new counter at 0).
 *
 * Copy this directory to start a new wasmkeep actor in C. */
#include <wasmkeep.h>

/* Runs once per new database: create the table and its one row. */
void wk_on_init(void) {
    wk_storage_exec("CREATE TABLE counter(id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);"
                    "INSERT INTO counter VALUES (1, 0);",
                    NULL, 0, NULL, NULL);
}

/* Answers the count, or the storage error as a 500. */
static void answer_count(wk_responder *res) {
    wk_rows *rows;
    wk_sql_error err = {0};
    if (wk_storage_query("SELECT n FROM counter WHERE id = 1", NULL, 0, &rows, &err) != WK_OK) {
        wk_respond_printf(res, 500, "%s: %s", wk_status_name(err.kind), err.message);
        wk_sql_error_free(&err);
        return;
    }
    wk_respond_printf(res, 200, "%lld", (long long)wk_rows_int(rows, 0, 0, 0));
    wk_rows_free(rows);
}

void wk_on_request(const wk_request *req, wk_responder *res) {
    wk_sql_error err = {0};
    switch (req->method[0]) {
    case 'G': /* GET */
        answer_count(res);
        return;
    case 'P': /* POST (PUT, PATCH: refused below) */
        if (req->method[1] != 'O') break;
        if (wk_storage_exec("UPDATE counter SET n = n + 1 WHERE id = 1", NULL, 0, NULL, &err) != WK_OK) {
            wk_respond_printf(res, 500, "%s: %s", wk_status_name(err.kind), err.message);
            wk_sql_error_free(&err);
            return;
        }
        answer_count(res);
        return;
    case 'D': /* DELETE: durable before the answer, so a 200 means the counter is gone */
        if (wk_storage_delete_self_durable(&err) != WK_OK) {
            if (err.kind == WK_SQL_INTERNAL) /* not known to be durable; the client may retry (503, retry-after) */
                wk_respond_not_kept(res, &err);
            else
                wk_respond_printf(res, 500, "%s: %s", wk_status_name(err.kind), err.message);
            wk_sql_error_free(&err);
            return;
        }
        wk_respond_text(res, 200, "deleted");
        return;
    }
    wk_respond_text(res, 405, "use GET, POST or DELETE");
}
