/* A constructor that uses storage: it runs when the component is
 * instantiated, outside any event. The SDK must fail every event of the
 * instance saying so (before: the table was silently created inside the
 * first event). */
#include <wasmkeep.h>

static int ctor_status = -1;
static uint64_t ctor_now = 1;

__attribute__((constructor)) static void create_tables(void) {
    ctor_status = wk_storage_exec("CREATE TABLE IF NOT EXISTS made_by_a_constructor(x)", NULL, 0, NULL, NULL);
    ctor_now = wk_now();
}

void wk_on_request(const wk_request *req, wk_responder *res) {
    (void)req;
    wk_respond_printf(res, 200, "constructor: storage %d, now %llu", ctor_status, (unsigned long long)ctor_now);
}
