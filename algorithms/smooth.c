/* smooth.c -- Guava's RateLimiter (SmoothRateLimiter: SmoothBursty and SmoothWarmingUp), bit for bit.
 *
 * The idea is Guava's, and so is every number: the state is Guava's (storedPermits, nextFreeTicketMicros)
 * and the shape derived from the parameters (stableIntervalMicros, maxPermits, thresholdPermits, slope,
 * the cool-down interval) by the formulas of Guava's doSetRate. A request runs Guava's resync and
 * reserveEarliestAvailable with the same IEEE binary64 operations in the same order, the same (long)
 * truncations (Java's: saturating, NaN to 0), LongMath.saturatedAdd and Math.min, so that given the same
 * calls at the same microseconds every wait equals Guava's. Only differences of times enter the doubles,
 * so the time base (Unix µs here, a stopwatch in Guava) changes nothing. This is why this one algorithm
 * uses floating point where the others are exact integers: exactness here means "what Guava computes".
 *   - Reserving: a request is granted now and waits until nextFreeTicket (the previous requests'
 *     charge); its own cost (stored permits at no cost for bursty, or along the warm-up slope, then
 *     fresh permits at the stable interval) moves nextFreeTicket further for the next caller.
 *   - MAXWAIT is tryAcquire(permits, timeout): denied, reserving nothing, when nextFreeTicket - timeout >
 *     now. Without it the timeout is RL_SMOOTH_MAX_CHARGE_MS: Guava's acquire never refuses, but a wait
 *     beyond 31 years is refused here so that every time stays far inside int64.
 *   - A missing key is Guava's limiter after a long idle: storedPermits = maxPermits, nextFreeTicket = now.
 *     A stored state that is fully rested (resync would give storedPermits == maxPermits) is the same
 *     state, so it is read as missing; the key expires at that instant (reset_after_us).
 *   - Parameters that differ from the key's apply Guava's setRate: resync under the old ones, then the
 *     new doSetRate (stored permits scaled by new max / old max; 0 old max: 0 for bursty, the new max for
 *     warm-up, as Guava's initial states). Guava can only change the rate of one limiter; the same steps
 *     serve a change of mode, period or cold factor.
 *   - The parameters are set first, as a Guava user's setRate before tryAcquire: a request denied by
 *     MAXWAIT still leaves the key with its parameters (the key keeps those it was last used with); with
 *     the same parameters a denied request changes nothing. setRate cannot move a ticket that lies ahead,
 *     so it never changes whether the request is denied.
 *
 * Bounds (validate, the parser's ranges, cell_valid): rate in [0.000001, 10^9] permits/s, periods up to
 * RL_MAX_PERIOD_MS, cold factor in [1, 1000], and COST permits at the (cold) interval at most
 * RL_SMOOTH_MAX_CHARGE_MS. So nextFreeTicket stays within now + 2 * 10^15 µs, the time to rest from empty
 * is the burst or warm-up period (<= 10^15 µs), maxPermits <= 1.5 * 10^18, and every (long) below is of a
 * value far inside int64. */
#include "smooth.h"

#include <float.h>
#include <math.h> /* signbit: a macro; the algorithms link no libm */
#include <string.h>
#include <stdio.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "smooth.c needs plain binary64 arithmetic (SSE2), as Java's"
#endif

#define MAX_CHARGE_US (RL_SMOOTH_MAX_CHARGE_MS * 1000LL)
#define RL_DECIMAL_ONE 1000000LL /* 1 in millionths */
/* Any nextFreeTicket a valid run can write is below now + 2 * MAX_CHARGE_US. */
#define SMOOTH_TIME_LIMIT (RL_MAX_TIME_US + 4 * MAX_CHARGE_US)

/* --- Java's semantics --------------------------------------------------------------------------------- */

/* (long) x in Java: truncation, NaN -> 0, out of range -> Long.MIN_VALUE / MAX_VALUE. */
static int64_t java_long(double x) {
    if (x != x) return 0;
    if (x >= 9223372036854775808.0) return INT64_MAX;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)x;
}

/* Math.min(double, double): NaN wins, -0.0 is below 0.0. */
static double java_min(double a, double b) {
    if (a != a) return a;
    if (a == 0.0 && b == 0.0) return signbit(a) ? a : b;
    return a <= b ? a : b;
}

/* Java's long + and -: two's complement wrap-around. */
static int64_t java_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t java_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }

/* LongMath.saturatedAdd. */
static int64_t saturated_add(int64_t a, int64_t b) {
    int64_t sum;
    if (__builtin_add_overflow(a, b, &sum)) return a < 0 ? INT64_MIN : INT64_MAX;
    return sum;
}

static double bits_double(uint64_t w) {
    double d;
    memcpy(&d, &w, sizeof d);
    return d;
}

static uint64_t double_bits(double d) {
    uint64_t w;
    memcpy(&w, &d, sizeof w);
    return w;
}

/* --- parameters and the shape Guava derives from them ----------------------------------------------- */

typedef struct smooth_params {
    uint64_t mode;         /* RL_SMOOTH_BURSTY or RL_SMOOTH_WARMUP */
    int64_t rate_m;        /* permits per second, in millionths */
    int64_t period_ms;     /* max burst (bursty) or warm-up period */
    int64_t cold_factor_m; /* warm-up only, in millionths; 0 for bursty */
} smooth_params;

/* A decimal argument as the double Java parses from its text (smooth.h). */
static double decimal_value(int64_t millionths) { return (double)millionths / 1e6; }

/* The fields Guava's doSetRate sets, and coolDownIntervalMicros(). */
typedef struct smooth_shape {
    int warm;
    double stable_us, max_permits, threshold, slope, cool_down_us;
} smooth_shape;

typedef struct smooth_state {
    smooth_params p;
    double stored;
    int64_t next_free_us;
} smooth_state;

static smooth_params params_of(const rl_request *req) {
    smooth_params p = {RL_SMOOTH_BURSTY, req->params[0], RL_SMOOTH_DEFAULT_BURST_MS, 0};
    if (req->flags & RL_F_WARMUP) {
        p.mode = RL_SMOOTH_WARMUP;
        p.period_ms = req->params[1];
        p.cold_factor_m = (req->flags & RL_F_COLDFACTOR) ? req->params[2] : RL_SMOOTH_DEFAULT_COLD_FACTOR;
    } else if (req->flags & RL_F_MAXBURST) {
        p.period_ms = req->params[1];
    }
    return p;
}

static int same_params(const smooth_params *a, const smooth_params *b) {
    return a->mode == b->mode && a->rate_m == b->rate_m && a->period_ms == b->period_ms &&
           a->cold_factor_m == b->cold_factor_m;
}

/* SmoothRateLimiter.doSetRate(double, long) less the resync: stableIntervalMicros = 1s / rate, then the
 * subclass's doSetRate, each expression as Guava writes it (Java evaluates left to right). */
static smooth_shape shape_of(const smooth_params *p) {
    smooth_shape s;
    memset(&s, 0, sizeof s);
    s.warm = p->mode == RL_SMOOTH_WARMUP;
    double rate = decimal_value(p->rate_m);
    s.stable_us = (double)1000000LL / rate;
    if (s.warm) {
        double warmup_us = (double)(p->period_ms * 1000);  /* the long warmupPeriodMicros, widened */
        double cold_us = s.stable_us * decimal_value(p->cold_factor_m);
        s.threshold = 0.5 * warmup_us / s.stable_us;
        s.max_permits = s.threshold + 2.0 * warmup_us / (s.stable_us + cold_us);
        s.slope = (cold_us - s.stable_us) / (s.max_permits - s.threshold);
        s.cool_down_us = warmup_us / s.max_permits;
    } else {
        double max_burst_seconds = (double)p->period_ms / 1000.0;
        s.max_permits = max_burst_seconds * rate;
        s.cool_down_us = s.stable_us;
    }
    return s;
}

/* --- Guava's steps ------------------------------------------------------------------------------------ */

static void resync(smooth_state *st, const smooth_shape *s, int64_t now_us) {
    if (now_us > st->next_free_us) {
        double new_permits = (double)java_sub(now_us, st->next_free_us) / s->cool_down_us;
        st->stored = java_min(s->max_permits, st->stored + new_permits);
        st->next_free_us = now_us;
    }
}

/* SmoothWarmingUp.permitsToTime. */
static double permits_to_time(const smooth_shape *s, double permits) { return s->stable_us + permits * s->slope; }

/* storedPermitsToWaitTime: 0 for bursty; for warm-up the area under the slope above the threshold, then
 * the stable interval below it. */
static int64_t stored_permits_to_wait(const smooth_shape *s, double stored, double take) {
    if (!s->warm) return 0;
    double above_threshold = stored - s->threshold;
    int64_t micros = 0;
    if (above_threshold > 0.0) {
        double take_above = java_min(above_threshold, take);
        double length = permits_to_time(s, above_threshold) + permits_to_time(s, above_threshold - take_above);
        micros = java_long(take_above * length / 2.0);
        take -= take_above;
    }
    return java_add(micros, java_long(s->stable_us * take));
}

/* reserveEarliestAvailable: returns the ticket (the moment this request may go). */
static int64_t reserve(smooth_state *st, const smooth_shape *s, int64_t permits, int64_t now_us) {
    resync(st, s, now_us);
    int64_t ticket = st->next_free_us;
    double to_spend = java_min((double)permits, st->stored);
    double fresh = (double)permits - to_spend;
    int64_t wait_us = java_add(stored_permits_to_wait(s, st->stored, to_spend), java_long(fresh * s->stable_us));
    st->next_free_us = saturated_add(st->next_free_us, wait_us);
    st->stored -= to_spend;
    return ticket;
}

/* setRate with (possibly) new parameters: resync under the old, then the new doSetRate. */
static void set_rate(smooth_state *st, const smooth_params *next, int64_t now_us) {
    smooth_shape old = shape_of(&st->p);
    resync(st, &old, now_us);
    smooth_shape s = shape_of(next);
    double old_max = old.max_permits; /* finite and >= 0 within the bounds: Guava's infinity case cannot occur */
    if (old_max == 0.0)
        st->stored = s.warm ? s.max_permits : 0.0;
    else
        st->stored = st->stored * s.max_permits / old_max;
    st->p = *next;
}

/* --- rested: when the key may go ---------------------------------------------------------------------- */

/* 1 when resync at next_free + d (d >= 1) gives storedPermits == maxPermits: Math.min(max, stored + x)
 * is max exactly when max <= stored + x. Monotone in d. */
static int rested_after(const smooth_state *st, const smooth_shape *s, int64_t d) {
    return s->max_permits <= st->stored + (double)d / s->cool_down_us;
}

/* The first instant at which the limiter is fully rested, i.e. its state is Guava's after a long idle
 * (storedPermits == maxPermits, nextFreeTicket <= now): nextFreeTicket itself if nothing is missing,
 * else the first µs after it at which resync fills the store. A candidate by arithmetic, then the exact
 * double expression decides, by a search that needs only its monotony. */
static int64_t rested_at(const smooth_state *st, const smooth_shape *s) {
    if (st->stored == s->max_permits) return st->next_free_us;
    /* stored < max (or above it by a rounding: then 1 µs of resync fills it): rested_after(0) is false. */
    double guess = (s->max_permits - st->stored) * s->cool_down_us;
    int64_t hi = guess < 1.0 ? 1 : guess > 4.0 * MAX_CHARGE_US ? 4 * MAX_CHARGE_US : (int64_t)guess + 1, lo;
    int64_t step = 1;
    if (rested_after(st, s, hi)) { /* gallop down to an instant that is not rested */
        lo = hi - 1;
        while (lo > 0 && rested_after(st, s, lo)) {
            hi = lo;
            step *= 2;
            lo = hi > step ? hi - step : 0;
        }
    } else { /* gallop up to one that is; the bounds make it come within a few steps */
        lo = hi;
        hi = lo + 1;
        for (int i = 0; i < 62 && !rested_after(st, s, hi); i++) {
            lo = hi;
            step *= 2;
            hi = lo + step;
        }
    }
    while (hi - lo > 1) { /* rested_after(lo) false, rested_after(hi) true */
        int64_t mid = lo + (hi - lo) / 2;
        if (rested_after(st, s, mid))
            hi = mid;
        else
            lo = mid;
    }
    return st->next_free_us + hi;
}

static int is_rested(const smooth_state *st, const smooth_shape *s, int64_t now_us) {
    if (now_us < st->next_free_us) return 0;
    smooth_state look = *st;
    resync(&look, s, now_us);
    return look.stored == s->max_permits;
}

/* --- the cell ----------------------------------------------------------------------------------------- */

static smooth_state state_read(const rl_cell *cell) {
    smooth_state st;
    st.p.mode = cell->w[0];
    st.p.rate_m = (int64_t)cell->w[1];
    st.p.period_ms = (int64_t)cell->w[2];
    st.p.cold_factor_m = (int64_t)cell->w[3];
    st.stored = bits_double(cell->w[4]);
    st.next_free_us = (int64_t)cell->w[5];
    return st;
}

static void state_write(rl_cell *cell, const smooth_state *st) {
    cell->w[0] = st->p.mode;
    cell->w[1] = (uint64_t)st->p.rate_m;
    cell->w[2] = (uint64_t)st->p.period_ms;
    cell->w[3] = (uint64_t)st->p.cold_factor_m;
    cell->w[4] = double_bits(st->stored);
    cell->w[5] = (uint64_t)st->next_free_us;
}

static int params_valid(const smooth_params *p) {
    if (p->rate_m < RL_SMOOTH_MIN_RATE || p->rate_m > RL_SMOOTH_MAX_RATE || p->period_ms > RL_MAX_PERIOD_MS) return 0;
    if (p->mode == RL_SMOOTH_BURSTY) return p->period_ms >= 0 && p->cold_factor_m == 0;
    if (p->mode != RL_SMOOTH_WARMUP) return 0;
    return p->period_ms >= 1 && p->cold_factor_m >= RL_SMOOTH_MIN_COLD_FACTOR &&
           p->cold_factor_m <= RL_SMOOTH_MAX_COLD_FACTOR;
}

static int smooth_cell_valid(const rl_cell *cell) {
    smooth_state st = state_read(cell);
    if (!params_valid(&st.p)) return 0;
    smooth_shape s = shape_of(&st.p);
    /* A rescale (setRate) may leave stored a rounding or two above max; never more. */
    if (!(st.stored >= 0.0 && st.stored <= s.max_permits + s.max_permits * 0x1p-40)) return 0;
    return st.next_free_us >= -SMOOTH_TIME_LIMIT && st.next_free_us <= SMOOTH_TIME_LIMIT;
}

static unsigned smooth_words(const rl_cell *cell) {
    (void)cell;
    return RL_SMOOTH_WORDS;
}

/* --- the algorithm ------------------------------------------------------------------------------------ */

static int smooth_validate(const rl_request *req, char err[RL_ERR_LEN]) {
    if ((req->flags & RL_F_COLDFACTOR) && !(req->flags & RL_F_WARMUP)) {
        snprintf(err, RL_ERR_LEN, "ERR COLDFACTOR: applies to the warm-up form only (needs WARMUP)");
        return -1;
    }
    smooth_params p = params_of(req);
    /* COST permits at the coldest interval, cost * factor / rate s, exactly in millionths (<= 10^24). */
    int64_t factor_m = p.mode == RL_SMOOTH_WARMUP ? p.cold_factor_m : RL_DECIMAL_ONE;
    if ((rl_i128)req->cost * factor_m * 1000 > (rl_i128)RL_SMOOTH_MAX_CHARGE_MS * p.rate_m) {
        snprintf(err, RL_ERR_LEN, "ERR COST: COST %s/ permits_per_second must not exceed %lld ms",
                 p.mode == RL_SMOOTH_WARMUP ? "* COLDFACTOR " : "", (long long)RL_SMOOTH_MAX_CHARGE_MS);
        return -1;
    }
    return 0;
}

static void reply_of(const smooth_state *st, const smooth_shape *s, int64_t now_us, rl_reply *reply) {
    /* Both are >= 0 and below 2^61: the cast is floor. A rescale (setRate) may leave stored a rounding
     * above max; the reply never says more remain than the limit. */
    reply->limit = (int64_t)s->max_permits;
    reply->remaining = (int64_t)st->stored;
    if (reply->remaining > reply->limit) reply->remaining = reply->limit;
    int64_t rest_us = rested_at(st, s) - now_us;
    reply->reset_after_ms = rl_us_to_ms_ceil(rest_us);
    reply->reset_after_us = rest_us > 0 ? rest_us : 0;
}

static void smooth_decide(const rl_request *req, rl_cell *cell, int exists, rl_reply *reply) {
    int64_t now = req->now_us;
    smooth_params p = params_of(req);
    smooth_shape s = shape_of(&p);
    smooth_state st = {p, s.max_permits, now}; /* a missing key: rested */
    if (exists) {
        smooth_state kept = state_read(cell);
        smooth_shape kept_shape = shape_of(&kept.p);
        if (!is_rested(&kept, &kept_shape, now)) {
            st = kept;
            int rerated = !same_params(&kept.p, &p);
            if (rerated) set_rate(&st, &p, now);
            /* tryAcquire's canAcquire. */
            int64_t timeout_us = (req->flags & RL_F_MAXWAIT) ? req->maxwait_ms * 1000 : MAX_CHARGE_US;
            if (java_sub(st.next_free_us, timeout_us) > now) {
                if (rerated) state_write(cell, &st); /* else the cell stays as it is */
                reply_of(&st, &s, now, reply);
                reply->allowed = 0;
                reply->granted = 0;
                reply->wait_ms = 0;
                reply->retry_after_ms = rl_us_to_ms_ceil((rl_i128)st.next_free_us - timeout_us - now);
                return;
            }
        }
    }
    int64_t ticket = reserve(&st, &s, req->cost, now);
    int64_t wait_us = ticket > now ? ticket - now : 0; /* reserveAndGetWaitLength: max(ticket - now, 0) */
    state_write(cell, &st);
    reply_of(&st, &s, now, reply);
    reply->allowed = 1;
    reply->granted = req->cost;
    reply->wait_ms = rl_us_to_ms_ceil(wait_us);
    reply->retry_after_ms = -1;
}

const rl_algorithm rl_smooth_algorithm = {
    .validate = smooth_validate,
    .decide = smooth_decide,
    .cell_valid = smooth_cell_valid,
    .words = smooth_words,
};
