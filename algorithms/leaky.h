/* leaky.h -- leaky bucket (RL.LEAKY): a bucket of capacity C that drains continuously, shaping by
 * default (wait_ms says how long to hold the request), policing with NODELAY (GCRA).
 *
 * Request parameters: params[0] = capacity, params[1] = leak_tokens, params[2] = leak_ms.
 *
 * Cell layout. The state is the instant the bucket will be empty, counted in units of 1/R µs
 * (R = leak_tokens): Q = w[0] * R + w[1].
 *   w[0]  the whole microseconds of that instant (int64 stored as uint64; 0 <= w[0] <= RL_MAX_TIME_US +
 *         RL_MAX_IDLE_MS * 1000)
 *   w[1]  the remainder, 0 <= w[1] < R (so < RL_MAX_COUNT); a remainder not below the reading request's R
 *         is clamped to R - 1. */
#ifndef RL_LEAKY_H
#define RL_LEAKY_H

#include "rl_common.h"

extern const rl_algorithm rl_leaky_algorithm;

/* RL.LEAKY's own option: police (GCRA) instead of shaping. */
#define RL_F_NODELAY RL_F_ALG(0)

#endif
