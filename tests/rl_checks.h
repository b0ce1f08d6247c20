/* rl_checks.h -- the check every integration suite makes of an RL.* reply: all six fields at once. */
#ifndef RL_CHECKS_H
#define RL_CHECKS_H

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

#endif
