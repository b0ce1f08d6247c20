/* gcra_ns.h -- GCRA in nanoseconds, deciding exactly as redis-cell 0.5.0's CL.THROTTLE does.
 *
 * CL.THROTTLE key max_burst count_per_period period [quantity] is redis-cell's command; module/cl_throttle.c
 * serves it so that a running system can swap redis-cell for this module (and back) with its keys live.
 * Everything that decides lives here, Redis-free, so unit tests drive it with a fake clock in ns.
 *
 * The rate: emission interval T = period * 10^9 / count ns, truncated; delay variation tolerance
 * tau = T * (max_burst + 1); limit = max_burst + 1. The state: the theoretical arrival time (TAT), an
 * unsigned count of ns since the Unix epoch, stored by redis-cell as a decimal string.
 *
 * A request of n units at `now` (a stored TAT at or before now counts as absent, as if its key had
 * expired at the TAT, which is when redis-cell's key expires):
 *     tat = max(stored TAT, now);  new_tat = tat + n*T;  allowed iff new_tat - tau <= now
 *     allowed: ttl = new_tat - now, store new_tat (n > 0; n = 0 is a peek that stores nothing)
 *     denied:  ttl = tat - now; retry = (new_tat - tau) - now, or none when n*T > tau (never fits)
 *     remaining = trunc(us(tau - ttl) / us(T)) when tau - ttl > -T, else 0
 *     reply times in whole seconds: trunc(seconds), plus 1 when the sub-second part is >= 1 ms.
 *
 * Arithmetic. Times and products are exact in 128 bits (now < 2^67 ns, TAT < 2^64, n*T < 2^126), so
 * nothing wraps where redis-cell's i64 arithmetic does. Three steps of redis-cell round through f64: the
 * interval (period_ns as f64 / count as f64), remaining (a quotient of two f64 µs counts), and the
 * seconds of a duration (secs as f64 + nanos as f64 / 1e9, truncated). These three, and only these, are
 * computed here with the same IEEE double operations, so the replies are redis-cell's bit for bit. In the
 * ranges anyone uses they equal integer truncating division (the unit tests check it): the interval for
 * periods below 2^53 ns (104 days), remaining for a tolerance below 2^53 µs (285 years), seconds below
 * 2^24 s (194 days). Beyond those, redis-cell's float rounding shows, and is reproduced. */
#ifndef RL_GCRA_NS_H
#define RL_GCRA_NS_H

#include <stddef.h>
#include <stdint.h>

#include "rl_common.h"

/* CL.THROTTLE's numbers as given (quantity 1 when absent). */
typedef struct rl_gcra_ns_args {
    int64_t max_burst, count, period_s, quantity;
} rl_gcra_ns_args;

/* The rate they make: all three positive, tolerance_ns = interval_ns * limit <= INT64_MAX. */
typedef struct rl_gcra_ns_rate {
    int64_t interval_ns;  /* T: the time one unit takes to be regained */
    int64_t tolerance_ns; /* tau: how far ahead of now the TAT may run */
    int64_t limit;        /* max_burst + 1 */
} rl_gcra_ns_rate;

/* One decision: the five fields of the reply, and what to store. */
typedef struct rl_gcra_ns_result {
    int64_t limited;       /* 1 denied, 0 allowed */
    int64_t limit;
    int64_t remaining;
    int64_t retry_after_s; /* -1 when allowed, or when the quantity can never fit */
    int64_t reset_after_s;
    rl_i128 retry_ns;      /* the exact durations the seconds come from (retry_ns -1: none) */
    rl_i128 ttl_ns;
    int store;             /* 1: write tat_ns (an allowed request of quantity > 0) */
    uint64_t tat_ns;
} rl_gcra_ns_result;

/* The rate of args, or -1 with the complete error reply in err: zero rates (count or period 0, or an
 * interval under 1 ns), a negative number, or an interval or a tolerance beyond INT64_MAX ns (about 292
 * years; redis-cell's i64 saturates or wraps there). */
int rl_gcra_ns_rate_of(const rl_gcra_ns_args *args, rl_gcra_ns_rate *rate, char err[RL_ERR_LEN]);

/* Decide `quantity` (>= 0) at now_ns (>= 0) against the stored TAT (has_tat 0: no key). Returns 0, or -1
 * when an allowed request's new TAT would not fit the 64 unsigned bits redis-cell stores (a clock past
 * the year 2554): nothing is decided then. */
int rl_gcra_ns_decide(const rl_gcra_ns_rate *rate, int64_t quantity, rl_i128 now_ns, int has_tat,
                      uint64_t stored_tat_ns, rl_gcra_ns_result *out);

/* A duration >= 0 in redis-cell's whole seconds: its f64 seconds truncated, plus 1 when its sub-second
 * part holds at least one whole millisecond. */
int64_t rl_gcra_ns_seconds(rl_i128 ns);

/* Numbers as redis-cell reads them (Rust's i64 and u64 from_str): an optional sign ('+' only for u64),
 * then at least one decimal digit, leading zeros allowed, within range; nothing else. Return 0 or -1. */
int rl_gcra_ns_parse_i64(const char *s, size_t len, int64_t *out);
int rl_gcra_ns_parse_u64(const char *s, size_t len, uint64_t *out);

#endif
