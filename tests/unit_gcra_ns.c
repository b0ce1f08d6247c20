/* unit_gcra_ns.c -- tests of CL.THROTTLE's decision (algorithms/gcra_ns.c), driven by a fake clock in ns.
 *
 * First redis-cell's own case table (its it_rate_limits test: limit 5, 1 per second), with every
 * duration to the nanosecond and the seconds the command replies. Then the rules one by one: numbers as
 * Rust reads them, the rate and its refusals, redis-cell's rounding to seconds, peeks, stale TATs,
 * quantities that never fit. Then redis-cell's f64 steps: equal to integer division in the ranges the
 * header names (pseudo-random cases), and its own rounding beyond them. Last, pseudo-random traces against
 * RL.LEAKY NODELAY (algorithms/leaky.c), the same GCRA kept in exact µs rationals: where the emission
 * interval is a whole number of µs, both admit the same requests with the same remaining and times. */
#define RNG_SEED 0x5eed0fce11ULL
#include "../algorithms/gcra_ns.h"
#include "../algorithms/leaky.h"
#include "check.h"
#include "rng.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define START 1700000000123456789LL /* any instant, not a whole µs: redis-cell's clock has ns */

static rl_gcra_ns_rate rate_of(int64_t max_burst, int64_t count, int64_t period_s) {
    rl_gcra_ns_args a = {max_burst, count, period_s, 1};
    rl_gcra_ns_rate r = {0, 0, 0};
    char err[RL_ERR_LEN];
    if (!CHECK(rl_gcra_ns_rate_of(&a, &r, err) == 0)) fprintf(stderr, "     %s\n", err);
    return r;
}

/* A key: its stored TAT, if any, kept between calls as the module keeps it. */
typedef struct key {
    int has;
    uint64_t tat;
} key;

static rl_gcra_ns_result call(const rl_gcra_ns_rate *r, key *k, int64_t quantity, rl_i128 now) {
    rl_gcra_ns_result res;
    CHECK(rl_gcra_ns_decide(r, quantity, now, k->has, k->tat, &res) == 0);
    if (res.store) *k = (key){1, res.tat_ns};
    return res;
}

/* --- redis-cell's table ----------------------------------------------------------------------------- */

typedef struct cell_case {
    int64_t at_ms, volume, remaining, reset_ns, retry_ns, limited;
    int64_t reset_s, retry_s; /* what CL.THROTTLE replies */
} cell_case;

static const cell_case cell_table[] = {
    {0, 6, 5, 0, -1, 1, 0, -1}, /* never fits: larger than the burst */
    {0, 1, 4, 1 * SEC, -1, 0, 1, -1},
    {0, 1, 3, 2 * SEC, -1, 0, 2, -1},
    {0, 1, 2, 3 * SEC, -1, 0, 3, -1},
    {0, 1, 1, 4 * SEC, -1, 0, 4, -1},
    {0, 1, 0, 5 * SEC, -1, 0, 5, -1},
    {0, 1, 0, 5 * SEC, 1 * SEC, 1, 5, 1},
    {3000, 1, 2, 3000 * MS, -1, 0, 3, -1},
    {3100, 1, 1, 3900 * MS, -1, 0, 4, -1}, /* 3.9 s rounds up */
    {4000, 1, 1, 4000 * MS, -1, 0, 4, -1},
    {8000, 1, 4, 1000 * MS, -1, 0, 1, -1},
    {9500, 1, 4, 1000 * MS, -1, 0, 1, -1},
    {9500, 0, 4, 1 * SEC, -1, 0, 1, -1}, /* a peek */
    {9500, 2, 2, 3 * SEC, -1, 0, 3, -1},
    {9500, 5, 2, 3 * SEC, 3 * SEC, 1, 3, 3},
};

static void test_redis_cell_table(void) {
    rl_gcra_ns_rate r = rate_of(4, 1, 1);
    CHECK_EQ(r.interval_ns, SEC);
    CHECK_EQ(r.tolerance_ns, 5 * SEC);
    key k = {0, 0};
    for (size_t i = 0; i < sizeof cell_table / sizeof cell_table[0]; i++) {
        const cell_case *c = &cell_table[i];
        rl_gcra_ns_result res = call(&r, &k, c->volume, (rl_i128)START + c->at_ms * MS);
        if (!CHECK(res.limited == c->limited && res.remaining == c->remaining && res.ttl_ns == c->reset_ns &&
                   res.retry_ns == c->retry_ns && res.reset_after_s == c->reset_s && res.retry_after_s == c->retry_s &&
                   res.limit == 5))
            fprintf(stderr, "     case %zu: %lld %lld %lld %lld %lld\n", i, (long long)res.limited,
                    (long long)res.remaining, (long long)res.retry_after_s, (long long)res.reset_after_s,
                    (long long)res.ttl_ns);
    }
    CHECK(k.has && k.tat == (uint64_t)(START + 12500 * MS)); /* 9.5 s + 3 s of TAT ahead */
}

/* --- numbers as Rust reads them --------------------------------------------------------------------- */

static void test_parse(void) {
    static const struct {
        const char *s;
        int ok;
        int64_t v;
    } i64s[] = {
        {"0", 1, 0}, {"5", 1, 5}, {"+5", 1, 5}, {"-5", 1, -5}, {"007", 1, 7}, {"-0", 1, 0},
        {"9223372036854775807", 1, INT64_MAX}, {"-9223372036854775808", 1, INT64_MIN},
        {"00000000000000000000009223372036854775807", 1, INT64_MAX},
        {"9223372036854775808", 0, 0}, {"-9223372036854775809", 0, 0}, {"", 0, 0}, {"+", 0, 0}, {"-", 0, 0},
        {" 5", 0, 0}, {"5 ", 0, 0}, {"5x", 0, 0}, {"1e3", 0, 0}, {"1.0", 0, 0}, {"+-5", 0, 0}, {"--5", 0, 0},
        {"0x10", 0, 0},
    };
    for (size_t i = 0; i < sizeof i64s / sizeof i64s[0]; i++) {
        int64_t v = -42;
        int ok = rl_gcra_ns_parse_i64(i64s[i].s, strlen(i64s[i].s), &v) == 0;
        if (!CHECK(ok == i64s[i].ok && (!ok || v == i64s[i].v))) fprintf(stderr, "     i64 \"%s\"\n", i64s[i].s);
    }
    static const struct {
        const char *s;
        int ok;
        uint64_t v;
    } u64s[] = {
        {"0", 1, 0}, {"1700000000000000000", 1, 1700000000000000000ULL}, {"+12", 1, 12}, {"0012", 1, 12},
        {"18446744073709551615", 1, UINT64_MAX}, {"18446744073709551616", 0, 0}, {"-0", 0, 0}, {"-1", 0, 0},
        {"", 0, 0}, {"+", 0, 0}, {"abc", 0, 0}, {"12 ", 0, 0},
    };
    for (size_t i = 0; i < sizeof u64s / sizeof u64s[0]; i++) {
        uint64_t v = 42;
        int ok = rl_gcra_ns_parse_u64(u64s[i].s, strlen(u64s[i].s), &v) == 0;
        if (!CHECK(ok == u64s[i].ok && (!ok || v == u64s[i].v))) fprintf(stderr, "     u64 \"%s\"\n", u64s[i].s);
    }
    /* A length, not a NUL, ends the number. */
    int64_t v;
    CHECK(rl_gcra_ns_parse_i64("12\0" "3", 4, &v) != 0);
    CHECK(rl_gcra_ns_parse_i64("123", 2, &v) == 0 && v == 12);
}

/* --- the rate ----------------------------------------------------------------------------------------- */

static void check_rate_error(int64_t max_burst, int64_t count, int64_t period, int64_t quantity, const char *want) {
    rl_gcra_ns_args a = {max_burst, count, period, quantity};
    rl_gcra_ns_rate r;
    char err[RL_ERR_LEN] = "";
    CHECK(rl_gcra_ns_rate_of(&a, &r, err) == -1);
    if (!CHECK(strncmp(err, want, strlen(want)) == 0)) fprintf(stderr, "     got \"%s\", expected \"%s...\"\n", err, want);
}

static void test_rate(void) {
    CHECK_EQ(rate_of(0, 1, 1).interval_ns, SEC);
    CHECK_EQ(rate_of(0, 5, 1).interval_ns, 200 * MS);
    CHECK_EQ(rate_of(0, 3, 1).interval_ns, 333333333); /* truncated */
    CHECK_EQ(rate_of(0, 7, 3).interval_ns, 428571428);
    CHECK_EQ(rate_of(15, 30, 60).interval_ns, 2 * SEC); /* redis-cell's README example */
    CHECK_EQ(rate_of(15, 30, 60).tolerance_ns, 32 * SEC);
    CHECK_EQ(rate_of(15, 30, 60).limit, 16);
    CHECK_EQ(rate_of(0, 1000000000, 1).interval_ns, 1);
    /* The largest tolerance: exactly INT64_MAX ns. */
    rl_gcra_ns_rate big = rate_of(INT64_MAX - 1, 1000000000, 1);
    CHECK_EQ(big.tolerance_ns, INT64_MAX);
    CHECK_EQ(big.limit, INT64_MAX);
    CHECK_EQ(rate_of(0, 1, INT64_MAX / SEC).interval_ns, INT64_MAX / SEC * SEC);

    check_rate_error(5, 0, 1, 1, "ERR Zero rates are not supported");
    check_rate_error(5, 1, 0, 1, "ERR Zero rates are not supported");
    check_rate_error(5, 0, 0, 1, "ERR Zero rates are not supported");
    check_rate_error(-1, 0, 1, 1, "ERR Zero rates are not supported"); /* redis-cell's check comes first */
    check_rate_error(5, 1000000001, 1, 1, "ERR Zero rates are not supported (count_per_period above");
    check_rate_error(-1, 1, 1, 1, "ERR max_burst: must not be negative");
    check_rate_error(5, -1, 1, 1, "ERR count_per_period: must not be negative");
    check_rate_error(5, 1, -1, 1, "ERR period: must not be negative");
    check_rate_error(5, 1, 1, -1, "ERR quantity: must not be negative");
    check_rate_error(INT64_MAX, 1, 1, 1, "ERR max_burst:");
    check_rate_error(INT64_MAX / 2, 500000000, 1, 1, "ERR max_burst:"); /* interval 2, tolerance 2^63 */
    check_rate_error(9223372036LL, 1, 1, 1, "ERR max_burst:");
    check_rate_error(0, 1, INT64_MAX / SEC + 1, 1, "ERR period:"); /* the interval alone past 2^63 - 1 */
    check_rate_error(0, 1, INT64_MAX, 1, "ERR period:");
    /* Half of it fits; 9223372037 * 10^9 ns is not a double, so redis-cell's f64 makes ...9744 of ...0000. */
    CHECK_EQ(rate_of(0, 2, INT64_MAX / SEC + 1).interval_ns, 4611686018499999744LL);
}

/* --- seconds ------------------------------------------------------------------------------------------ */

static void test_seconds(void) {
    CHECK_EQ(rl_gcra_ns_seconds(0), 0);
    CHECK_EQ(rl_gcra_ns_seconds(1), 0);
    CHECK_EQ(rl_gcra_ns_seconds(999999), 0);       /* under a ms: dropped */
    CHECK_EQ(rl_gcra_ns_seconds(1000000), 1);      /* a ms: rounds up */
    CHECK_EQ(rl_gcra_ns_seconds(999999999), 1);
    CHECK_EQ(rl_gcra_ns_seconds(SEC), 1);
    CHECK_EQ(rl_gcra_ns_seconds(SEC + 999999), 1);
    CHECK_EQ(rl_gcra_ns_seconds(SEC + 1000000), 2);
    CHECK_EQ(rl_gcra_ns_seconds(3900 * MS), 4);
    /* Below 2^24 s the f64 sum never reaches the next second. */
    const int64_t two24 = 1LL << 24;
    CHECK_EQ(rl_gcra_ns_seconds((rl_i128)(two24 - 1) * SEC + 999999999), two24);
    for (int i = 0; i < 200000; i++) {
        rl_i128 ns = (rl_i128)rng_range(0, two24 - 1) * SEC + rng_range(0, SEC - 1);
        if (i % 4 == 0) ns = (ns / SEC) * SEC + SEC - 1 - rng_range(0, 2000000); /* near the next second */
        int64_t want = (int64_t)(ns / SEC) + (ns % SEC >= 1000000);
        if (!CHECK(rl_gcra_ns_seconds(ns) == want)) break;
    }
    /* From 2^24 s on, redis-cell's f64 sum rounds x.999999999 up to the next second, and its "+1 for a
     * partial ms" then adds another: reproduced. */
    CHECK_EQ(rl_gcra_ns_seconds((rl_i128)two24 * SEC + 999999999), two24 + 2);
    CHECK_EQ(rl_gcra_ns_seconds((rl_i128)two24 * SEC + 999999998), two24 + 1);
}

/* --- the decision, rule by rule ----------------------------------------------------------------------- */

static void test_rules(void) {
    rl_gcra_ns_rate r = rate_of(2, 3, 1); /* T = 333333333 ns, tau = 999999999 ns, limit 3 */
    rl_i128 now = START;
    key k = {0, 0};

    /* A peek on a new key: all remaining, nothing stored. */
    rl_gcra_ns_result res = call(&r, &k, 0, now);
    CHECK(!res.limited && res.remaining == 3 && res.reset_after_s == 0 && res.retry_after_s == -1 && !res.store);
    CHECK(!k.has);

    res = call(&r, &k, 3, now);
    CHECK(!res.limited && res.remaining == 0 && res.store && res.tat_ns == (uint64_t)(START + 999999999));
    CHECK_EQ(res.reset_after_s, 1);
    /* Denied: 333333333 ns to wait, retry rounds up to 1 s; the TAT stays. */
    res = call(&r, &k, 1, now);
    CHECK(res.limited && res.retry_ns == 333333333 && res.retry_after_s == 1 && !res.store);
    CHECK(res.ttl_ns == 999999999 && res.remaining == 0);
    /* Quantity above the limit never fits: retry -1, remaining and reset from the TAT. */
    res = call(&r, &k, 4, now);
    CHECK(res.limited && res.retry_after_s == -1 && res.retry_ns == -1 && res.reset_after_s == 1);
    /* A huge quantity: q * T far past 64 bits, still exact, still "never". */
    res = call(&r, &k, INT64_MAX, now);
    CHECK(res.limited && res.retry_after_s == -1 && res.remaining == 0);

    /* 333333333 ns later exactly one unit fits. */
    res = call(&r, &k, 1, now + 333333332);
    CHECK(res.limited && res.retry_ns == 1 && res.retry_after_s == 0); /* 1 ns: under a ms, 0 s */
    res = call(&r, &k, 1, now + 333333333);
    CHECK(!res.limited && res.tat_ns == (uint64_t)(START + 999999999 + 333333333));

    /* A stored TAT at or before now counts as absent: a fresh limit. */
    key stale = {1, (uint64_t)START};
    res = call(&r, &stale, 4, now);
    CHECK(res.limited && res.ttl_ns == 0 && res.remaining == 3 && res.reset_after_s == 0);
    res = call(&r, &stale, 0, now + 5);
    CHECK(!res.limited && res.remaining == 3 && !res.store && stale.tat == (uint64_t)START);
    res = call(&r, &stale, 1, now + 5);
    CHECK(!res.limited && res.tat_ns == (uint64_t)(START + 5 + 333333333));

    /* A TAT far ahead (written under other parameters): even a peek is denied until it comes closer. */
    key ahead = {1, (uint64_t)(START + 10 * SEC)};
    res = call(&r, &ahead, 0, now);
    CHECK(res.limited && res.retry_ns == 9 * SEC + 1 && res.retry_after_s == 9 && res.reset_after_s == 10);
    CHECK_EQ(res.remaining, 0);
    /* The largest TAT redis-cell can store, read back. */
    key last = {1, UINT64_MAX};
    res = call(&r, &last, 1, now);
    CHECK(res.limited && res.reset_after_s == (int64_t)((UINT64_MAX - (uint64_t)START) / SEC) + 1);

    /* A clock past 2^64 ns: an allowed write has nowhere to go. */
    rl_gcra_ns_result out;
    CHECK(rl_gcra_ns_decide(&r, 1, (rl_i128)UINT64_MAX, 0, 0, &out) == -1);
    CHECK(rl_gcra_ns_decide(&r, 0, (rl_i128)UINT64_MAX + 5, 0, 0, &out) == 0 && !out.store);
    CHECK(rl_gcra_ns_decide(&r, 1, (rl_i128)UINT64_MAX - 333333333, 0, 0, &out) == 0 && out.tat_ns == UINT64_MAX);
}

/* --- redis-cell's f64 steps -------------------------------------------------------------------------- */

/* Inside the ranges of the header: the interval is integer division, remaining is the integer quotient
 * of whole µs, for pseudo-random rates and TTLs (remaining is checked through peeks at a stored TAT x
 * ahead of now, whose ttl is x either way). */
static void test_f64_equals_integers(void) {
    const int64_t max_period = ((1LL << 53) - 1) / SEC; /* period_ns < 2^53 */
    for (int i = 0; i < 100000; i++) {
        int64_t period = rng_range(1, max_period), count = rng_magnitude(period * SEC);
        rl_gcra_ns_rate r = rate_of(0, count, period);
        if (!CHECK(r.interval_ns == period * SEC / count)) {
            fprintf(stderr, "     %lld per %lld s\n", (long long)count, (long long)period);
            break;
        }
    }
    for (int i = 0; i < 100000; i++) {
        int64_t period = rng_range(1, 100000), count = rng_magnitude(period * 1000000LL); /* T >= 1 µs */
        int64_t interval = period * SEC / count, max_tolerance = 1LL << 61; /* below 2^53 µs, and 2x fits */
        rl_gcra_ns_rate r = rate_of(rng_magnitude(max_tolerance / interval) - 1, count, period);
        int64_t x = rng_range(0, 2 * r.tolerance_ns + 2 * r.interval_ns);
        key k = {1, (uint64_t)(START + x)};
        rl_gcra_ns_result res = call(&r, &k, 0, START);
        int64_t next = r.tolerance_ns - x;
        int64_t want = next > -r.interval_ns ? (next / 1000) / (r.interval_ns / 1000) : 0;
        if (!CHECK(res.remaining == want && res.ttl_ns == x)) break;
    }
}

static void test_f64_beyond(void) {
    /* 3 per 10^10 s: 10^19 / 3 ns in f64 is 3333333333333333504, not ...333 (doubles there are 512 apart). */
    CHECK_EQ(rate_of(0, 3, 10000000000LL).interval_ns, 3333333333333333504LL);
    /* An interval under 1 µs has 0 whole µs: redis-cell divides by 0.0 and answers i64::MAX remaining
     * (or 0 when the numerator is 0 too). Reproduced, odd as it is; RL.LEAKY answers exactly. */
    rl_gcra_ns_rate r = rate_of(10, 2000000, 1); /* T = 500 ns, tau = 5500 ns */
    key k = {0, 0};
    rl_gcra_ns_result res = call(&r, &k, 1, START);
    CHECK(!res.limited && res.remaining == INT64_MAX);
    res = call(&r, &k, 10, START);
    CHECK(!res.limited && res.remaining == 0); /* tau - ttl = 0: 0 / 0.0 is NaN, as i64 0 */
    /* And whole µs truncate: T = 1999 ns counts as 1 µs, so remaining can pass the limit. */
    r = rate_of(999, 1000000000, 1999);
    CHECK_EQ(r.interval_ns, 1999);
    k = (key){0, 0};
    res = call(&r, &k, 0, START);
    CHECK(res.remaining == 1999 && res.limit == 1000);
}

/* --- the same GCRA as RL.LEAKY NODELAY ------------------------------------------------------------- */

typedef struct leaky_key {
    rl_cell cell;
    int exists;
} leaky_key;

static rl_reply leaky_call(leaky_key *k, int64_t capacity, int64_t count, int64_t period_s, int64_t cost,
                           int64_t now_us) {
    rl_request req = {.params = {capacity, count, period_s * 1000},
                      .cost = cost, .flags = RL_F_NODELAY | RL_F_COST, .now_us = now_us};
    char err[RL_ERR_LEN];
    CHECK(rl_leaky_algorithm.validate(&req, err) == 0);
    rl_reply reply;
    rl_leaky_algorithm.decide(&req, &k->cell, k->exists, &reply);
    k->exists = reply.reset_after_ms > 0; /* idle: the key goes */
    return reply;
}

static void test_same_as_leaky_nodelay(void) {
    int compared = 0;
    for (int traces = 0; traces < 100;) {
        int64_t period = rng_range(1, 3600), count = rng_range(1, 1000);
        if ((period * 1000000) % count != 0) continue; /* T a whole number of µs, as RL.LEAKY keeps time */
        traces++;
        int64_t max_burst = rng_range(0, 30);
        rl_gcra_ns_rate r = rate_of(max_burst, count, period);
        key k = {0, 0};
        leaky_key lk = {{{0, 0}}, 0};
        int64_t now_us = START / 1000;
        for (int i = 0; i < 400; i++) {
            int64_t step = rng() % 8 == 0 ? rng_range(0, 3 * r.tolerance_ns / 1000) : rng_range(0, r.interval_ns / 500);
            now_us += step;
            int64_t q = rng_range(0, max_burst + 2);
            rl_gcra_ns_result cl = call(&r, &k, q, (rl_i128)now_us * 1000);
            rl_reply lr = leaky_call(&lk, max_burst + 1, count, period, q, now_us);
            int same = cl.limited == !lr.allowed && cl.remaining == lr.remaining && cl.limit == lr.limit &&
                       cl.ttl_ns == (rl_i128)lr.reset_after_us * 1000 &&
                       (cl.retry_ns < 0 ? lr.retry_after_ms == -1 : (cl.retry_ns + MS - 1) / MS == lr.retry_after_ms);
            compared++;
            if (!CHECK(same)) {
                fprintf(stderr, "     %lld %lld %lld q=%lld: cl %lld %lld ttl %lld retry %lld; leaky %lld %lld %lld %lld\n",
                        (long long)max_burst, (long long)count, (long long)period, (long long)q, (long long)cl.limited,
                        (long long)cl.remaining, (long long)cl.ttl_ns, (long long)cl.retry_ns, (long long)lr.allowed,
                        (long long)lr.remaining, (long long)lr.reset_after_us, (long long)lr.retry_after_ms);
                return;
            }
        }
    }
    CHECK_EQ(compared, 100 * 400);
}

int main(void) {
    test_redis_cell_table();
    test_parse();
    test_rate();
    test_seconds();
    test_rules();
    test_f64_equals_integers();
    test_f64_beyond();
    test_same_as_leaky_nodelay();
    return check_summary("unit_gcra_ns");
}
