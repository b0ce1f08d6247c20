/* smooth.h -- Guava's RateLimiter (SmoothBursty and SmoothWarmingUp) as a cell algorithm (RL.SMOOTH).
 *
 * Request: params[0] = permits_per_second in millionths (the parser's decimal: "0.5" is 500000); with
 * RL_F_WARMUP, params[1] = warmup_ms and, with RL_F_COLDFACTOR, params[2] = the cold factor in millionths
 * (else 3); with RL_F_MAXBURST, params[1] = burst_ms (else 1000); with RL_F_MAXWAIT, maxwait_ms; cost = the
 * permits (>= 1). algorithms/smooth.c says how. */
#ifndef RL_SMOOTH_H
#define RL_SMOOTH_H

#include "rl_common.h"

extern const rl_algorithm rl_smooth_algorithm;

/* RL.SMOOTH's own options. */
#define RL_F_WARMUP RL_F_ALG(0)
#define RL_F_COLDFACTOR RL_F_ALG(1)
#define RL_F_MAXBURST RL_F_ALG(2)
#define RL_F_MAXWAIT RL_F_ALG(3)

/* The bounds of the arguments (docs/commands.md says why); the decimals in millionths. A decimal with at
 * most six digits after the point is m / 10^6 exactly, and (double)m / 1e6 is, like Java's
 * Double.parseDouble of its text, the double nearest to it: the same double Guava is given. */
#define RL_SMOOTH_MIN_RATE 1LL                  /* 0.000001 permits per second */
#define RL_SMOOTH_MAX_RATE 1000000000000000LL   /* 10^9 */
#define RL_SMOOTH_MIN_COLD_FACTOR 1000000LL     /* 1 */
#define RL_SMOOTH_MAX_COLD_FACTOR 1000000000LL  /* 1000 */
#define RL_SMOOTH_DEFAULT_COLD_FACTOR 3000000LL /* 3, as Guava's RateLimiter.create */
#define RL_SMOOTH_DEFAULT_BURST_MS 1000
/* The longest a reservation may charge to the next caller, COST permits' worth of time (at the cold
 * interval for warm-up), in ms: validate refuses more. It is also the wait beyond which a request
 * without MAXWAIT is denied (MAXWAIT's own maximum). */
#define RL_SMOOTH_MAX_CHARGE_MS RL_MAX_PERIOD_MS

/* The cell: 6 words.
 *   w[0] mode: RL_SMOOTH_BURSTY or RL_SMOOTH_WARMUP
 *   w[1] permits_per_second, in millionths
 *   w[2] burst_ms (bursty) or warmup_ms (warm-up)
 *   w[3] cold factor in millionths (warm-up), 0 (bursty)
 *   w[4] storedPermits (IEEE binary64 bits)
 *   w[5] nextFreeTicketMicros (Unix µs, int64) */
#define RL_SMOOTH_BURSTY 1
#define RL_SMOOTH_WARMUP 2
#define RL_SMOOTH_WORDS 6

#endif
