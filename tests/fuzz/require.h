/* require.h -- the fuzz targets' one check: REQUIRE(cond, printf format, ...) aborts when an invariant
 * does not hold, so that libFuzzer saves the input, after printing where (file:line), the condition, the
 * message with its values, and what the target was doing (its dump_context()).
 *
 * A fuzz target has no pass count: an input either keeps every invariant or is a finding. Each target
 * includes this once and defines dump_context() (it may print nothing). */
#ifndef RL_FUZZ_REQUIRE_H
#define RL_FUZZ_REQUIRE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The arguments an input after its first byte (which the target reads itself) stands for: split on sep (an
 * empty argument included), one leading sep skipped, at most max of them, each copied into a heap block of
 * exactly its length (no terminator to lean on: ASan sees any read past it). Returns how many; free them with
 * fuzz_free_args. */
static inline int fuzz_split_args(const uint8_t *rest, size_t rest_len, uint8_t sep, char **args, size_t *lens,
                                  int max) {
    if (rest_len > 0 && rest[0] == sep) { /* "2 10 60000" reads as command 2 with 10 60000 */
        rest++;
        rest_len--;
    }
    int nargs = 0;
    if (rest_len == 0) return 0;
    size_t start = 0;
    for (size_t i = 0; i <= rest_len && nargs < max; i++) {
        if (i < rest_len && rest[i] != sep) continue;
        size_t len = i - start;
        args[nargs] = malloc(len ? len : 1);
        if (len) memcpy(args[nargs], rest + start, len);
        lens[nargs++] = len;
        start = i + 1;
    }
    return nargs;
}

static inline void fuzz_free_args(char **args, int nargs) {
    for (int i = 0; i < nargs; i++) free(args[i]);
}

#endif
