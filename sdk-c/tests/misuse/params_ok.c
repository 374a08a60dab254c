/* Every correct way to pass parameters compiles without a warning
 * (sdk-c/scripts/test.sh compiles this with -Werror; never linked). */
#include <wasmkeep.h>

int params_ok(const wk_value *given, size_t n, const char *name);

int params_ok(const wk_value *given, size_t n, const char *name) {
    wk_value p[] = {wk_int(7), wk_text(name), wk_null()};
    const wk_value c[] = {wk_real(1.5)};
    wk_value *ptr = p;
    wk_rows *rows;
    uint64_t changed;
    wk_sql_error err = {0};
    int s = wk_storage_exec("CREATE TABLE t(a, b, c)", NULL, 0, NULL, NULL);
    s |= wk_storage_exec("INSERT INTO t VALUES (?1, ?2, ?3)", WK_PARAMS(p), &changed, &err);
    s |= wk_storage_exec("INSERT INTO t(a) VALUES (?)", WK_PARAMS(c), NULL, &err);
    s |= wk_storage_exec("INSERT INTO t(a) VALUES (?)", ptr, 1, NULL, &err);
    s |= wk_storage_exec("INSERT INTO t(a) VALUES (?)", given, n, NULL, &err);
    s |= wk_storage_exec_durable("INSERT INTO t(a) VALUES (?)", &p[0], 1, &changed, &err);
    s |= wk_storage_query("SELECT * FROM t WHERE a = ?", WK_PARAMS(c), &rows, &err);
    s |= (s ? wk_storage_exec : wk_storage_exec_durable)("SELECT 1", NULL, 0, NULL, NULL); /* as a function pointer */
    int (*f)(const char *, const wk_value *, size_t, wk_rows **, wk_sql_error *) = wk_storage_query;
    s |= f("SELECT 1", NULL, 0, &rows, NULL);
    wk_sql_error_free(&err);
    return s;
}
