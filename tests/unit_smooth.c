/* unit_smooth.c -- tests of RL.SMOOTH's algorithm (algorithms/smooth.c), Guava's RateLimiter, on a fake
 * clock.
 *
 * Three kinds of evidence:
 *   - tables whose every number is worked out by hand below from Guava's formulas (SmoothBursty at 5/s,
 *     SmoothWarmingUp at 2/s over 4 s with cold factor 3, MAXWAIT, a rate change);
 *   - generated traces (random parameters, parameter changes, costs, MAXWAIT, gaps from 0 to beyond a
 *     full rest) against an independent reference written here: Guava's object as Guava keeps it (the
 *     derived fields stored, setRate as a method, a mode change as "resync, change the fields, setRate"),
 *     with the key's life around it (a rested limiter is dropped, a missing one is created rested) and its
 *     rest instant found by plain bisection. Every reply field and the stored permits and next free
 *     ticket of every state are compared; each trace is also replayed at another time base, which must
 *     change nothing (Guava works on differences of times);
 *   - the promises of the common reply that apply to a limiter that reserves: DRYRUN answers as the real
 *     call, a denied request with the key's parameters changes nothing, retry_after_ms is the first ms MAXWAIT is met,
 *     reset_after_us is exactly when the limiter is rested and from then on it answers as a new one, every
 *     written cell passes cell_valid. (tests/alg_checks.h's "remaining more are admitted, one more is
 *     not" does not apply: a reservation is granted whatever is stored.)
 * The real Guava is compared too, call by call, by tests/guava/ (make test). */
#define RNG_SEED 0x5deece66dULL
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "rng.h"
#include "../algorithms/smooth.h"

#define MS 1000LL
#define T0 (1700000000000LL * MS) /* an ordinary present-day time, Nov 2023 */

/* --- one limiter, as the module keeps it ------------------------------------------------------------ */

/* The decimals in millionths, as the parser gives them. */
typedef struct args {
    int64_t rate;        /* permits per second, millionths */
    int64_t warmup_ms;   /* > 0: WARMUP */
    int64_t cold_factor; /* > 0: COLDFACTOR, millionths */
    int64_t burst_ms;    /* >= 0: MAXBURST; -1: absent */
    int64_t cost;
    int64_t maxwait_ms;  /* >= 0: MAXWAIT; -1: absent */
} args;

#define M 1000000LL /* 1 in millionths */
static args bursty(int64_t rate) { return (args){rate, 0, 0, -1, 1, -1}; }
static args warmup(int64_t rate, int64_t warmup_ms) { return (args){rate, warmup_ms, 0, -1, 1, -1}; }

static rl_request request_of(const args *a, int64_t now_us, uint32_t extra) {
    rl_request req = {.params = {a->rate, 0, 0}, .cost = a->cost, .flags = extra, .now_us = now_us};
    if (a->warmup_ms > 0) {
        req.flags |= RL_F_WARMUP;
        req.params[1] = a->warmup_ms;
    }
    if (a->cold_factor > 0) {
        req.flags |= RL_F_COLDFACTOR;
        req.params[2] = a->cold_factor;
    }
    if (a->burst_ms >= 0) {
        req.flags |= RL_F_MAXBURST;
        req.params[1] = a->burst_ms;
    }
    if (a->maxwait_ms >= 0) {
        req.flags |= RL_F_MAXWAIT;
        req.maxwait_ms = a->maxwait_ms;
    }
    return req;
}

typedef struct key {
    rl_cell cell;
    int exists;
} key;

static const rl_algorithm *alg = &rl_smooth_algorithm;
static char err[RL_ERR_LEN];

static rl_reply decide_on(const key *k, const rl_request *req, rl_cell *out) {
    rl_reply r;
    memset(&r, 0xa5, sizeof r); /* a field left unset shows */
    if (k->exists)
        *out = k->cell;
    else
        out->w[0] = out->w[1] = 0;
    alg->decide(req, out, k->exists, &r);
    return r;
}

static int same_reply(const rl_reply *a, const rl_reply *b) {
    return a->allowed == b->allowed && a->limit == b->limit && a->remaining == b->remaining &&
           a->retry_after_ms == b->retry_after_ms && a->reset_after_ms == b->reset_after_ms &&
           a->wait_ms == b->wait_ms && a->granted == b->granted && a->reset_after_us == b->reset_after_us;
}

static void print_reply(const char *label, const rl_reply *r) {
    fprintf(stderr, "     %s: allowed %lld limit %lld remaining %lld retry %lld reset %lld (%lld us) wait %lld granted %lld\n",
            label, (long long)r->allowed, (long long)r->limit, (long long)r->remaining, (long long)r->retry_after_ms,
            (long long)r->reset_after_ms, (long long)r->reset_after_us, (long long)r->wait_ms, (long long)r->granted);
}

static void check_same(const char *what, const rl_reply *got, const rl_reply *want) {
    if (check_record(same_reply(got, want), __FILE__, __LINE__, what)) return;
    print_reply("got     ", got);
    print_reply("expected", want);
}

/* A DRYRUN: the key is left as it was. */
static rl_reply probe(const key *k, const args *a, int64_t now_us) {
    rl_request req = request_of(a, now_us, RL_F_DRYRUN);
    rl_cell c;
    return decide_on(k, &req, &c);
}

/* A real call, with the promises that hold around every call checked. */
static rl_reply call(key *k, const args *a, int64_t now_us) {
    rl_request req = request_of(a, now_us, 0);
    CHECK(alg->validate(&req, err) == 0);
    rl_cell next;
    rl_reply r = decide_on(k, &req, &next);
    rl_reply dry = probe(k, a, now_us);
    check_same("DRYRUN answers exactly as the real call", &dry, &r);
    CHECK(alg->words(&next) == RL_SMOOTH_WORDS);
    CHECK_EQ(r.granted, r.allowed ? a->cost : 0);
    CHECK_EQ(r.reset_after_ms, (r.reset_after_us + 999) / 1000);
    if (!r.allowed) {
        /* Nothing changes but, when they differ, the parameters (setRate), never the ticket ahead. */
        CHECK(k->exists);
        if (memcmp(&next, &k->cell, RL_SMOOTH_WORDS * 8) != 0) {
            rl_cell fresh;
            key none = {0};
            decide_on(&none, &req, &fresh); /* the words of the request's parameters */
            CHECK(memcmp(next.w, fresh.w, 4 * 8) == 0 && memcmp(k->cell.w, fresh.w, 4 * 8) != 0);
            CHECK_EQ(next.w[5], k->cell.w[5]);
        }
        CHECK_EQ(r.wait_ms, 0);
        CHECK(r.retry_after_ms >= 1);
    } else {
        CHECK_EQ(r.retry_after_ms, -1);
    }
    if (r.reset_after_ms > 0) CHECK(alg->cell_valid(&next));
    k->exists = r.reset_after_ms > 0;
    k->cell = next;
    return r;
}

/* --- tables worked out by hand ---------------------------------------------------------------------- */

typedef struct row {
    int64_t at_ms;
    int64_t allowed, limit, remaining, retry_ms, reset_ms, wait_ms;
} row;

static void run_rows(const char *name, key *k, const args *a, const row *rows, size_t n) {
    for (size_t i = 0; i < n; i++) {
        rl_reply r = call(k, a, T0 + rows[i].at_ms * MS);
        const row *w = &rows[i];
        int ok = r.allowed == w->allowed && r.limit == w->limit && r.remaining == w->remaining &&
                 r.retry_after_ms == w->retry_ms && r.reset_after_ms == w->reset_ms && r.wait_ms == w->wait_ms;
        char what[96];
        snprintf(what, sizeof what, "%s, row %zu", name, i + 1);
        if (!check_record(ok, __FILE__, __LINE__, what)) {
            print_reply("got", &r);
            fprintf(stderr, "     expected: allowed %lld limit %lld remaining %lld retry %lld reset %lld wait %lld\n",
                    (long long)w->allowed, (long long)w->limit, (long long)w->remaining, (long long)w->retry_ms,
                    (long long)w->reset_ms, (long long)w->wait_ms);
        }
    }
}
#define RUN_ROWS(k, a, rows) run_rows(#rows, (k), (a), (rows), sizeof(rows) / sizeof((rows)[0]))

/* RateLimiter.create(5) with MAXBURST 0, i.e. nothing stored, as a fresh Guava limiter: stableInterval =
 * 10^6 / 5 = 200000 µs, maxPermits = 0 * 5 = 0. Each acquire() comes when the previous one's wait ends,
 * as Guava's tests call it: the waits are Guava's documented 0, 0.2 s, 0.2 s, ... Each call pushes
 * nextFreeTicket 200 ms further: the limiter is rested (nothing to store) at that ticket. */
static const row bursty_fresh[] = {
    {0, 1, 0, 0, -1, 200, 0},
    {0, 1, 0, 0, -1, 400, 200},
    {200, 1, 0, 0, -1, 400, 200},
    {400, 1, 0, 0, -1, 400, 200},
    {1000, 1, 0, 0, -1, 200, 0}, /* idle since 800 ms: the next is free */
};

/* RateLimiter.create(5) as a missing key: rested, storedPermits = maxPermits = 1 s * 5 = 5. Five stored
 * permits cost nothing (SmoothBursty.storedPermitsToWaitTime is 0), nor does the sixth's wait (the ticket
 * is still now); it is charged as fresh, 200 ms, to the seventh. Rest: one permit per stable interval,
 * (5 - stored) * 200 ms after nextFreeTicket. */
static const row bursty_rested[] = {
    {0, 1, 5, 4, -1, 200, 0},
    {0, 1, 5, 3, -1, 400, 0},
    {0, 1, 5, 2, -1, 600, 0},
    {0, 1, 5, 1, -1, 800, 0},
    {0, 1, 5, 0, -1, 1000, 0},
    {0, 1, 5, 0, -1, 1200, 0},   /* ticket now, next free at 200 */
    {0, 1, 5, 0, -1, 1400, 200}, /* ticket 200, next free at 400 */
    {400, 1, 5, 0, -1, 1200, 0}, /* ticket 400, next at 600 */
    {700, 1, 5, 0, -1, 1100, 0}, /* resync: 100 ms idle = 0.5 stored, spent, the other half charged: next at 800 */
    {2000, 1, 5, 4, -1, 200, 0}, /* rested at 1800: a new limiter */
};

/* RateLimiter.create(2, 4000 ms) (cold factor 3), calls back to back as acquire() sleeps:
 *   stableInterval = 500000, coldInterval = 1500000, thresholdPermits = 0.5 * 4e6 / 5e5 = 4,
 *   maxPermits = 4 + 2 * 4e6 / (5e5 + 1.5e6) = 8, slope = (1.5e6 - 5e5) / (8 - 4) = 250000 µs per permit,
 *   coolDownInterval = 4e6 / 8 = 500000. Cold (stored 8): a permit above the threshold costs the
 *   trapezoid (permitsToTime(x) + permitsToTime(x - 1)) / 2 with x = stored - 4 and permitsToTime(x) =
 *   5e5 + 2.5e5 x: x = 4: (1.5e6 + 1.25e6) / 2 = 1.375 s; x = 3: 1.125 s; x = 2: 0.875 s; x = 1: 0.625 s;
 *   then 0.5 s each. Guava's documented waits 0, 1.38, 1.13, 0.88, 0.63, 0.50, 0.50 (each call comes
 *   when the previous one's wait ends). Rest: (8 - stored) * 500 ms after nextFreeTicket. */
static const row warm_cold_start[] = {
    {0, 1, 8, 7, -1, 1875, 0},
    {0, 1, 8, 6, -1, 3500, 1375},
    {1375, 1, 8, 5, -1, 3500, 1125},
    {2500, 1, 8, 4, -1, 3500, 875},
    {3375, 1, 8, 3, -1, 3625, 625},
    {4000, 1, 8, 2, -1, 4000, 500},
    {4500, 1, 8, 1, -1, 4500, 500},
};

/* Bursty 1/s, MAXBURST 0: each permit charges 1 s. MAXWAIT is tryAcquire(1, timeout): denied when
 * nextFreeTicket - timeout > now; retry when it is not. */
static const row maxwait[] = {
    {0, 1, 0, 0, -1, 1000, 0},
    {0, 0, 0, 0, 1, 1000, 0},    /* MAXWAIT 999: ticket 1000 - 999 > 0; nothing changes */
    {1, 1, 0, 0, -1, 1999, 999}, /* 1 ms later it is met */
    {500, 0, 0, 0, 501, 1500, 0},
    {1001, 1, 0, 0, -1, 1999, 999},
};

static void test_tables(void) {
    key k = {0};
    args a = bursty(5 * M);
    a.burst_ms = 0;
    RUN_ROWS(&k, &a, bursty_fresh);
    k = (key){0};
    a = bursty(5 * M);
    RUN_ROWS(&k, &a, bursty_rested);
    k = (key){0};
    a = warmup(2 * M, 4000);
    RUN_ROWS(&k, &a, warm_cold_start);

    k = (key){0};
    a = bursty(1 * M);
    a.burst_ms = 0;
    a.maxwait_ms = 999;
    run_rows("maxwait", &k, &a, maxwait, 5);
}

/* setRate: bursty 2/s (max 2) takes both stored permits at 0; at 250 ms at 4/s: resync under 2/s gives
 * 0.25 s * 2 = 0.5 stored, rescaled by 4 / 2 to 1.0, which the request spends: 0 left of max 4, rest in
 * 4 * 250 ms. Then a warm-up (2/s over 4 s, max 8) from that bursty state (0 stored, max 4, ticket 250):
 * 0 * 8 / 4 = 0 stored, all 8 to come back at 500 ms each, and a fresh permit at the stable 500 ms. */
static void test_set_rate(void) {
    key k = {0};
    args a = bursty(2 * M);
    a.cost = 2;
    rl_reply r = call(&k, &a, T0);
    CHECK(r.allowed == 1 && r.remaining == 0 && r.limit == 2 && r.wait_ms == 0 && r.reset_after_ms == 1000);
    a = bursty(4 * M);
    r = call(&k, &a, T0 + 250 * MS);
    CHECK(r.allowed == 1 && r.limit == 4 && r.remaining == 0 && r.wait_ms == 0 && r.reset_after_ms == 1000);
    CHECK_EQ(k.cell.w[1], 4 * M); /* the key keeps the last rate */
    a = warmup(2 * M, 4000);
    r = call(&k, &a, T0 + 250 * MS);
    CHECK(r.allowed == 1 && r.limit == 8 && r.remaining == 0 && r.wait_ms == 0);
    CHECK_EQ(r.reset_after_ms, 500 + 8 * 500);
    /* Back to bursty 2/s: max 8 -> 1 s * 2 = 2; 0 stored stays 0. */
    a = bursty(2 * M);
    r = call(&k, &a, T0 + 750 * MS);
    CHECK(r.allowed == 1 && r.limit == 2 && r.remaining == 0 && r.wait_ms == 0);
    CHECK_EQ(r.reset_after_ms, 500 + 2 * 500);
}

/* --- the independent reference ---------------------------------------------------------------------- */

/* Guava's object, its derived fields kept as Guava keeps them. */
typedef struct guava {
    int warm;
    double maxBurstSeconds;       /* SmoothBursty */
    int64_t warmupPeriodMicros;   /* SmoothWarmingUp */
    double coldFactor, thresholdPermits, slope;
    double storedPermits, maxPermits, stableIntervalMicros, rate;
    int64_t nextFreeTicketMicros;
} guava;

static int64_t ref_long(double x) { /* Java's (long): within the bounds a truncation, else saturate */
    if (isnan(x)) return 0;
    if (x < -0x1p63) return INT64_MIN;
    if (x >= 0x1p63) return INT64_MAX;
    return (int64_t)x; /* C's cast truncates too */
}

static double ref_min(double a, double b) { return b < a ? b : a; }

/* A decimal argument as Java's Double.parseDouble reads its text. */
static double ref_decimal(int64_t millionths) {
    char text[40];
    snprintf(text, sizeof text, "%lld.%06lld", (long long)(millionths / M), (long long)(millionths % M));
    return strtod(text, NULL);
}

static double ref_cool_down(const guava *g) {
    return g->warm ? (double)g->warmupPeriodMicros / g->maxPermits : g->stableIntervalMicros;
}

static void ref_resync(guava *g, int64_t now) {
    if (now <= g->nextFreeTicketMicros) return;
    double gained = (double)(now - g->nextFreeTicketMicros) / ref_cool_down(g);
    g->storedPermits = ref_min(g->maxPermits, g->storedPermits + gained);
    g->nextFreeTicketMicros = now;
}

/* doSetRate(double, long), both levels. */
static void ref_set_rate(guava *g, double rate, int64_t now) {
    ref_resync(g, now);
    g->rate = rate;
    g->stableIntervalMicros = 1e6 / rate;
    double oldMax = g->maxPermits;
    if (!g->warm) {
        g->maxPermits = g->maxBurstSeconds * rate;
        g->storedPermits = oldMax == 0.0 ? 0.0 : g->storedPermits * g->maxPermits / oldMax;
        return;
    }
    double cold = g->stableIntervalMicros * g->coldFactor;
    g->thresholdPermits = 0.5 * (double)g->warmupPeriodMicros / g->stableIntervalMicros;
    g->maxPermits = g->thresholdPermits + 2.0 * (double)g->warmupPeriodMicros / (g->stableIntervalMicros + cold);
    g->slope = (cold - g->stableIntervalMicros) / (g->maxPermits - g->thresholdPermits);
    g->storedPermits = oldMax == 0.0 ? g->maxPermits : g->storedPermits * g->maxPermits / oldMax;
}

static int64_t ref_stored_wait(const guava *g, double stored, double take) {
    if (!g->warm) return 0;
    int64_t us = 0;
    double above = stored - g->thresholdPermits;
    if (above > 0.0) {
        double t = ref_min(above, take);
        double hi = g->stableIntervalMicros + above * g->slope;
        double lo = g->stableIntervalMicros + (above - t) * g->slope;
        us = ref_long(t * (hi + lo) / 2.0);
        take -= t;
    }
    return us + ref_long(g->stableIntervalMicros * take);
}

/* reserve: the wait of this request. */
static int64_t ref_reserve(guava *g, int64_t permits, int64_t now) {
    ref_resync(g, now);
    int64_t ticket = g->nextFreeTicketMicros;
    double spend = ref_min((double)permits, g->storedPermits);
    int64_t charge = ref_stored_wait(g, g->storedPermits, spend) + ref_long(((double)permits - spend) * g->stableIntervalMicros);
    g->nextFreeTicketMicros += charge; /* far from saturating within the bounds */
    g->storedPermits -= spend;
    return ticket - now > 0 ? ticket - now : 0;
}

/* Configure the subclass fields of args (maxPermits is left: doSetRate reads it as the old one). */
static void ref_configure(guava *g, const args *a) {
    g->warm = a->warmup_ms > 0;
    g->maxBurstSeconds = (double)(a->burst_ms >= 0 ? a->burst_ms : 1000) / 1000.0;
    g->warmupPeriodMicros = a->warmup_ms * 1000;
    g->coldFactor = a->cold_factor > 0 ? ref_decimal(a->cold_factor) : 3.0;
}

static int ref_same_config(const guava *g, const args *a) {
    guava c = *g;
    ref_configure(&c, a);
    return c.warm == g->warm && ref_decimal(a->rate) == g->rate &&
           (g->warm ? c.warmupPeriodMicros == g->warmupPeriodMicros && c.coldFactor == g->coldFactor
                    : c.maxBurstSeconds == g->maxBurstSeconds);
}

static int ref_rested(const guava *g, int64_t now) {
    if (now < g->nextFreeTicketMicros) return 0;
    guava c = *g;
    ref_resync(&c, now);
    return c.storedPermits == c.maxPermits;
}

/* The rest instant, by bisection over the whole range. */
static int64_t ref_rest_at(const guava *g) {
    int64_t lo = g->nextFreeTicketMicros - 1, hi = g->nextFreeTicketMicros + (1LL << 56);
    if (ref_rested(g, g->nextFreeTicketMicros)) return g->nextFreeTicketMicros;
    lo = g->nextFreeTicketMicros;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ref_rested(g, mid))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

typedef struct ref_key {
    guava g;
    int exists;
} ref_key;

static void ref_describe(const guava *g, int64_t now, rl_reply *r) {
    r->limit = (int64_t)g->maxPermits; /* >= 0: truncation is floor */
    r->remaining = (int64_t)g->storedPermits;
    if (r->remaining > r->limit) r->remaining = r->limit; /* a rescale's rounding above max */
    int64_t rest = ref_rest_at(g) - now;
    r->reset_after_us = rest;
    r->reset_after_ms = (rest + 999) / 1000;
}

static rl_reply ref_call(ref_key *k, const args *a, int64_t now) {
    rl_reply r = {0};
    if (k->exists && ref_rested(&k->g, now)) k->exists = 0; /* the key expired */
    if (!k->exists) {                                       /* Guava after a long idle */
        memset(&k->g, 0, sizeof k->g);
        ref_configure(&k->g, a);
        ref_set_rate(&k->g, ref_decimal(a->rate), now);
        k->g.storedPermits = k->g.maxPermits;
        k->g.nextFreeTicketMicros = now;
        k->exists = 1;
    } else {
        if (!ref_same_config(&k->g, a)) { /* the user's setRate, then tryAcquire */
            ref_resync(&k->g, now);
            ref_configure(&k->g, a);
            ref_set_rate(&k->g, ref_decimal(a->rate), now);
        }
        int64_t timeout = a->maxwait_ms >= 0 ? a->maxwait_ms * MS : RL_SMOOTH_MAX_CHARGE_MS * MS;
        if (k->g.nextFreeTicketMicros - timeout > now) { /* tryAcquire refuses */
            ref_describe(&k->g, now, &r); /* the key as it is, its parameters set */
            r.retry_after_ms = (k->g.nextFreeTicketMicros - timeout - now + 999) / 1000;
            return r;
        }
    }
    int64_t wait = ref_reserve(&k->g, a->cost, now);
    r.allowed = 1;
    r.granted = a->cost;
    r.retry_after_ms = -1;
    r.wait_ms = (wait + 999) / 1000;
    ref_describe(&k->g, now, &r);
    if (r.reset_after_us == 0) k->exists = 0;
    return r;
}

static uint64_t bits(double d) {
    uint64_t w;
    memcpy(&w, &d, sizeof w);
    return w;
}

/* --- generated traces ------------------------------------------------------------------------------- */

static int64_t random_rate(void) {
    static const int64_t rates[] = {1, 1000, 100000, 500000, 1 * M, 2 * M, 3 * M, 3300000, 5 * M, 7250000, 10 * M,
                                    100 * M, 333300000, 1000 * M, 12345678000, 1000000 * M, RL_SMOOTH_MAX_RATE};
    if (rng() % 4 == 0) return rng_range(1, 1000 * M);
    return rates[rng() % (sizeof rates / sizeof rates[0])];
}

static args random_args(void) {
    args a = bursty(random_rate());
    switch (rng() % 4) {
    case 0: a.burst_ms = rng() % 3 == 0 ? 0 : rng_magnitude(100000); break;
    case 1: break;
    default:
        a.warmup_ms = rng_magnitude(100000);
        if (rng() % 2) a.cold_factor = rng() % 3 == 0 ? M : rng_range(100, 2000) * 10000;
    }
    return a;
}

/* A cost the bounds accept for a: mostly 1 to a few, sometimes up to what one charge may be. */
static int64_t random_cost(const args *a) {
    double factor = a->warmup_ms > 0 ? (a->cold_factor > 0 ? (double)a->cold_factor / 1e6 : 3.0) : 1.0;
    double most = (double)RL_SMOOTH_MAX_CHARGE_MS * ((double)a->rate / 1e6) / (1000.0 * factor) * 0.999;
    int64_t cap = most > 1e6 ? 1000000 : most < 1 ? 1 : (int64_t)most;
    if (rng() % 6 == 0) return rng_range(1, cap);
    return rng_range(1, cap < 4 ? cap : 4);
}

/* A gap: none, a few µs, a fraction of a permit's interval, a few intervals, or long idle. */
static int64_t random_gap(const args *a) {
    double interval = 1e12 / (double)a->rate;
    switch (rng() % 6) {
    case 0: return 0;
    case 1: return rng_range(0, 3);
    case 2: return (int64_t)(interval * (double)rng_range(0, 100) / 100.0) % (1000000LL * MS);
    case 3: {
        double d = interval * (double)rng_range(1, 20);
        return d < 1e9 ? (int64_t)d : 1000000000;
    }
    case 4: return rng_range(0, 5000 * MS);
    default: return rng_range(0, 200000 * MS);
    }
}

typedef struct step {
    args a;
    int64_t gap;
} step;

#define TRACE_STEPS 120

static void run_trace(const step *steps, int n, int64_t base, rl_reply *replies, int compare_ref) {
    key k = {0};
    ref_key rk = {{0}, 0};
    int64_t now = base;
    for (int i = 0; i < n; i++) {
        now += steps[i].gap;
        rl_reply got = call(&k, &steps[i].a, now);
        replies[i] = got;
        if (!compare_ref) continue;
        rl_reply want = ref_call(&rk, &steps[i].a, now);
        char what[64];
        snprintf(what, sizeof what, "trace step %d: the reference's reply", i);
        check_same(what, &got, &want);
        CHECK_EQ(k.exists, rk.exists);
        if (k.exists && rk.exists) {
            CHECK(k.cell.w[4] == bits(rk.g.storedPermits));
            CHECK_EQ((int64_t)k.cell.w[5], rk.g.nextFreeTicketMicros);
        }
        if (!same_reply(&got, &want)) return; /* one report per trace */
    }
}

static void test_traces(void) {
    static step steps[TRACE_STEPS];
    static rl_reply first[TRACE_STEPS], second[TRACE_STEPS];
    for (int t = 0; t < 400; t++) {
        args a = random_args();
        for (int i = 0; i < TRACE_STEPS; i++) {
            if (rng() % 10 == 0) a = random_args();                            /* new parameters */
            if (rng() % 15 == 0) a.rate = random_rate();                       /* setRate proper */
            a.cost = random_cost(&a);
            a.maxwait_ms = rng() % 3 == 0 ? rng_range(0, 3000) : -1;
            steps[i] = (step){a, random_gap(&a)};
        }
        run_trace(steps, TRACE_STEPS, T0, first, 1);
        /* The time base changes nothing: only differences of times enter the arithmetic. */
        int64_t offset = rng_range(-T0 / 2, T0 / 2);
        run_trace(steps, TRACE_STEPS, T0 + offset, second, 0);
        int same = 1;
        for (int i = 0; i < TRACE_STEPS; i++) same &= same_reply(&first[i], &second[i]);
        CHECK(same);
    }
}

/* --- promises --------------------------------------------------------------------------------------- */

/* After a call, at reset_after_us the limiter is rested: a probe says 0, one a µs earlier does not, and
 * from then on it answers (and stores) as a new one. A denied reply's retry is the first ms it would be
 * granted. */
static void test_promises(void) {
    for (int t = 0; t < 300; t++) {
        key k = {0};
        args a = random_args();
        int64_t now = T0;
        for (int i = 0; i < 40; i++) {
            now += random_gap(&a);
            a.cost = random_cost(&a);
            a.maxwait_ms = rng() % 3 == 0 ? rng_range(0, 3000) : -1;
            rl_reply r = call(&k, &a, now);
            if (!r.allowed) {
                CHECK_EQ(probe(&k, &a, now + (r.retry_after_ms - 1) * MS).allowed, 0);
                CHECK_EQ(probe(&k, &a, now + r.retry_after_ms * MS).allowed, 1);
            }
            if (r.reset_after_us == 0) {
                CHECK(!k.exists);
                continue;
            }
            args look = a;
            look.maxwait_ms = -1;
            CHECK(probe(&k, &look, now + r.reset_after_us - 1).reset_after_us > 0);
            int64_t at[] = {now + r.reset_after_us, now + r.reset_after_ms * MS, now + r.reset_after_us + 12345};
            for (int j = 0; j < 3; j++) {
                key fresh = {0};
                rl_request req = request_of(&look, at[j], 0);
                rl_cell kept_cell, new_cell;
                rl_reply kept = decide_on(&k, &req, &kept_cell), anew = decide_on(&fresh, &req, &new_cell);
                check_same("a rested limiter answers as a new one", &kept, &anew);
                if (anew.reset_after_ms > 0) CHECK(memcmp(&kept_cell, &new_cell, RL_SMOOTH_WORDS * 8) == 0);
            }
        }
    }
}

/* --- bounds ----------------------------------------------------------------------------------------- */

static void test_validate(void) {
    args a = bursty(1 * M);
    a.cold_factor = 3 * M;
    rl_request req = request_of(&a, T0, 0);
    CHECK(alg->validate(&req, err) == -1);
    CHECK_STR(err, "ERR COLDFACTOR: applies to the warm-up form only (needs WARMUP)");

    a = bursty(1 * M); /* 1 permit = 1000 ms: 10^9 permits is the most one reservation may charge */
    a.cost = 1000000000;
    req = request_of(&a, T0, 0);
    CHECK(alg->validate(&req, err) == 0);
    a.cost++;
    req = request_of(&a, T0, 0);
    CHECK(alg->validate(&req, err) == -1);
    CHECK_STR(err, "ERR COST: COST / permits_per_second must not exceed 1000000000000 ms");
    a = warmup(1 * M, 1000);
    a.cost = 1000000000 / 3 + 1;
    req = request_of(&a, T0, 0);
    CHECK(alg->validate(&req, err) == -1);
    CHECK_STR(err, "ERR COST: COST * COLDFACTOR / permits_per_second must not exceed 1000000000000 ms");
    a.cost--;
    req = request_of(&a, T0, 0);
    CHECK(alg->validate(&req, err) == 0);
}

/* The extremes of every bound: the numbers stay finite, the times inside int64, the reply sane. */
static void test_extremes(void) {
    static const int64_t rates[] = {RL_SMOOTH_MIN_RATE, 1 * M, RL_SMOOTH_MAX_RATE};
    static const int64_t periods[] = {1, 1000, RL_MAX_PERIOD_MS};
    static const int64_t colds[] = {1 * M, 3 * M, RL_SMOOTH_MAX_COLD_FACTOR};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int c = 0; c < 4; c++) {
                args a = c == 3 ? bursty(rates[i]) : warmup(rates[i], periods[j]);
                if (c == 3) a.burst_ms = periods[j] == 1 ? 0 : periods[j];
                else a.cold_factor = colds[c];
                double factor = c == 3 ? 1 : (double)colds[c] / 1e6;
                double most = (double)RL_SMOOTH_MAX_CHARGE_MS * ((double)rates[i] / 1e6) / (1000.0 * factor) * 0.999;
                a.cost = most > (double)RL_MAX_COUNT ? RL_MAX_COUNT : most < 1 ? 1 : (int64_t)most;
                rl_request req = request_of(&a, T0, 0);
                if (alg->validate(&req, err) != 0) {
                    CHECK(most < 1); /* only a single permit beyond the charge bound is refused */
                    continue;
                }
                key k = {0};
                int64_t now = T0;
                ref_key rk = {{0}, 0};
                for (int n = 0; n < 6; n++) {
                    rl_reply r = call(&k, &a, now), w = ref_call(&rk, &a, now);
                    check_same("an extreme limiter matches the reference", &r, &w);
                    CHECK(r.reset_after_us >= 0 && r.reset_after_us <= 4 * RL_SMOOTH_MAX_CHARGE_MS * MS);
                    CHECK(r.remaining >= 0 && r.remaining <= r.limit + 1);
                    now += n * 997 * MS;
                }
            }
}

static void test_cell_valid(void) {
    key k = {0};
    args a = warmup(2 * M, 4000);
    call(&k, &a, T0);
    CHECK(alg->cell_valid(&k.cell));
    rl_cell c = k.cell;
    c.w[0] = 3;
    CHECK(!alg->cell_valid(&c));
    c = k.cell;
    c.w[1] = 0; /* a rate of 0 */
    CHECK(!alg->cell_valid(&c));
    c.w[1] = RL_SMOOTH_MAX_RATE + 1;
    CHECK(!alg->cell_valid(&c));
    c.w[1] = (uint64_t)-1;
    CHECK(!alg->cell_valid(&c));
    c = k.cell;
    c.w[2] = 0; /* a warm-up period of 0 */
    CHECK(!alg->cell_valid(&c));
    c = k.cell;
    c.w[3] = M / 2; /* a cold factor below 1 */
    CHECK(!alg->cell_valid(&c));
    c = k.cell;
    c.w[4] = bits(-1.0);
    CHECK(!alg->cell_valid(&c));
    c.w[4] = bits(9.0); /* max is 8 */
    CHECK(!alg->cell_valid(&c));
    c.w[4] = bits(NAN);
    CHECK(!alg->cell_valid(&c));
    c = k.cell;
    c.w[5] = (uint64_t)INT64_MAX;
    CHECK(!alg->cell_valid(&c));
    k = (key){0};
    a = bursty(2 * M);
    call(&k, &a, T0);
    c = k.cell;
    CHECK(alg->cell_valid(&c));
    c.w[3] = 3 * M; /* a cold factor on a bursty state */
    CHECK(!alg->cell_valid(&c));
}

int main(void) {
    test_tables();
    test_set_rate();
    test_traces();
    test_promises();
    test_validate();
    test_extremes();
    test_cell_valid();
    return check_summary("unit_smooth");
}
