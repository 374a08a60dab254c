/* CHECK for the SDK's native test programs: counts a failure and says where
 * and why, then goes on (a test reports every broken check, not the first).
 * Each program ends with `return failures ? 1 : 0;`. (The example's own test
 * keeps its copy: `wasmkeep-shim new` copies the example as a project that
 * stands alone.) */
#ifndef WASMKEEP_TESTS_CHECK_H
#define WASMKEEP_TESTS_CHECK_H
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            failures++;                                                              \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
        }                                                                            \
    } while (0)

#endif
