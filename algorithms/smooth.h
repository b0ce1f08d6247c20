/* smooth.h -- Guava's RateLimiter (SmoothBursty and SmoothWarmingUp) as a cell algorithm (RL.SMOOTH).
 *
 * Request: fparams[0] = permits_per_second; with RL_F_WARMUP, params[0] = warmup_ms and fparams[1] =
 * COLDFACTOR (when RL_F_COLDFACTOR, else 3); with RL_F_MAXBURST, params[1] = burst_ms (else 1000);
 * with RL_F_MAXWAIT, params[2] = maxwait_ms; cost = the permits (>= 1). algorithms/smooth.c says how. */
#ifndef RL_SMOOTH_H
#define RL_SMOOTH_H

#include "rl_common.h"

extern const rl_algorithm rl_smooth_algorithm;

/* RL.SMOOTH's own options. */
#define RL_F_WARMUP RL_F_ALG(0)
#define RL_F_COLDFACTOR RL_F_ALG(1)
#define RL_F_MAXBURST RL_F_ALG(2)
#define RL_F_MAXWAIT RL_F_ALG(3)

/* The bounds of the arguments (docs/commands.md says why). */
#define RL_SMOOTH_MIN_RATE 1e-6
#define RL_SMOOTH_MAX_RATE 1e9
#define RL_SMOOTH_MIN_COLD_FACTOR 1.0
#define RL_SMOOTH_MAX_COLD_FACTOR 1000.0
#define RL_SMOOTH_DEFAULT_COLD_FACTOR 3.0
#define RL_SMOOTH_DEFAULT_BURST_MS 1000
/* The longest a reservation may charge to the next caller, COST permits' worth of time (at the cold
 * interval for warm-up), in ms: validate refuses more. It is also the wait beyond which a request
 * without MAXWAIT is denied (MAXWAIT's own maximum). */
#define RL_SMOOTH_MAX_CHARGE_MS RL_MAX_PERIOD_MS

/* The cell: 6 words.
 *   w[0] mode: RL_SMOOTH_BURSTY or RL_SMOOTH_WARMUP
 *   w[1] permits_per_second (IEEE binary64 bits)
 *   w[2] burst_ms (bursty) or warmup_ms (warm-up)
 *   w[3] cold factor bits (warm-up), 0 (bursty)
 *   w[4] storedPermits bits
 *   w[5] nextFreeTicketMicros (Unix µs, int64) */
#define RL_SMOOTH_BURSTY 1
#define RL_SMOOTH_WARMUP 2
#define RL_SMOOTH_WORDS 6

#endif
