/* check.h -- the smallest test harness that does the job: named checks, a failure message that says
 * what differed and where, and a closing line "N passed, N failed" that CI reads.
 *
 * Each test program includes this once, calls CHECK_* as it goes, and ends main() with
 * `return check_summary("name");`. A check counts once per evaluation. */
#ifndef RL_CHECK_H
#define RL_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static long check_passed, check_failed;

static inline int check_record(int ok, const char *file, int line, const char *what) {
    if (ok) {
        check_passed++;
    } else {
        check_failed++;
        fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
    }
    return ok;
}

#define CHECK(cond) check_record((cond) ? 1 : 0, __FILE__, __LINE__, #cond)

#define CHECK_EQ(actual, expected)                                                                  \
    do {                                                                                            \
        long long check_a_ = (long long)(actual), check_e_ = (long long)(expected);                 \
        if (!check_record(check_a_ == check_e_, __FILE__, __LINE__, #actual " == " #expected))     \
            fprintf(stderr, "     got %lld, expected %lld\n", check_a_, check_e_);                  \
    } while (0)

#define CHECK_STR(actual, expected)                                                                 \
    do {                                                                                            \
        const char *check_a_ = (actual), *check_e_ = (expected);                                    \
        int check_ok_ = check_a_ && check_e_ && strcmp(check_a_, check_e_) == 0;                    \
        if (!check_record(check_ok_, __FILE__, __LINE__, #actual " == " #expected))                \
            fprintf(stderr, "     got \"%s\", expected \"%s\"\n", check_a_ ? check_a_ : "(null)",   \
                    check_e_ ? check_e_ : "(null)");                                                \
    } while (0)

/* Prints the closing line and returns the exit status. A program that checked nothing fails. */
static inline int check_summary(const char *suite) {
    printf("%s: %ld passed, %ld failed\n", suite, check_passed, check_failed);
    return (check_failed == 0 && check_passed > 0) ? 0 : 1;
}

#endif
