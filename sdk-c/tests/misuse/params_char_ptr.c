/* A string where the parameter array belongs: must not compile
 * (sdk-c/scripts/test.sh checks that the error names
 * wk_params_must_be_a_wk_value_array_or_NULL). Before, it was a warning,
 * and the value bound at run time was NULL. */
#include <wasmkeep.h>

int params_char_ptr(const char *name);

int params_char_ptr(const char *name) {
    return wk_storage_exec("INSERT INTO t VALUES (?)", name, 1, NULL, NULL);
}
