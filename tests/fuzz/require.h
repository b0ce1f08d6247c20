/* require.h -- the fuzz targets' one check: REQUIRE(cond, printf format, ...) aborts when an invariant
 * does not hold, so that libFuzzer saves the input, after printing where (file:line), the condition, the
 * message with its values, and what the target was doing (its dump_context()).
 *
 * A fuzz target has no pass count: an input either keeps every invariant or is a finding. Each target
 * includes this once and defines dump_context() (it may print nothing). */
#ifndef RL_FUZZ_REQUIRE_H
#define RL_FUZZ_REQUIRE_H

#include <stdio.h>
#include <stdlib.h>

/* Defined by the target: what it was working on (the command, the step, the state), to stderr. */
static void dump_context(void);

#define REQUIRE(cond, ...)                                                                   \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "\nINVARIANT VIOLATED %s:%d: %s\n  ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
            dump_context();                                                                  \
            abort();                                                                         \
        }                                                                                    \
    } while (0)

#endif
