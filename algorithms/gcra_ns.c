/* gcra_ns.c -- GCRA in nanoseconds as redis-cell 0.5.0 computes it (see gcra_ns.h for the rules).
 *
 * The decision is redis-cell's, step for step, with two differences that change no reply redis-cell can
 * give sensibly: the arithmetic is exact (128-bit, where redis-cell's i64 products wrap on absurd
 * arguments, which rl_gcra_ns_rate_of refuses instead), and a stored TAT at or before now counts as
 * absent (redis-cell's key has expired by then; only a key kept alive past its TAT, as under a frozen test
 * clock, shows the difference).
 *
 * The f64 steps. redis-cell computes three values in f64 and truncates them to integers ("as i64", which
 * saturates, NaN giving 0). A truncated quotient of two integers a / b (b > 0) equals the integer
 * quotient while |a| < 2^53: a converts exactly, b too or else b > 2^53 > |a| and both quotients are 0;
 * a non-integer a/b lies at least 1/b from the integers around it, and rounding a/b to the nearest double
 * moves it by at most |a/b| * 2^-53 < 1/b. So the helpers below give integer division's answer in every
 * practical range, and redis-cell's own rounding beyond; the unit tests check both. */
#include "gcra_ns.h"

#include <stdio.h>

#define NS_PER_S 1000000000

/* --- redis-cell's three f64 steps ----------------------------------------------------------------- */

/* Rust's `x as i64` for a double: truncation toward zero, saturating at both ends, NaN -> 0. */
static int64_t f64_as_i64(double x) {
    if (x != x) return 0;
    if (x >= 9223372036854775808.0) return INT64_MAX;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)x;
}

/* Rate::per_period: period_ns as f64 / count as f64, truncated. period_ns is exact in 128 bits; its
 * conversion to double rounds to nearest, as Rust's i128 as f64 does. Returns -1 for an interval of
 * 2^63 ns or more, which redis-cell saturates to i64::MAX (a wrong interval): refused instead. */
static int64_t cell_interval_ns(int64_t period_s, int64_t count) {
    rl_i128 period_ns = (rl_i128)period_s * NS_PER_S;
    double q = (double)period_ns / (double)count;
    return q >= 9223372036854775808.0 ? -1 : f64_as_i64(q);
}

/* remaining: (next.whole_microseconds() as f64 / T.whole_microseconds() as f64) as i64, where whole
 * microseconds truncate toward zero (C's division does too). An interval under 1 µs makes the divisor 0:
 * redis-cell then answers i64::MAX (x / 0.0 = inf) or 0 (0 / 0.0 = NaN), and so does this. */
static int64_t cell_remaining(const rl_gcra_ns_rate *r, rl_i128 ttl_ns) {
    rl_i128 next = (rl_i128)r->tolerance_ns - ttl_ns;
    if (next <= -(rl_i128)r->interval_ns) return 0;
    /* next > -T > -2^63 and next <= tau < 2^63: its µs fit int64 and convert exactly below 2^53. */
    int64_t next_us = (int64_t)(next / 1000), interval_us = r->interval_ns / 1000;
    return f64_as_i64((double)next_us / (double)interval_us);
}

int64_t rl_gcra_ns_seconds(rl_i128 ns) {
    /* Duration::as_seconds_f64: whole seconds as f64 plus nanoseconds as f64 / 1e9 (the sum rounds up to
     * the next second only from 2^24 s on, where a double's step exceeds 1 ns). ns < 2^127 / 10^9. */
    int64_t secs = (int64_t)(ns / NS_PER_S), sub = (int64_t)(ns % NS_PER_S);
    int64_t whole = f64_as_i64((double)secs + (double)sub / 1e9);
    return sub >= 1000000 ? whole + 1 : whole; /* subsec_milliseconds() > 0 */
}

/* --- the rate ------------------------------------------------------------------------------------- */

static int negative_error(char err[RL_ERR_LEN], const char *name) {
    snprintf(err, RL_ERR_LEN, "ERR %s: must not be negative", name);
    return -1;
}

int rl_gcra_ns_rate_of(const rl_gcra_ns_args *a, rl_gcra_ns_rate *r, char err[RL_ERR_LEN]) {
    /* redis-cell's own refusal comes first, for the arguments it refuses. */
    if (a->count == 0 || a->period_s == 0) {
        snprintf(err, RL_ERR_LEN, "ERR Zero rates are not supported (count_per_period and period must be at least 1)");
        return -1;
    }
    if (a->max_burst < 0) return negative_error(err, "max_burst");
    if (a->count < 0) return negative_error(err, "count_per_period");
    if (a->period_s < 0) return negative_error(err, "period");
    if (a->quantity < 0) return negative_error(err, "quantity");

    r->interval_ns = cell_interval_ns(a->period_s, a->count);
    if (r->interval_ns < 0) {
        snprintf(err, RL_ERR_LEN,
                 "ERR period: period / count_per_period must stay below 2^63 ns (about 292 years)");
        return -1;
    }
    if (r->interval_ns == 0) {
        snprintf(err, RL_ERR_LEN,
                 "ERR Zero rates are not supported (count_per_period above period * 10^9: an emission interval under 1 ns)");
        return -1;
    }
    rl_i128 tolerance = (rl_i128)r->interval_ns * ((rl_i128)a->max_burst + 1);
    if (tolerance > INT64_MAX) {
        snprintf(err, RL_ERR_LEN,
                 "ERR max_burst: (max_burst + 1) * period / count_per_period must stay below 2^63 ns (about 292 years)");
        return -1;
    }
    r->tolerance_ns = (int64_t)tolerance;
    r->limit = a->max_burst + 1; /* tolerance >= limit, so it fits */
    return 0;
}

/* --- the decision --------------------------------------------------------------------------------- */

int rl_gcra_ns_decide(const rl_gcra_ns_rate *r, int64_t quantity, rl_i128 now, int has_tat, uint64_t stored,
                      rl_gcra_ns_result *out) {
    /* Bounds: now < 2^67 (the module's clock ends in 4199), stored < 2^64, increment < 2^126: every sum
     * and difference below stays inside 128 bits. */
    rl_i128 tat = has_tat && (rl_i128)stored > now ? (rl_i128)stored : now;
    rl_i128 increment = (rl_i128)r->interval_ns * quantity;
    rl_i128 new_tat = tat + increment;
    rl_i128 diff = now - (new_tat - r->tolerance_ns); /* now - allow_at */

    out->limit = r->limit;
    out->store = 0;
    out->tat_ns = 0;
    out->retry_ns = -1;
    if (diff < 0) {
        out->limited = 1;
        /* The request fits once allow_at has come, unless it is larger than the whole tolerance. */
        if (increment <= r->tolerance_ns) out->retry_ns = -diff;
        out->ttl_ns = tat - now;
    } else {
        if (increment > 0 && new_tat > (rl_i128)UINT64_MAX) return -1;
        out->limited = 0;
        out->ttl_ns = new_tat - now;
        out->store = increment > 0;
        out->tat_ns = (uint64_t)new_tat;
    }
    out->remaining = cell_remaining(r, out->ttl_ns);
    out->retry_after_s = out->retry_ns < 0 ? -1 : rl_gcra_ns_seconds(out->retry_ns);
    out->reset_after_s = rl_gcra_ns_seconds(out->ttl_ns);
    return 0;
}

/* --- numbers as Rust reads them ------------------------------------------------------------------- */

/* Digits after an optional sign, any number of leading zeros, value <= max. */
static int parse_digits(const char *s, size_t len, uint64_t max, uint64_t *out) {
    if (len == 0) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        uint64_t digit = (uint64_t)(s[i] - '0');
        if (v > (max - digit) / 10) return -1;
        v = v * 10 + digit;
    }
    *out = v;
    return 0;
}

int rl_gcra_ns_parse_u64(const char *s, size_t len, uint64_t *out) {
    if (len > 0 && s[0] == '+') s++, len--;
    return parse_digits(s, len, UINT64_MAX, out);
}

int rl_gcra_ns_parse_i64(const char *s, size_t len, int64_t *out) {
    int negative = len > 0 && s[0] == '-';
    if (len > 0 && (s[0] == '-' || s[0] == '+')) s++, len--;
    uint64_t v;
    if (parse_digits(s, len, negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &v) != 0) return -1;
    *out = negative ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}
