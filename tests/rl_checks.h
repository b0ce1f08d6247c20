/* rl_checks.h -- the checks every integration suite makes of an RL.* reply: all six fields at once, or
 * for bad input the exact error (and the key left as it was). Static inline, as check.h's counters are the
 * including program's own. */
#ifndef RL_CHECKS_H
#define RL_CHECKS_H

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "server.h"

/* r (an rl_result, often the call itself) is evaluated once; a server error is printed. */
#define CHECK_RL(r, a, lim, rem, retry, reset, wait)                                              \
    do {                                                                                          \
        rl_result got_ = (r);                                                                     \
        if (!CHECK(got_.ok)) fprintf(stderr, "     error: %s\n", got_.error);                     \
        CHECK_EQ(got_.allowed, a);                                                                \
        CHECK_EQ(got_.limit, lim);                                                                \
        CHECK_EQ(got_.remaining, rem);                                                            \
        CHECK_EQ(got_.retry_after_ms, retry);                                                     \
        CHECK_EQ(got_.reset_after_ms, reset);                                                     \
        CHECK_EQ(got_.wait_ms, wait);                                                             \
    } while (0)

/* A limiter survives a copy and a reload: "<probe> <copy_key> <args>" after DUMP of key and RESTORE into
 * copy_key, and "<probe> <key> <args>" after DEBUG RELOAD (the test clock set to clock_ms again after it),
 * answer exactly what "<probe> <key> <args>" answered before. probe is an _RO form, so nothing moves
 * meanwhile. Six checks: the DUMP, the RESTORE, the copy's reply, the reload, the clock, the reloaded reply. */
static inline void check_copy_and_reload(redisContext *c, const char *probe, const char *key, const char *copy_key,
                                         const char *args, long long clock_ms) {
    rl_result before = rl(c, "%s %s %s", probe, key, args);
    redisReply *d = cmd(c, "DUMP %s", key);
    CHECK(d->type == REDIS_REPLY_STRING);
    CHECK(cmd_status_is(c, "OK", "RESTORE %s 0 %b", copy_key, d->str, d->len));
    freeReplyObject(d);
    rl_result copy = rl(c, "%s %s %s", probe, copy_key, args);
    CHECK(copy.ok && memcmp(&copy, &before, sizeof copy) == 0);
    CHECK(cmd_status_is(c, "OK", "DEBUG RELOAD"));
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", clock_ms));
    rl_result reloaded = rl(c, "%s %s %s", probe, key, args);
    CHECK(reloaded.ok && memcmp(&reloaded, &before, sizeof reloaded) == 0);
}

/* A bad input and the error it must answer, word for word. */
typedef struct bad_case {
    const char *args;  /* the command line, or what follows "<command> <key>" (check_errors_change_nothing) */
    const char *error;
} bad_case;

/* One check: line (formatted and split as cmdline) answers an error reply that is exactly error. */
static inline int check_error(redisContext *c, const char *error, const char *line) {
    redisReply *r = cmdline(c, "%s", line);
    int ok = r->type == REDIS_REPLY_ERROR && strcmp(r->str, error) == 0;
    if (!CHECK(ok)) fprintf(stderr, "     %s\n     got: %s\n     want: %s\n", line, r->str ? r->str : "(not a string)", error);
    freeReplyObject(r);
    return ok;
}

/* check_error for each of n whole command lines: n checks. */
static inline void check_errors(redisContext *c, const bad_case *cases, size_t n) {
    for (size_t i = 0; i < n; i++) check_error(c, cases[i].error, cases[i].args);
}

/* Every bad input changes nothing: key (which the caller made) must exist with an expiry (one check), and
 * each case, run as "<command> <key> <args>", answers its error and leaves the key byte-for-byte as it was,
 * expiry included (three checks a case). */
static inline void check_errors_change_nothing(redisContext *c, const char *command, const char *key,
                                               const bad_case *cases, size_t n) {
    size_t l0;
    char *before = dump_key(c, key, &l0);
    long long expire0 = cmd_int(c, "PEXPIRETIME %s", key);
    CHECK(before != NULL && expire0 > 0);
    for (size_t i = 0; i < n; i++) {
        char line[512];
        snprintf(line, sizeof line, "%s %s %s", command, key, cases[i].args);
        check_error(c, cases[i].error, line);
        size_t l1;
        char *after = dump_key(c, key, &l1);
        if (!CHECK(after && before && l1 == l0 && memcmp(after, before, l0) == 0))
            fprintf(stderr, "     %s changed by: %s\n", key, line);
        CHECK_EQ(cmd_int(c, "PEXPIRETIME %s", key), expire0);
        free(after);
    }
    free(before);
}

#endif
