/* unit_window.c -- tests of the window counters (algorithms/window.c), driven by a fake clock.
 *
 * The harness in alg_checks.h plays the module (it keeps the cell between calls, stores it unless DRYRUN
 * and drops the key when the reply says idle) and checks the promises every algorithm's reply makes. This
 * file brings what is the window counters' own: scripted tables of both modes with every reply field
 * (boundaries, a clock stepping back, resizes, the extremes), REFUND and ATMOST tables in both modes
 * (the previous count after a roll-over, a fractional estimate, 10^12), the cell's packing and "idle is
 * new" across modes, the parameter space and gaps for the pseudo-random runs of the generic promises
 * (refunds, ATMOST and FORCE included), and long steady runs compared with a naive model that keeps every
 * window's count in an array (FORCE in some). FORCE tables in every mode: over the limit, repaid as the
 * window forgets its counts, saturated at 10^12. */
#include <stdlib.h>

#define RNG_SEED 0x243f6a8885a308d3ULL
#include "alg_checks.h"
#include "../algorithms/window.h"

#define MS 1000LL
#define SEC (1000 * MS)
/* An ordinary present-day time (Nov 2023), a multiple of 60 s and of 3 ms: window boundaries fall on
 * round offsets from it. */
#define BASE_MS 1700000040000LL
#define BASE_US (BASE_MS * MS)
#define BIG 1000000000000LL /* 10^12 */

/* Window counters on the harness's stand-in for the module (params[2] is unused). */
static limiter new_window(int64_t limit, int64_t window_ms) {
    return limiter_new(&rl_window_algorithm, limit, window_ms, 0);
}

/* --- scripted tables -------------------------------------------------------------------------------- */

/* wait_ms is always 0 for a window: the last column of every row. */

/* 10 per minute, sliding. 8 requests in the first window; 15 s into the next, they still weigh
 * 8 * 45/60 = 6, so 4 more fit. The next one fits once the weight is down to 5: 22.5 s in. */
static const row cloudflare[] = {
    {10 * SEC, 8, 0, 1, 2, -1, 110000, 0},
    {75 * SEC, 1, 0, 1, 3, -1, 105000, 0},
    {75 * SEC, 3, 0, 1, 0, -1, 105000, 0},
    {75 * SEC, 1, 0, 0, 0, 7500, 105000, 0},
    {82499 * MS, 1, 0, 0, 0, 1, 97501, 0},                /* weight 5.0002: 1 ms early */
    {82500 * MS, 1, 0, 1, 0, -1, 97500, 0},
    {82500 * MS, 1, 0, 0, 0, 7500, 97500, 0},             /* weight 4 needed: 30 s in */
    {119999 * MS, 6, RL_F_DRYRUN, 0, 4, 12001, 60001, 0}, /* next window: 5 * (60-12)/60 + 6 = 10 */
    {119999 * MS, 10, RL_F_DRYRUN, 0, 4, 60001, 60001, 0}, /* only once both windows are empty */
    {119999 * MS, 11, 0, 0, 4, -1, 60001, 0},             /* more than the limit: never */
    {120 * SEC, 5, 0, 1, 0, -1, 120000, 0},
    {150 * SEC, 2, 0, 1, 0, -1, 90000, 0},
    {235 * SEC, 0, 0, 1, 9, -1, 5000, 0}, /* only the previous window weighs: idle at its end */
    {240 * SEC, 0, 0, 1, 10, -1, 0, 0},
};

/* Fixed windows of 1 s, limit 3: the boundary resets the count. The counts are shared with SLIDING,
 * which sees the previous window that FIXED ignores. */
static const row fixed_boundary[] = {
    {999 * MS, 3, RL_F_FIXED, 1, 0, -1, 1, 0},
    {999500, 1, RL_F_FIXED, 0, 0, 1, 1, 0},
    {1000 * MS, 3, RL_F_FIXED, 1, 0, -1, 1000, 0},
    {1000 * MS, 4, RL_F_FIXED, 0, 0, -1, 1000, 0},
    {1000 * MS, 0, RL_F_FIXED, 1, 0, -1, 1000, 0},
    {1500 * MS, 1, RL_F_SLIDING, 0, 0, 834, 1500, 0}, /* 3 * (1000-334)/1000 + 1 <= 3 */
    {1500 * MS, 1, RL_F_FIXED, 0, 0, 500, 500, 0},
    {2000 * MS, 2, RL_F_FIXED, 1, 1, -1, 1000, 0},
    /* SLIDING reads the FIXED write of [1000, 2000): idle since 2000 (its key would have expired), so its
     * 3 do not weigh as the previous window's; only this window's 2 count. */
    {2000 * MS, 0, 0, 1, 1, -1, 2000, 0},
    {3000 * MS, 0, RL_F_FIXED, 1, 3, -1, 0, 0},
};

/* The clock steps back into the previous window after the limit was reached: the decision is made at
 * the start of the stored window (nothing gained). The FIXED calls there leave a FIXED write of
 * [1000, 2000), idle (its key expired) when that window ends: at 2200 the limiter is new. */
static const row clock_back[] = {
    {1500 * MS, 5, 0, 1, 0, -1, 1500, 0},
    {900 * MS, 1, 0, 0, 0, 1300, 2100, 0},
    {900 * MS, 0, RL_F_FIXED, 1, 0, -1, 1100, 0},
    {900 * MS, 1, RL_F_FIXED, 0, 0, 1100, 1100, 0},
    {2200 * MS, 1, 0, 1, 4, -1, 1800, 0},
};

/* The window grows from 1 s to 3 s, then shrinks back: the stored window is mapped onto the new grid
 * at floor(start / W), its counts kept. */
static const row resize_1s[] = {
    {1500 * MS, 4, 0, 1, 6, -1, 1500, 0},
    {2500 * MS, 3, 0, 1, 5, -1, 1500, 0},
};
static const row resize_3s[] = {
    {2600 * MS, 5, 0, 1, 1, -1, 3400, 0}, /* window [2000, 3000) counts as [0, 3000): 4*400/3000 + 3 + 5 */
    {3000 * MS, 3, 0, 0, 2, 375, 3000, 0},
};
static const row resize_back[] = {
    {3375 * MS, 3, 0, 1, 2, -1, 1625, 0}, /* [0, 3000)'s 8 are now the 1 s window before [3000, 4000) */
};

/* Limit 10^12 per 10^12 ms, at the end of the clock's range (2^46 ms - 1). */
static const row huge[] = {
    {0, BIG, 0, 1, 0, -1, 1631255822337LL, 0},
    {0, 1, 0, 0, 0, 631255822338LL, 1631255822337LL, 0},
    {1000, 1, RL_F_FIXED, 0, 0, 631255822336LL, 631255822336LL, 0},
    {0, BIG, RL_F_DRYRUN, 0, 0, 1631255822337LL, 1631255822337LL, 0},
    {0, BIG + 1, 0, 0, 0, -1, 1631255822337LL, 0},
};

static void test_tables(void) {
    RUN_TABLE_NEW(new_window(10, 60000), BASE_US, cloudflare);
    RUN_TABLE_NEW(new_window(3, 1000), BASE_US, fixed_boundary);
    RUN_TABLE_NEW(new_window(5, 1000), BASE_US, clock_back);

    limiter l = new_window(10, 1000);
    RUN_TABLE(&l, BASE_US, resize_1s);
    l.params[1] = 3000;
    RUN_TABLE(&l, BASE_US, resize_3s);
    l.params[1] = 1000;
    RUN_TABLE(&l, BASE_US, resize_back);

    RUN_TABLE_NEW(new_window(BIG, BIG), RL_MAX_TIME_US - 1000, huge);
}

/* REFUND and ATMOST; every row spells out granted. */
#define R RL_F_REFUND
#define A RL_F_ATMOST
#define F RL_F_FIXED

/* Sliding, 10 per minute. A refund comes off the current window's count, then off the previous one's,
 * where each unit weighs (W - e) / W. ATMOST takes the whole units the weighted estimate leaves. */
static const row_g sliding_options[] = {
    {10 * SEC, 8, 0, 1, 2, -1, 110000, 0, 8},
    {20 * SEC, 3, R, 1, 5, -1, 100000, 0, 0},
    {20 * SEC, 0, R, 1, 5, -1, 100000, 0, 0},    /* a refund of 0 changes nothing */
    {75 * SEC, 1, 0, 1, 5, -1, 105000, 0, 1},    /* next window: 5 * 45/60 + 1 = 4.75 */
    {75 * SEC, 3, R, 1, 7, -1, 45000, 0, 0},     /* 1 off this window, 2 off the last: 3 * 45/60 = 2.25 */
    {90 * SEC, 10, 0, 0, 8, 30000, 30000, 0, 0}, /* 3 * 30/60 = 1.5: 8 fit, not 10 */
    {90 * SEC, 10, A, 1, 0, -1, 90000, 0, 8},    /* ATMOST: 8 of 10 (1.5 + 8 <= 10 < 1.5 + 9) */
    {90 * SEC, 1, A, 0, 0, 10000, 90000, 0, 0},  /* nothing left: 1 fits at e = 40 s (3 * 20/60 + 9) */
    {100 * SEC, 5, A, 1, 0, -1, 80000, 0, 1},
    {100 * SEC, 0, A, 1, 0, -1, 80000, 0, 0},    /* COST 0: a peek */
    {130 * SEC, 4, R, 1, 5, -1, 50000, 0, 0},    /* roll-over: 9 last window, 0 now: 5 * 50/60 */
    {130 * SEC, 100, R, 1, 10, -1, 0, 0, 0},     /* more than was counted: idle */
    {130 * SEC, 7, R, 1, 10, -1, 0, 0, 0},       /* on a new limiter: nothing */
    {130 * SEC, 11, A, 1, 0, -1, 110000, 0, 10}, /* above the limit: all 10 */
    {130 * SEC, 11, 0, 0, 0, -1, 110000, 0, 0},  /* the plain request: never */
};

/* Fixed windows of 1 s, limit 3. A FIXED refund gives back the current window's count only: once that is
 * 0 the key is idle, so what came off the previous count (which FIXED never reads) is gone with it. */
static const row_g fixed_options[] = {
    {999 * MS, 3, F, 1, 0, -1, 1, 0, 3},
    {1000 * MS, 2, F, 1, 1, -1, 1000, 0, 2},
    {1000 * MS, 5, F | R, 1, 3, -1, 0, 0, 0},     /* 2 off this window: 0, idle */
    {1500 * MS, 2, F, 1, 1, -1, 500, 0, 2},
    {1500 * MS, 1, F | R, 1, 2, -1, 500, 0, 0},
    {1500 * MS, 3, F | A, 1, 0, -1, 500, 0, 2},
    {1500 * MS, 2, F | A, 0, 0, 500, 500, 0, 0},  /* nothing until the window ends */
    {1600 * MS, 0, F | A, 1, 0, -1, 400, 0, 0},
    {2000 * MS, 5, F | A, 1, 0, -1, 1000, 0, 3},  /* new window: all 3 */
    {2000 * MS, 1, F | R | RL_F_DRYRUN, 1, 1, -1, 1000, 0, 0},
    {2000 * MS, 0, F, 1, 0, -1, 1000, 0, 0},      /* the DRYRUN refund stored nothing */
};

/* A SLIDING write, then a FIXED refund in the next window: FIXED reads 0 in its window, so the refund
 * leaves it idle (the key goes, as a FIXED COST 0 would do), and a SLIDING read after it is new. */
static const row_g fixed_refund_after_sliding[] = {
    {500 * MS, 2, 0, 1, 1, -1, 1500, 0, 2},
    {1500 * MS, 0, 0, 1, 2, -1, 500, 0, 0},       /* 2 * 500/1000 = 1 */
    {1500 * MS, 1, F | R, 1, 3, -1, 0, 0, 0},
    {1500 * MS, 0, 0, 1, 3, -1, 0, 0, 0},
};

/* Limit 10^12 per 10^12 ms, near the end of the clock's range: a window [69, 70) * 10^12 ms full, then a
 * third into the next one (e = 333333333333 ms), where it weighs 2/3. */
#define BIG_E 333333333333LL
static const row_g huge_options[] = {
    {0, BIG, 0, 1, 0, -1, 2 * BIG, 0, BIG},
    {(BIG + BIG_E) * MS, BIG, A, 1, 0, -1, 2 * BIG - BIG_E, 0, BIG_E},
    /* BIG - 1: all 333333333333 of this window, 666666666666 of the last, which keeps 333333333334:
     * 333333333334 * (10^12 - e) / 10^12 = 222222222222.44, so 777777777777 fit. */
    {(BIG + BIG_E) * MS, BIG - 1, R, 1, 777777777777LL, -1, BIG - BIG_E, 0, 0},
    {(BIG + BIG_E) * MS, BIG, A, 1, 0, -1, 2 * BIG - BIG_E, 0, 777777777777LL},
    /* FIXED reads this window's count alone: 10^12 - 777777777777 left. */
    {(BIG + BIG_E) * MS, BIG, A | F, 1, 0, -1, BIG - BIG_E, 0, 222222222223LL},
};

/* FORCE: the units are counted whatever the count, the window goes over its limit, and it repays as it
 * forgets counts. FIXED, limit 3 per 1 s: until the window ends. */
#define FO RL_F_FORCE
static const row_g force_fixed[] = {
    {100 * MS, 5, F | FO, 1, 0, -1, 900, 0, 5},
    {100 * MS, 1, F, 0, 0, 900, 900, 0, 0},
    {100 * MS, 0, F, 0, 0, 900, 900, 0, 0},                 /* even a peek is denied while over */
    {1000 * MS, 3, F, 1, 0, -1, 1000, 0, 3},                /* a new window: the debt is gone with it */
    {1000 * MS, 2, F | FO | RL_F_DRYRUN, 1, 0, -1, 1000, 0, 2},
    {1000 * MS, 0, F, 1, 0, -1, 1000, 0, 0},                /* the DRYRUN counted nothing */
};

/* SLIDING, 10 per minute: 25 counted weigh 25 * (W - e) / W through the next window. */
static const row_g force_sliding[] = {
    {0, 25, FO, 1, 0, -1, 120000, 0, 25},
    {0, 1, 0, 0, 0, 98400, 120000, 0, 0},         /* 25 * 21.6/60 + 1 = 10 at 38.4 s into the next */
    {60 * SEC, 0, 0, 0, 0, 36000, 60000, 0, 0},   /* a peek: 25 * 24/60 = 10 at 36 s */
    {98399 * MS, 1, 0, 0, 0, 1, 21601, 0, 0},
    {98400 * MS, 1, 0, 1, 0, -1, 81600, 0, 1},
    {98400 * MS, 11, FO, 1, 0, -1, 81600, 0, 11}, /* above the limit: admitted too */
};

/* SUBWINDOWS 6 of 10 s, limit 6: the 8 counted in cell 0 leave with it. */
static const row_g force_sub[] = {
    {0, 8, RL_F_SUBWINDOWS | FO, 1, 0, -1, 60000, 0, 8},
    {10 * SEC, 1, RL_F_SUBWINDOWS, 0, 0, 50000, 50000, 0, 0},
    {60 * SEC, 6, RL_F_SUBWINDOWS, 1, 0, -1, 60000, 0, 6},
};

/* Saturation: a count holds at most RL_MAX_COUNT; a FORCE beyond is admitted and the count stays there. */
static void test_force_saturation(void) {
    const uint32_t modes[] = {F, 0};
    for (size_t m = 0; m < 2; m++) {
        limiter l = new_window(10, 1000);
        CHECK_EQ(call(&l, BASE_US, BIG, modes[m] | FO).allowed, 1);
        rl_reply r = call(&l, BASE_US, 5, modes[m] | FO);
        CHECK(r.allowed == 1 && r.granted == 5 && r.remaining == 0);
        CHECK_EQ(rl_window_unpack(&l.cell).curr, RL_MAX_COUNT);
    }
    limiter sub = new_window(5, 3000);
    sub.params[2] = 3;
    call(&sub, BASE_US, BIG - 2, RL_F_SUBWINDOWS | FO);
    rl_reply r = call(&sub, BASE_US + SEC, 7, RL_F_SUBWINDOWS | FO); /* 2 fit in cell 1, the rest saturates */
    CHECK(r.allowed == 1 && r.granted == 7 && r.remaining == 0 && r.reset_after_ms == 3000);
    CHECK_EQ(sub.cell.w[2 + (BASE_MS / 1000) % 3], (uint64_t)(BIG - 2));
    CHECK_EQ(sub.cell.w[2 + (BASE_MS / 1000 + 1) % 3], 2u);
    call(&sub, BASE_US + SEC, 7, RL_F_SUBWINDOWS | FO);
    CHECK_EQ(sub.cell.w[2 + (BASE_MS / 1000 + 1) % 3], 2u);
}

static void test_option_tables(void) {
    RUN_TABLE_G_NEW(new_window(3, 1000), BASE_US, force_fixed);
    RUN_TABLE_G_NEW(new_window(10, 60000), BASE_US, force_sliding);
    limiter sub = new_window(6, 60000);
    sub.params[2] = 6;
    RUN_TABLE_G(&sub, BASE_US, force_sub);
    test_force_saturation();
    RUN_TABLE_G_NEW(new_window(10, 60000), BASE_US, sliding_options);
    RUN_TABLE_G_NEW(new_window(3, 1000), BASE_US, fixed_options);
    RUN_TABLE_G_NEW(new_window(3, 1000), BASE_US, fixed_refund_after_sliding);
    RUN_TABLE_G_NEW(new_window(BIG, BIG), 69 * BIG * MS, huge_options);
}
#undef R
#undef A
#undef F
#undef FO

/* --- cells ------------------------------------------------------------------------------------------ */

static void test_cells(void) {
    const rl_window_state states[] = {
        {0, 0, 0, 0},
        {RL_MAX_TIME_MS - 1, RL_MAX_COUNT, RL_MAX_COUNT, 1},
        {BASE_MS, 1, (1LL << 17) - 1, 0},
        {BASE_MS, 0, 1LL << 17, 1},
        {12345, (1LL << 40) - 1, (1LL << 40) - 1, 0},
    };
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
        rl_cell cell;
        rl_window_pack(states[i], &cell);
        rl_window_state back = rl_window_unpack(&cell);
        CHECK(back.start_ms == states[i].start_ms && back.curr == states[i].curr &&
              back.prev == states[i].prev && back.fixed == states[i].fixed);
        CHECK((cell.w[0] >> 63) == 0 && (cell.w[1] >> 63) == (uint64_t)states[i].fixed);
        CHECK_EQ(rl_window_algorithm.cell_valid(&cell), states[i].curr <= RL_MAX_COUNT &&
                                                           states[i].prev <= RL_MAX_COUNT);
    }
    rl_cell top0 = {{1ULL << 63, 0}}, top1 = {{0, 1ULL << 63}};
    CHECK(!rl_window_algorithm.cell_valid(&top0));
    CHECK(rl_window_algorithm.cell_valid(&top1)); /* the FIXED mark */
    CHECK(rl_window_unpack(&top1).fixed);

    /* A new key has no counts, whatever the cell holds. */
    limiter fresh = new_window(10, 1000);
    rl_window_pack((rl_window_state){BASE_MS, 10, 10, 0}, &fresh.cell);
    CHECK_EQ(probe(&fresh, BASE_US, 0, 0).remaining, 10);
    CHECK_EQ(probe(&fresh, BASE_US, 0, RL_F_FIXED).reset_after_ms, 0);

    /* Idle is new in every mode: a FIXED write is idle when its window ends, so a SLIDING read in the
     * next window finds a new limiter (it does not weigh the FIXED window's count). Before it ends, the
     * count is the current window's for both modes. */
    limiter mixed = new_window(10, 1000);
    CHECK_EQ(call(&mixed, BASE_US, 7, RL_F_FIXED).reset_after_ms, 1000);
    CHECK_EQ(probe(&mixed, BASE_US + 999 * 1000, 0, 0).remaining, 3);
    rl_reply after = probe(&mixed, BASE_US + 1000 * 1000, 0, 0);
    CHECK_EQ(after.remaining, 10);
    CHECK_EQ(after.reset_after_ms, 0);
    CHECK_EQ(call(&mixed, BASE_US + 1000 * 1000, 1, 0).reset_after_ms, 2000);
    /* Written by SLIDING, the count still weighs in the next window. */
    CHECK_EQ(probe(&mixed, BASE_US + 2000 * 1000, 0, 0).remaining, 9);
    CHECK_EQ(probe(&fresh, BASE_US, 0, 0).remaining, 10);
    CHECK_EQ(probe(&fresh, BASE_US, 0, RL_F_FIXED).reset_after_ms, 0);

    limiter l = new_window(BIG, BIG);
    rl_request req = request_of(&l, BASE_US, 1, 0);
    CHECK(rl_window_algorithm.validate(&req, validate_err) == 0);
}

/* --- generic promises, on pseudo-random parameters ------------------------------------------------ */

/* Every limiter also has an n (params[2], read only by SUBWINDOWS) dividing its window. */
static limiter random_window(void) {
    static const int64_t max[3] = {RL_MAX_COUNT, RL_MAX_PERIOD_MS, 0};
    limiter l = random_limiter(&rl_window_algorithm, max);
    int64_t n = RL_WINDOW_MIN_SUBWINDOWS + (int64_t)(rng() % (RL_WINDOW_MAX_SUBWINDOWS - RL_WINDOW_MIN_SUBWINDOWS + 1));
    if (rng() % 4 == 0) n = rng() % 2 ? RL_WINDOW_MIN_SUBWINDOWS : RL_WINDOW_MAX_SUBWINDOWS;
    l.params[2] = n;
    l.params[1] = l.params[1] < n ? n : l.params[1] - l.params[1] % n;
    return l;
}

static const uint32_t window_modes[] = {0, RL_F_SLIDING, RL_F_FIXED, RL_F_SUBWINDOWS};

static uint32_t random_mode(void) { return window_modes[rng() % 4]; }

/* Half the sets switch modes at any call (the cell is shared, and other states are read conservatively),
 * half keep one mode throughout. */
static uint32_t random_flags(int set, int step) {
    (void)step;
    return set % 2 == 0 ? random_mode() : window_modes[set / 2 % 4];
}

/* A gap between calls: none, under a ms, or up to two windows. */
static int64_t random_gap(const limiter *l) {
    switch (rng() % 5) {
    case 0: return 0;
    case 1: return (int64_t)(rng() % 3000);
    default: return (int64_t)(rng() % (uint64_t)(l->params[1] * 2 * MS + 1));
    }
}

/* A window never delays an admitted request. A FIXED or SUBWINDOWS refund gives back units one for one
 * (SLIDING: the previous window's count weighs less than one each, see the generic bounds and the
 * tables). */
static void check_window_own(const limiter *before, int64_t now, int64_t cost, uint32_t flags,
                             const rl_reply *r) {
    CHECK_EQ(r->wait_ms, 0);
    if (flags & (RL_F_FIXED | RL_F_SUBWINDOWS)) check_refund_exact(before, now, cost, flags, r);
}

static void test_generic(void) {
    /* SLIDING is the default: only FIXED reads the cell another way. */
    const promise_plan plan = {1000, 40, BASE_US, RL_F_FIXED | RL_F_SUBWINDOWS, RL_F_REFUND | RL_F_ATMOST | RL_F_FORCE,
                               random_window, random_gap, random_flags, check_window_own};
    check_promises(&plan);
}

/* Forward steps of an eighth of a gap: many calls fall in the same window. */
static int64_t short_gap(const limiter *l) { return random_gap(l) / 8; }

/* A run of unit requests whose clock sometimes steps back is admitted no more often than the same run
 * on a clock that holds still instead. */
static void test_clock_back_sequences(void) {
    for (int set = 0; set < 200; set++) {
        int64_t limit = rng_magnitude(20);
        limiter l = new_window(limit, rng_magnitude(100000));
        l.params[2] = 2 + (int64_t)(rng() % 10);
        l.params[1] = l.params[1] < l.params[2] ? l.params[2] : l.params[1] - l.params[1] % l.params[2];
        check_clock_back_run(l, random_mode(), 300, BASE_US, short_gap, random_gap);
    }
}

/* --- long steady runs against a naive model --------------------------------------------------------- */

/* Every window's count in an array, the sliding estimate recomputed from it at each request. */
typedef struct model {
    int64_t limit, window_ms, first_window;
    int64_t *counts;
} model;

static int model_admit(model *m, int64_t now_us, int64_t cost, int fixed, int force) {
    int64_t t_ms = now_us / 1000, k = t_ms / m->window_ms - m->first_window;
    int64_t elapsed = t_ms % m->window_ms, prev = k > 0 ? m->counts[k - 1] : 0;
    rl_i128 weight = (rl_i128)prev * (m->window_ms - elapsed) + (rl_i128)(m->counts[k] + cost) * m->window_ms;
    int ok = force || (fixed ? m->counts[k] + cost <= m->limit : weight <= (rl_i128)m->limit * m->window_ms);
    if (ok) m->counts[k] += cost;
    return ok;
}

/* 10^6 requests at a steady pace: the admitted count is the model's, to the unit (no drift over many
 * rollovers), and for FIXED it is min(limit, requests) in every window. Some runs force every k-th request
 * (COST 3, FORCE): the model counts it whatever, and the windows after it must deny what it says. */
static void test_steady_runs(void) {
    static const struct {
        int64_t limit, window_ms, pace_us;
        uint32_t flags;
        int64_t force_every;
    } runs[] = {
        {7, 3, 100, RL_F_FIXED, 0},   {7, 3, 100, RL_F_SLIDING, 0}, {1000, 1000, 700, 0, 0},
        {250, 1000, 1000, 0, 0},      {1, 1, 333, RL_F_SLIDING, 0}, {1000, 1000, 700, RL_F_FIXED, 0},
        {7, 3, 100, RL_F_FIXED, 37},  {7, 3, 100, RL_F_SLIDING, 11}, {250, 1000, 1000, 0, 101},
    };
    const int64_t n = 1000000;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        limiter l = new_window(runs[i].limit, runs[i].window_ms);
        int64_t last_ms = (BASE_US + (n - 1) * runs[i].pace_us) / 1000;
        model m = {runs[i].limit, runs[i].window_ms, BASE_MS / runs[i].window_ms, NULL};
        m.counts = calloc((size_t)(last_ms / m.window_ms - m.first_window + 1), sizeof *m.counts);
        int fixed = (runs[i].flags & RL_F_FIXED) != 0;
        int64_t admitted = 0, expected = 0, disagreements = 0;
        for (int64_t j = 0; j < n; j++) {
            int64_t now = BASE_US + j * runs[i].pace_us;
            int force = runs[i].force_every > 0 && j % runs[i].force_every == 0;
            int64_t cost = force ? 3 : 1;
            int a = (int)call(&l, now, cost, runs[i].flags | (force ? RL_F_FORCE : 0)).allowed;
            int b = model_admit(&m, now, cost, fixed, force);
            admitted += a;
            expected += b;
            disagreements += a != b;
        }
        CHECK_EQ(disagreements, 0);
        CHECK_EQ(admitted, expected);
        if (fixed && !runs[i].force_every) {
            /* Requests per window: window_ms * 1000 / pace, give or take one at the edges. */
            int64_t windows = last_ms / m.window_ms - m.first_window + 1, full = 0;
            for (int64_t k = 0; k < windows; k++) full += m.counts[k] == m.limit;
            CHECK_EQ(full, windows);
        }
        free(m.counts);
    }
}

/* --- sub-windows ------------------------------------------------------------------------------------ */

#define SW RL_F_SUBWINDOWS

/* 6 per minute in 6 cells of 10 s (BASE_MS is a multiple of 10 s): a request counts the 6 cells ending
 * with its own; a cell's units leave together at its boundary. */
static const row sub6[] = {
    {0, 1, SW, 1, 5, -1, 60000, 0},                   /* cell 0; idle when cell 0 leaves, at 60 s */
    {5 * SEC, 2, SW, 1, 3, -1, 55000, 0},
    {25 * SEC, 3, SW, 1, 0, -1, 55000, 0},            /* cell 2: idle when it leaves, at 80 s */
    {30 * SEC, 1, SW, 0, 0, 30000, 50000, 0},          /* full: cell 0's 3 leave at 60 s */
    {59999 * MS, 1, SW, 0, 0, 1, 20001, 0},
    {60 * SEC, 3, SW, 1, 0, -1, 60000, 0},            /* cell 6 sees cells 1..6: 3 counted, 3 more */
    {60 * SEC, 0, SW, 1, 0, -1, 60000, 0},
    {60 * SEC, 1, SW, 0, 0, 20000, 60000, 0},          /* cell 2's 3 leave at 80 s */
    {80 * SEC, 3, SW, 1, 0, -1, 60000, 0},
    {139999 * MS, 0, SW, 1, 3, -1, 1, 0},             /* cell 13 sees 8..13: cell 8's 3 */
    {140 * SEC, 0, SW, 1, 6, -1, 0, 0},               /* idle */
    {140 * SEC, 7, SW, 0, 6, -1, 0, 0},               /* more than the limit: never */
};

/* The clock steps back to an earlier cell: decided as at the newest cell, never more lenient. */
static const row sub_back[] = {
    {20 * SEC, 6, SW, 1, 0, -1, 60000, 0},
    {5 * SEC, 1, SW, 0, 0, 75000, 75000, 0}, /* as in cell 2; measured from the real now */
    {80 * SEC, 1, SW, 1, 5, -1, 60000, 0},
};

/* 10 per 30 s in 3 cells: REFUND comes off the newest cells first; ATMOST takes what the cells leave. */
static const row_g sub_options[] = {
    {0, 4, SW, 1, 6, -1, 30000, 0, 4},
    {10 * SEC, 3, SW, 1, 3, -1, 30000, 0, 3},
    {15 * SEC, 5, SW | RL_F_REFUND, 1, 8, -1, 15000, 0, 0},    /* cell 1's 3, then 2 of cell 0's 4 */
    {15 * SEC, 10, SW | RL_F_ATMOST, 1, 0, -1, 25000, 0, 8},
    {15 * SEC, 5, SW | RL_F_ATMOST, 0, 0, 15000, 25000, 0, 0},  /* 1 unit fits when cell 0's 2 leave */
    {15 * SEC, 99, SW | RL_F_REFUND, 1, 10, -1, 0, 0, 0},        /* a refund of everything: idle */
};

/* A key written FIXED, then read with SUBWINDOWS: what it counted goes into the cell of now, whole. */
static const row sub_from_fixed[] = {
    {0, 5, RL_F_FIXED, 1, 5, -1, 30000, 0},
    {10 * SEC, 6, SW, 0, 5, 30000, 30000, 0}, /* the 5 now count in cell 1, until 40 s */
    {40 * SEC, 6, SW, 1, 4, -1, 30000, 0},
    {40 * SEC, 3, RL_F_FIXED, 1, 1, -1, 20000, 0}, /* read back FIXED: the 6 into the current window */
};

static void test_sub_tables(void) {
    limiter l = new_window(6, 60000);
    l.params[2] = 6;
    RUN_TABLE(&l, BASE_US, sub6);
    l = new_window(6, 60000);
    l.params[2] = 6;
    RUN_TABLE(&l, BASE_US, sub_back);
    l = new_window(10, 30000);
    l.params[2] = 3;
    RUN_TABLE_G(&l, BASE_US, sub_options);
    l = new_window(10, 30000);
    l.params[2] = 3;
    RUN_TABLE(&l, BASE_US, sub_from_fixed);
}

/* The state: its size, and the states RL.SETSTATE or an RDB load must refuse. */
static void test_sub_cells(void) {
    limiter l = new_window(5, 60000);
    l.params[2] = 60;
    call(&l, BASE_US, 2, SW);
    CHECK(l.exists);
    CHECK_EQ(rl_window_algorithm.words(&l.cell), 62u);
    CHECK(rl_window_algorithm.cell_valid(&l.cell));
    CHECK_EQ(l.cell.w[1], 1000u);
    l.params[2] = 6;
    call(&l, BASE_US, 1, SW); /* another n: a new ring holding the 2 in the cell of now */
    CHECK_EQ(rl_window_algorithm.words(&l.cell), 8u);
    CHECK_EQ(l.cell.w[2 + (BASE_MS / 10000) % 6], 3u);
    rl_cell good = l.cell, bad;
    bad = good, bad.w[0] = (bad.w[0] & ~(0x3fULL << RL_WINDOW_SUB_N_SHIFT)) | (1ULL << RL_WINDOW_SUB_N_SHIFT);
    CHECK(!rl_window_algorithm.cell_valid(&bad)); /* n = 1 */
    bad = good, bad.w[0] |= 61ULL << RL_WINDOW_SUB_N_SHIFT;
    CHECK(!rl_window_algorithm.cell_valid(&bad)); /* n = 63 */
    CHECK_EQ(rl_window_algorithm.words(&bad), 2u);  /* and no size beyond the cell */
    bad = good, bad.w[1] = 0;
    CHECK(!rl_window_algorithm.cell_valid(&bad));  /* no cell length */
    bad = good, bad.w[1] = RL_MAX_PERIOD_MS / 6 + 1;
    CHECK(!rl_window_algorithm.cell_valid(&bad));  /* a window beyond 10^12 ms */
    bad = good, bad.w[3] = RL_MAX_COUNT + 1;
    CHECK(!rl_window_algorithm.cell_valid(&bad));
    bad = good, bad.w[0] |= 1ULL << 60;
    CHECK(!rl_window_algorithm.cell_valid(&bad));  /* bits that mean nothing */
    bad = good, bad.w[0] = (bad.w[0] & ~((1ULL << 46) - 1)) | ((1ULL << 46) - 1);
    CHECK(!rl_window_algorithm.cell_valid(&bad));  /* a newest cell starting beyond the clock */
    char err[RL_ERR_LEN];
    rl_request req = {.params = {5, 60000, 7}, .cost = 1, .flags = SW, .now_us = BASE_US};
    CHECK(rl_window_algorithm.validate(&req, err) != 0 && strstr(err, "multiple") != NULL);
    req.params[2] = 6;
    CHECK_EQ(rl_window_algorithm.validate(&req, err), 0);
}

/* Random runs against a reference written here: every cell's count in an array, indexed from the run's
 * first cell, the rule recomputed from it at each request (admitted, remaining, retry at the first
 * boundary where enough old cells have left, idle when the newest counted cell leaves). */
static void test_sub_reference(void) {
    enum { CELLS = 4000 };
    static int64_t counts[CELLS];
    for (int set = 0; set < 300; set++) {
        int64_t n = 2 + (int64_t)(rng() % 59), cell_ms = 1 + (int64_t)(rng() % 50), limit = 1 + (int64_t)(rng() % 20);
        limiter l = new_window(limit, n * cell_ms);
        l.params[2] = n;
        memset(counts, 0, sizeof counts);
        int64_t first = BASE_MS / cell_ms, now = BASE_US;
        for (int step = 0; step < 400; step++) {
            now += (int64_t)(rng() % (uint64_t)(cell_ms * 1000 * (rng() % 4 == 0 ? 3 * n : 1) + 1));
            int64_t i = now / 1000 / cell_ms - first;
            if (i >= CELLS) break;
            int64_t cost = (int64_t)(rng() % (uint64_t)(limit + 2)), sum = 0;
            int force = rng() % 8 == 0; /* FORCE: counted whatever */
            for (int64_t k = i - n + 1; k <= i; k++) sum += k >= 0 ? counts[k] : 0;
            rl_reply want = {0};
            want.limit = limit;
            want.allowed = force || sum + cost <= limit;
            if (want.allowed) counts[i] += cost, sum += cost;
            want.remaining = limit - sum > 0 ? limit - sum : 0;
            want.retry_after_ms = -1;
            if (!want.allowed && cost <= limit) {
                int64_t j = i + 1, left = sum;
                for (;; j++) {
                    int64_t gone = j - n >= 0 ? counts[j - n] : 0;
                    left -= gone;
                    if (left + cost <= limit) break;
                }
                want.retry_after_ms = rl_us_to_ms_ceil((rl_i128)(first + j) * cell_ms * 1000 - now);
            }
            want.reset_after_ms = 0;
            for (int64_t k = i; k > i - n && k >= 0; k--)
                if (counts[k] > 0) {
                    want.reset_after_ms = rl_us_to_ms_ceil((rl_i128)(first + k + n) * cell_ms * 1000 - now);
                    break;
                }
            rl_reply got = call(&l, now, cost, SW | (force ? RL_F_FORCE : 0));
            if (!CHECK(got.allowed == want.allowed && got.remaining == want.remaining &&
                       got.retry_after_ms == want.retry_after_ms && got.reset_after_ms == want.reset_after_ms &&
                       got.limit == limit && got.wait_ms == 0))
                fprintf(stderr, "     n %lld cell %lld limit %lld step %d cost %lld: got %lld %lld %lld %lld, want %lld %lld %lld %lld\n",
                        (long long)n, (long long)cell_ms, (long long)limit, step, (long long)cost, (long long)got.allowed,
                        (long long)got.remaining, (long long)got.retry_after_ms, (long long)got.reset_after_ms,
                        (long long)want.allowed, (long long)want.remaining, (long long)want.retry_after_ms,
                        (long long)want.reset_after_ms);
        }
    }
}

int main(void) {
    test_tables();
    test_option_tables();
    test_cells();
    test_generic();
    test_clock_back_sequences();
    test_steady_runs();
    test_sub_tables();
    test_sub_cells();
    test_sub_reference();
    return check_summary("unit_window");
}
