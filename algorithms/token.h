/* token.h -- token bucket (RL.TOKEN): continuous refill, or refill in whole chunks (INTERVAL).
 *
 * Request parameters: params[0] = capacity, params[1] = refill_tokens, params[2] = refill_ms. */
#ifndef RL_TOKEN_H
#define RL_TOKEN_H

#include "rl_common.h"

extern const rl_algorithm rl_token_algorithm;

/* RL.TOKEN's own option: refill in whole chunks. */
#define RL_F_INTERVAL RL_F_ALG(0)

/* The cell layout, exposed for tests and for RL.SETSTATE documentation.
 *   continuous: w[0] the empty instant's whole µs (int64), w[1] its remainder below R (< 2^40)
 *   INTERVAL:   w[0] the anchor (µs), w[1] RL_TOKEN_INTERVAL_BIT | the whole tokens (0 .. 10^12), or, in debt
 *               (FORCE), RL_TOKEN_INTERVAL_BIT | RL_TOKEN_DEBT_BIT | the tokens owed (1 .. RL_MAX_DEBT).
 * A bucket without debt is written as before the debt bit existed, so older cells read the same. */
#define RL_TOKEN_INTERVAL_BIT (1ULL << 62)
#define RL_TOKEN_DEBT_BIT (1ULL << 61)

#endif
