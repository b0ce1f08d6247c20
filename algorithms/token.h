/* token.h -- token bucket (RL.TOKEN): continuous refill, or refill in whole chunks (INTERVAL).
 *
 * Request parameters: params[0] = capacity, params[1] = refill_tokens, params[2] = refill_ms. */
#ifndef RL_TOKEN_H
#define RL_TOKEN_H

#include "rl_common.h"

extern const rl_algorithm rl_token_algorithm;

/* RL.TOKEN's own option: refill in whole chunks. */
#define RL_F_INTERVAL RL_F_ALG(0)

/* The cell layout, exposed for tests and for RL.SETSTATE documentation. */
#define RL_TOKEN_INTERVAL_BIT (1ULL << 62)

#endif
