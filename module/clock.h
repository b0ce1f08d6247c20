/* clock.h -- the module's only source of time.
 *
 * Every RL.* command reads the time here. Normally it is the wall clock in microseconds; a module loaded
 * with the argument `test-clock` also has RL.CLOCK, which can freeze and move it, so tests decide the
 * exact instant of every request. Expiry of keys always runs on real time (Redis's own), see
 * rl_clock_expire_at_ms. */
#ifndef RL_CLOCK_H
#define RL_CLOCK_H

#include <stdint.h>

#include "redismodule.h"

/* The module's time, clamped to [0, RL_MAX_TIME_US): the frozen test clock, else the server's cached
 * time of the current command where it has one (7.2+), else the wall clock. */
int64_t rl_clock_now_us(void);

/* The absolute expiry (Unix ms, real time) for a limiter that becomes idle reset_after_us from now.
 * Never earlier than the idle instant. While the test clock is frozen, real time keeps running under it:
 * the idle instant is moved onto real time as it was at the last RL.CLOCK SET or ADVANCE, plus an hour,
 * so the key outlives a test and the same idle instant always gives the same expiry. */
int64_t rl_clock_expire_at_ms(int64_t now_us, int64_t reset_after_us);

/* 1 while RL.CLOCK holds the clock frozen. */
int rl_clock_frozen(void);

/* RL.CLOCK SET <unix_ms> | ADVANCE <ms> | GET | REAL (registered by command.c only when the module is
 * loaded with `test-clock`). */
int rl_clock_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* Called when RL.CLOCK sets or moves the clock, in that command's context. */
typedef void (*rl_clock_hook)(RedisModuleCtx *ctx);
void rl_clock_on_move(rl_clock_hook hook);

#endif
