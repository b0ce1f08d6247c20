/* clock.c -- wall clock, and the frozen test clock behind RL.CLOCK.
 *
 * RL.CLOCK SET <unix_ms> freezes the module's clock at that instant, ADVANCE <ms> moves the frozen clock
 * forward, GET returns the module's time in ms, REAL goes back to the wall clock. The clock is per
 * process: a replica keeps its own (it never needs one, as it applies the primary's effects). When it moves,
 * it calls the hook registered at load (waiting: clients may fit now); it knows nothing of who listens. */
#include "clock.h"

#include <string.h>
#include <strings.h>
#include <stdio.h>
#include <time.h>

#include "../algorithms/rl_common.h"
#include "compat.h"
#include "parse.h"

#define FROZEN_EXTRA_TTL_MS 3600000LL

static int clock_frozen;
static rl_clock_hook moved_hook;
static int64_t clock_frozen_us;
/* While frozen: real ms minus module ms at the last SET or ADVANCE, plus the extra hour. Fixed between
 * two clock changes, so an unchanged limiter keeps an unchanged expiry and is not rewritten. */
static int64_t frozen_offset_ms;

static int64_t real_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t rl_clock_now_us(void) {
    int64_t now = clock_frozen ? clock_frozen_us : rl_compat_cached_now_us();
    if (now < 0) now = real_now_us(); /* a server without a cached command time */
    if (now < 0) return 0;
    return now < RL_MAX_TIME_US ? now : RL_MAX_TIME_US - 1;
}

int64_t rl_clock_expire_at_ms(int64_t now_us, int64_t reset_after_us) {
    /* Round the idle instant up: the key must not vanish while it still holds state. */
    int64_t idle_ms = (now_us + reset_after_us + 999) / 1000;
    return clock_frozen ? idle_ms + frozen_offset_ms : idle_ms;
}

static void clock_freeze_at(int64_t us) {
    clock_frozen = 1;
    clock_frozen_us = us;
    frozen_offset_ms = real_now_us() / 1000 - us / 1000 + FROZEN_EXTRA_TTL_MS;
}

static int clock_number(RedisModuleString *arg, int64_t min, int64_t max, int64_t *out) {
    size_t len;
    const char *s = RedisModule_StringPtrLen(arg, &len);
    return rl_parse_int64(s, len, out) == 0 && *out >= min && *out <= max ? 0 : -1;
}

/* "ERR <name>: must be an integer between 0 and <the clock's last ms><more>". */
static int time_range_error(RedisModuleCtx *ctx, const char *name, const char *more) {
    char err[RL_ERR_LEN];
    snprintf(err, sizeof err, "ERR %s: must be an integer between 0 and %lld%s", name, (long long)(RL_MAX_TIME_MS - 1),
             more);
    return RedisModule_ReplyWithError(ctx, err);
}

int rl_clock_frozen(void) { return clock_frozen; }

void rl_clock_on_move(rl_clock_hook hook) { moved_hook = hook; }

int rl_clock_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 2) return RedisModule_WrongArity(ctx);
    size_t len;
    const char *sub = RedisModule_StringPtrLen(argv[1], &len);
    int64_t v;
    if (len == 3 && strncasecmp(sub, "GET", 3) == 0 && argc == 2) {
        return RedisModule_ReplyWithLongLong(ctx, rl_clock_now_us() / 1000);
    } else if (len == 4 && strncasecmp(sub, "REAL", 4) == 0 && argc == 2) {
        clock_frozen = 0;
    } else if (len == 3 && strncasecmp(sub, "SET", 3) == 0 && argc == 3) {
        if (clock_number(argv[2], 0, RL_MAX_TIME_MS - 1, &v) != 0) return time_range_error(ctx, "unix_ms", "");
        clock_freeze_at(v * 1000);
    } else if (len == 7 && strncasecmp(sub, "ADVANCE", 7) == 0 && argc == 3) {
        if (!clock_frozen) return RedisModule_ReplyWithError(ctx, "ERR ADVANCE: needs a frozen clock (RL.CLOCK SET)");
        if (clock_number(argv[2], 0, RL_MAX_TIME_MS - 1, &v) != 0 || clock_frozen_us / 1000 + v >= RL_MAX_TIME_MS)
            return time_range_error(ctx, "ms", " and keep the clock below it");
        clock_freeze_at(clock_frozen_us + v * 1000);
    } else {
        return RedisModule_ReplyWithError(ctx, "ERR subcommand: must be SET <unix_ms>, ADVANCE <ms>, GET or REAL");
    }
    if (moved_hook) moved_hook(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}
