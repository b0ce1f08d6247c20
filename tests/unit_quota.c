/* unit_quota.c -- tests of the calendar quotas (algorithms/quota.c), driven by a fake clock.
 *
 * The calendar first: known dates (the epoch, leap days of 2000 and 2024, 2100's missing one), every day
 * from 1969 to the clock's last year round-tripped and compared with libc's gmtime_r, and the window of
 * 200,000 random instants over the whole clock range (every period, offsets from -840 to 840) compared
 * with a reference built on libc's gmtime_r and timegm. libc's time functions appear here only, as an
 * independent reference; the algorithm has its own integer calendar.
 *
 * Then the decision: scripted tables with every reply field (day, week and month boundaries with offsets,
 * Dec -> Jan, Feb 28/29, OFFSET +-840, the epoch, a period change on a live key, a clock stepping back,
 * FORCE and its debt, REFUND, DRYRUN, COST 0, a cost above the limit), the cells cell_valid takes, the
 * debt's cap, the promises of alg_checks.h on pseudo-random quotas, and a generated trace of calls
 * (parameter changes, clock jumps either way, FORCE, REFUND, DRYRUN) compared reply for reply and state for
 * state with a reference model whose windows come from libc. */
#define _DEFAULT_SOURCE /* timegm, for the reference */
#include <stdlib.h>
#include <time.h>

#define RNG_SEED 0x3c6ef372fe94f82bULL
#include "alg_checks.h"
#include "../algorithms/quota.h"

#define MS 1000LL
#define SEC (1000 * MS)
#define MIN (60 * SEC)
#define HOUR (60 * MIN)
#define DAY_US (24 * HOUR)
#define DAY_MS (24 * 3600 * 1000LL)
#define HOUR_MS (3600 * 1000LL)
/* 2026-01-01 00:00:00 UTC, a Thursday. */
#define BASE_MS 1767225600000LL
#define BASE_US (BASE_MS * MS)

static limiter new_quota(int64_t limit, int period, int64_t offset_min) {
    return limiter_new(&rl_quota_algorithm, limit, period, offset_min);
}

/* --- the reference calendar: libc ------------------------------------------------------------------- */

static int64_t floor_div64(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }

/* The window of `period` with `offset_min` holding t_ms, from libc's broken-down UTC time of the local
 * instant: its midnight, moved back to Monday or to the 1st, and the same plus a day, a week or a month
 * (timegm normalizes the overflowing field). */
static void ref_window(int period, int64_t offset_min, int64_t t_ms, int64_t *start_ms, int64_t *end_ms) {
    time_t local_s = (time_t)floor_div64(t_ms + offset_min * 60000, 1000);
    struct tm first;
    gmtime_r(&local_s, &first);
    first.tm_hour = first.tm_min = first.tm_sec = 0;
    if (period == RL_QUOTA_WEEK) first.tm_mday -= (first.tm_wday + 6) % 7; /* tm_wday: 0 is Sunday */
    if (period == RL_QUOTA_MONTH) first.tm_mday = 1;
    struct tm after = first;
    if (period == RL_QUOTA_DAY) after.tm_mday += 1;
    if (period == RL_QUOTA_WEEK) after.tm_mday += 7;
    if (period == RL_QUOTA_MONTH) after.tm_mon += 1;
    *start_ms = (int64_t)timegm(&first) * 1000 - offset_min * 60000;
    *end_ms = (int64_t)timegm(&after) * 1000 - offset_min * 60000;
}

/* --- the calendar ----------------------------------------------------------------------------------- */

static void test_known_dates(void) {
    static const struct {
        int64_t year;
        int month, day;
        int64_t days;
    } dates[] = {
        {1970, 1, 1, 0},         {1969, 12, 31, -1},      {1970, 3, 1, 59},        {2000, 2, 29, 11016},
        {2000, 3, 1, 11017},     {2024, 2, 29, 19782},    {2024, 3, 1, 19783},     {2100, 2, 28, 47540},
        {2100, 3, 1, 47541},     {2026, 1, 1, 20454},     {2025, 12, 31, 20453},   {4199, 12, 31, 814490},
        {1, 1, 1, -719162},      {400, 12, 31, -573066},  {401, 1, 1, -573065},
    };
    for (size_t i = 0; i < sizeof dates / sizeof dates[0]; i++) {
        CHECK_EQ(rl_quota_days_from_civil(dates[i].year, dates[i].month, dates[i].day), dates[i].days);
        int64_t y;
        int m, d;
        rl_quota_civil_from_days(dates[i].days, &y, &m, &d);
        CHECK(y == dates[i].year && m == dates[i].month && d == dates[i].day);
    }
}

/* Every day from 1969-12-31 to the last the clock reaches: the date is libc's, and goes back to the same
 * day number; consecutive days are consecutive dates. */
static void test_every_day(void) {
    int64_t last = RL_MAX_TIME_MS / DAY_MS + 2, bad = 0;
    for (int64_t n = -1; n <= last; n++) {
        int64_t y;
        int m, d;
        rl_quota_civil_from_days(n, &y, &m, &d);
        time_t s = (time_t)(n * 86400);
        struct tm tm;
        gmtime_r(&s, &tm);
        int ok = y == tm.tm_year + 1900LL && m == tm.tm_mon + 1 && d == tm.tm_mday &&
                 rl_quota_days_from_civil(y, m, d) == n;
        if (!ok && bad++ < 5)
            fprintf(stderr, "     day %lld: %lld-%d-%d, libc %d-%d-%d\n", (long long)n, (long long)y, m, d,
                    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    }
    CHECK_EQ(bad, 0);
}

/* The window of random instants over the whole clock range, and of instants next to boundaries, is libc's;
 * it holds the instant and its end is at most 31 days after it. */
static void test_windows_against_libc(void) {
    int64_t bad = 0;
    for (int i = 0; i < 200000; i++) {
        int period = (int)(rng() % 3);
        int64_t offset = rng_range(-RL_QUOTA_MAX_OFFSET_MIN, RL_QUOTA_MAX_OFFSET_MIN);
        if (rng() % 8 == 0) offset = rng() % 2 ? RL_QUOTA_MAX_OFFSET_MIN : -RL_QUOTA_MAX_OFFSET_MIN;
        int64_t t = rng_range(0, RL_MAX_TIME_MS - 1);
        switch (rng() % 4) {
        case 0: t = rng_range(0, 40 * DAY_MS); break; /* near the epoch */
        case 1: { /* next to a boundary: the last ms of a window, or its first */
            int64_t s, e;
            ref_window(period, offset, t, &s, &e);
            t = rng() % 2 ? e - 1 : s;
            if (t < 0 || t >= RL_MAX_TIME_MS) t = s + 1 > 0 ? s + 1 : 0;
            break;
        }
        default: break;
        }
        int64_t s, e, rs, re;
        rl_quota_window_at(period, offset, t, &s, &e);
        ref_window(period, offset, t, &rs, &re);
        int ok = s == rs && e == re && s <= t && t < e && e - t <= 31 * DAY_MS && e <= RL_QUOTA_MAX_END_MS;
        if (!ok && bad++ < 5)
            fprintf(stderr, "     period %d offset %lld at %lld: [%lld, %lld), libc [%lld, %lld)\n", period,
                    (long long)offset, (long long)t, (long long)s, (long long)e, (long long)rs, (long long)re);
    }
    CHECK_EQ(bad, 0);
    /* The last instant the clock holds, in the longest month ahead of it. */
    for (int period = 0; period < 3; period++) {
        int64_t s, e, rs, re;
        rl_quota_window_at(period, -RL_QUOTA_MAX_OFFSET_MIN, RL_MAX_TIME_MS - 1, &s, &e);
        ref_window(period, -RL_QUOTA_MAX_OFFSET_MIN, RL_MAX_TIME_MS - 1, &rs, &re);
        CHECK(s == rs && e == re && e <= RL_QUOTA_MAX_END_MS);
    }
}

/* Windows told by hand (the instants from an independent calendar). */
static void test_known_windows(void) {
    static const struct {
        int period;
        int64_t offset, t_ms, start_ms, end_ms;
    } w[] = {
        {RL_QUOTA_DAY, 0, BASE_MS, BASE_MS, BASE_MS + DAY_MS},
        {RL_QUOTA_DAY, 60, BASE_MS, BASE_MS - HOUR_MS, BASE_MS + 23 * HOUR_MS}, /* UTC+1: from 23:00 UTC */
        {RL_QUOTA_DAY, 60, BASE_MS - HOUR_MS - 1, BASE_MS - HOUR_MS - DAY_MS, BASE_MS - HOUR_MS},
        {RL_QUOTA_DAY, -840, BASE_MS, BASE_MS - 10 * HOUR_MS, BASE_MS + 14 * HOUR_MS},
        {RL_QUOTA_DAY, 840, BASE_MS, BASE_MS - 14 * HOUR_MS, BASE_MS + 10 * HOUR_MS},
        {RL_QUOTA_WEEK, 0, BASE_MS, BASE_MS - 3 * DAY_MS, BASE_MS + 4 * DAY_MS}, /* Thursday: from Monday */
        {RL_QUOTA_WEEK, -60, BASE_MS, BASE_MS - 3 * DAY_MS + HOUR_MS, BASE_MS + 4 * DAY_MS + HOUR_MS},
        {RL_QUOTA_MONTH, 0, BASE_MS, BASE_MS, 1769904000000LL},                    /* January */
        {RL_QUOTA_MONTH, 0, 1707523200000LL, 1706745600000LL, 1709251200000LL},   /* Feb 2024: 29 days */
        {RL_QUOTA_MONTH, 0, 1675987200000LL, 1675209600000LL, 1677628800000LL},   /* Feb 2023: 28 days */
        {RL_QUOTA_MONTH, 0, 4107499200000LL, 4105123200000LL, 4107542400000LL},   /* Feb 2100: 28 days */
        {RL_QUOTA_MONTH, 0, 951739200000LL, 949363200000LL, 951868800000LL},      /* Feb 2000: 29 days */
        {RL_QUOTA_MONTH, 0, 1767222000000LL, 1764547200000LL, BASE_MS},           /* Dec 31 -> Jan 1 */
        {RL_QUOTA_MONTH, 60, 1767223800000LL, BASE_MS - HOUR_MS, 1769904000000LL - HOUR_MS},
        {RL_QUOTA_MONTH, -60, 1772325000000LL, 1769904000000LL + HOUR_MS, 1772326800000LL},
        /* The epoch: windows that start before it. */
        {RL_QUOTA_DAY, 60, 0, -HOUR_MS, 23 * HOUR_MS},
        {RL_QUOTA_DAY, -840, 0, -10 * HOUR_MS, 14 * HOUR_MS},
        {RL_QUOTA_MONTH, -840, 0, -31 * DAY_MS + 14 * HOUR_MS, 14 * HOUR_MS},
        {RL_QUOTA_MONTH, 840, 0, -14 * HOUR_MS, 31 * DAY_MS - 14 * HOUR_MS},
        {RL_QUOTA_WEEK, 0, 0, -3 * DAY_MS, 4 * DAY_MS},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        int64_t s, e;
        rl_quota_window_at(w[i].period, w[i].offset, w[i].t_ms, &s, &e);
        if (!CHECK(s == w[i].start_ms && e == w[i].end_ms))
            fprintf(stderr, "     window %zu: [%lld, %lld), expected [%lld, %lld)\n", i, (long long)s, (long long)e,
                    (long long)w[i].start_ms, (long long)w[i].end_ms);
    }
}

/* --- scripted tables -------------------------------------------------------------------------------- */

/* {at (µs from the table's base), cost, flags, allowed, remaining, retry_after_ms, reset_after_ms, wait}. */

/* 3 per UTC day from Thursday 2026-01-01: the count falls to 0 at midnight, retry and reset are exact to
 * the µs (rounded up to ms), COST 0 peeks, a cost above the limit is never admitted, DRYRUN changes
 * nothing, a refund to 0 is idle. */
static const row day_utc[] = {
    {0, 1, 0, 1, 2, -1, DAY_MS, 0},
    {12 * HOUR, 2, 0, 1, 0, -1, 12 * HOUR_MS, 0},
    {12 * HOUR, 1, 0, 0, 0, 12 * HOUR_MS, 12 * HOUR_MS, 0},
    {12 * HOUR, 0, 0, 1, 0, -1, 12 * HOUR_MS, 0},
    {12 * HOUR, 4, 0, 0, 0, -1, 12 * HOUR_MS, 0},
    {DAY_US - 1, 1, 0, 0, 0, 1, 1, 0},
    {DAY_US - 1001, 1, 0, 0, 0, 2, 2, 0},
    {DAY_US, 2, RL_F_DRYRUN, 1, 1, -1, DAY_MS, 0},
    {DAY_US, 1, 0, 1, 2, -1, DAY_MS, 0},
    {DAY_US + 500, 1, RL_F_REFUND, 1, 3, -1, 0, 0},
    {DAY_US + 500, 5, RL_F_REFUND, 1, 3, -1, 0, 0},
};

/* UTC+1 (OFFSET 60): the local day ends at 23:00 UTC. */
static const row day_plus_60[] = {
    {0, 1, 0, 1, 1, -1, 23 * HOUR_MS, 0},
    {23 * HOUR - 1000, 2, 0, 0, 1, 1, 1, 0},
    {23 * HOUR, 2, 0, 1, 0, -1, DAY_MS, 0},
};

/* UTC-14 and UTC+14: the day ends at 14:00 and 10:00 UTC. */
static const row day_minus_840[] = {
    {0, 1, 0, 1, 0, -1, 14 * HOUR_MS, 0},
    {14 * HOUR - 1, 1, 0, 0, 0, 1, 1, 0},
    {14 * HOUR, 1, 0, 1, 0, -1, DAY_MS, 0},
};
static const row day_plus_840[] = {
    {0, 1, 0, 1, 0, -1, 10 * HOUR_MS, 0},
    {10 * HOUR, 1, 0, 1, 0, -1, DAY_MS, 0},
};

/* Weeks from Monday: Thursday's window ends 4 days later, the next lasts 7. */
static const row week_utc[] = {
    {0, 10, 0, 1, 0, -1, 4 * DAY_MS, 0},
    {4 * DAY_US - 1, 1, 0, 0, 0, 1, 1, 0},
    {4 * DAY_US, 10, 0, 1, 0, -1, 7 * DAY_MS, 0},
};

/* Months of every length, each a quota of 5 from its instant: reset is the time to the 1st. */
static void test_month_tables(void) {
    static const struct {
        int64_t offset, at_ms, reset_ms;
    } m[] = {
        {0, BASE_MS, 31 * DAY_MS},
        {0, 1707523200000LL, 20 * DAY_MS},           /* 2024-02-10: Feb has 29 days */
        {0, 1675987200000LL, 19 * DAY_MS},           /* 2023-02-10: 28 */
        {0, 4107499200000LL, 12 * HOUR_MS},          /* 2100-02-28 12:00: no Feb 29 in 2100 */
        {0, 951739200000LL, DAY_MS + 12 * HOUR_MS},  /* 2000-02-28 12:00: Feb 29 in 2000 */
        {0, 1709164800000LL, DAY_MS},                /* 2024-02-29 */
        {0, 1767222000000LL, HOUR_MS},               /* 2025-12-31 23:00: Dec -> Jan */
        {60, 1767223800000LL, 31 * DAY_MS - 30 * 60000},
        {-60, 1772325000000LL, 30 * 60000},          /* 2026-03-01 00:30 UTC is Feb 28 23:30 in UTC-1 */
        {-840, 0, 14 * HOUR_MS},                     /* the epoch, in December 1969 at UTC-14 */
        {840, 0, 31 * DAY_MS - 14 * HOUR_MS},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        limiter l = new_quota(5, RL_QUOTA_MONTH, m[i].offset);
        const row rows[] = {
            {0, 5, 0, 1, 0, -1, m[i].reset_ms, 0},
            {m[i].reset_ms * MS - 1, 1, 0, 0, 0, 1, 1, 0},
            {m[i].reset_ms * MS, 0, 0, 1, 5, -1, 0, 0},
        };
        char name[48];
        snprintf(name, sizeof name, "month %zu", i + 1);
        run_table(name, &l, m[i].at_ms * MS, rows, 3);
    }
}

/* FORCE: admitted past the limit (debt), remaining 0 while in debt, a plain request (COST 0 included) denied
 * until the window ends; refunds pay the debt back. */
static const row force_debt[] = {
    {0, 2, RL_F_FORCE, 1, 1, -1, DAY_MS, 0},
    {0, 5, RL_F_FORCE, 1, 0, -1, DAY_MS, 0},
    {0, 0, 0, 0, 0, DAY_MS, DAY_MS, 0},
    {HOUR, 1, 0, 0, 0, 23 * HOUR_MS, 23 * HOUR_MS, 0},
    {HOUR, 4, RL_F_REFUND, 1, 0, -1, 23 * HOUR_MS, 0},
    {HOUR, 1, RL_F_REFUND, 1, 1, -1, 23 * HOUR_MS, 0},
    {HOUR, 1, 0, 1, 0, -1, 23 * HOUR_MS, 0},
    {HOUR, 9, RL_F_FORCE | RL_F_DRYRUN, 1, 0, -1, 23 * HOUR_MS, 0},
    {HOUR, 1, RL_F_REFUND, 1, 1, -1, 23 * HOUR_MS, 0},
    {DAY_US, 1, 0, 1, 2, -1, DAY_MS, 0},
    {DAY_US, 10, RL_F_FORCE, 1, 0, -1, DAY_MS, 0}, /* above the limit: forced all the same */
    {DAY_US, 0, RL_F_FORCE, 1, 0, -1, DAY_MS, 0},
};

/* A live key read under another period, and on a clock stepping back: the stored window runs to its end. */
static void test_live_changes(void) {
    limiter l = new_quota(2, RL_QUOTA_DAY, 0);
    static const row day_first[] = {{0, 2, 0, 1, 0, -1, DAY_MS, 0}};
    RUN_TABLE(&l, BASE_US, day_first);
    l.params[1] = RL_QUOTA_MONTH; /* the stored day still counts */
    l.params[2] = 300;
    static const row then_month[] = {
        {12 * HOUR, 1, 0, 0, 0, 12 * HOUR_MS, 12 * HOUR_MS, 0},
        {DAY_US, 1, 0, 1, 1, -1, 31 * DAY_MS - DAY_MS - 5 * HOUR_MS, 0}, /* Jan 2 to Feb 1 at UTC+5 */
    };
    RUN_TABLE(&l, BASE_US, then_month);

    limiter back = new_quota(2, RL_QUOTA_DAY, 0);
    static const row clock_back[] = {
        {36 * HOUR, 2, 0, 1, 0, -1, 12 * HOUR_MS, 0},
        {0, 1, 0, 0, 0, 48 * HOUR_MS, 48 * HOUR_MS, 0}, /* a day earlier: the stored Jan 2 still counts */
        {0, 1, RL_F_REFUND, 1, 1, -1, 48 * HOUR_MS, 0},
        {0, 1, 0, 1, 0, -1, 48 * HOUR_MS, 0},
        {48 * HOUR, 2, 0, 1, 0, -1, DAY_MS, 0},
    };
    RUN_TABLE(&back, BASE_US, clock_back);
}

static void test_tables(void) {
    RUN_TABLE_NEW(new_quota(3, RL_QUOTA_DAY, 0), BASE_US, day_utc);
    RUN_TABLE_NEW(new_quota(2, RL_QUOTA_DAY, 60), BASE_US, day_plus_60);
    RUN_TABLE_NEW(new_quota(1, RL_QUOTA_DAY, -840), BASE_US, day_minus_840);
    RUN_TABLE_NEW(new_quota(1, RL_QUOTA_DAY, 840), BASE_US, day_plus_840);
    RUN_TABLE_NEW(new_quota(10, RL_QUOTA_WEEK, 0), BASE_US, week_utc);
    RUN_TABLE_NEW(new_quota(3, RL_QUOTA_DAY, 0), BASE_US, force_debt);
    test_month_tables();
    test_live_changes();
}

/* --- cells and the debt's cap ----------------------------------------------------------------------- */

static void test_cells(void) {
    static const struct {
        uint64_t w0, w1;
        int valid;
    } cells[] = {
        {1, 1, 1},
        {(uint64_t)RL_QUOTA_MAX_END_MS, (uint64_t)(RL_MAX_COUNT + RL_MAX_DEBT), 1},
        {0, 1, 0},                                          /* no window ends at the epoch's first ms */
        {(uint64_t)RL_QUOTA_MAX_END_MS + 1, 1, 0},
        {(uint64_t)-1, 1, 0},                               /* a negative end */
        {BASE_MS, 0, 1},                                    /* idle (the module keeps no such key) */
        {BASE_MS, (uint64_t)(RL_MAX_COUNT + RL_MAX_DEBT) + 1, 0},
        {BASE_MS, (uint64_t)-1, 0},
    };
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
        rl_cell c = {{cells[i].w0, cells[i].w1}};
        CHECK_EQ(rl_quota_algorithm.cell_valid(&c), cells[i].valid);
        CHECK_EQ(rl_quota_algorithm.words(&c), 2);
    }
    /* The state is the window's end and the count. */
    limiter l = new_quota(7, RL_QUOTA_DAY, 0);
    call(&l, BASE_US + 5, 3, 0);
    CHECK(l.exists && l.cell.w[0] == (uint64_t)(BASE_MS + DAY_MS) && l.cell.w[1] == 3);

    /* The debt's cap: the count saturates at limit + RL_MAX_DEBT, still admitted; a smaller limit later
     * never lowers a count through FORCE. */
    limiter big = new_quota(RL_MAX_COUNT, RL_QUOTA_MONTH, 0);
    for (int i = 0; i < 3; i++) {
        rl_reply r = call(&big, BASE_US, RL_MAX_COUNT, RL_F_FORCE);
        CHECK(r.allowed == 1 && r.granted == RL_MAX_COUNT && r.remaining == 0);
        CHECK_EQ((int64_t)big.cell.w[1], i == 0 ? RL_MAX_COUNT : RL_MAX_COUNT + RL_MAX_DEBT);
    }
    big.params[0] = 1;
    rl_reply r = call(&big, BASE_US, 5, RL_F_FORCE);
    CHECK(r.allowed == 1 && r.granted == 5 && r.remaining == 0);
    CHECK_EQ((int64_t)big.cell.w[1], RL_MAX_COUNT + RL_MAX_DEBT);
    CHECK_EQ(call(&big, BASE_US, 0, 0).allowed, 0);
    limiter small = new_quota(10, RL_QUOTA_DAY, 0);
    call(&small, BASE_US, RL_MAX_COUNT, RL_F_FORCE);
    call(&small, BASE_US, RL_MAX_COUNT, RL_F_FORCE);
    CHECK_EQ((int64_t)small.cell.w[1], 10 + RL_MAX_DEBT);

    /* validate: the parser's ranges, for a caller that builds requests itself. */
    rl_request req = {.params = {1, 3, 0}, .cost = 1};
    char err[RL_ERR_LEN];
    CHECK_EQ(rl_quota_algorithm.validate(&req, err), -1);
    CHECK_STR(err, "ERR period: must be DAY, WEEK or MONTH");
    req.params[1] = RL_QUOTA_WEEK;
    req.params[2] = -841;
    CHECK_EQ(rl_quota_algorithm.validate(&req, err), -1);
    CHECK_STR(err, "ERR OFFSET: must be an integer between -840 and 840");
    req.params[2] = 840;
    CHECK_EQ(rl_quota_algorithm.validate(&req, err), 0);
}

/* --- generic promises, on pseudo-random quotas ------------------------------------------------------ */

static limiter random_quota(void) {
    int64_t limit = rng() % 4 == 0 ? rng_magnitude(RL_MAX_COUNT) : rng_magnitude(20);
    int64_t offset = rng_range(-RL_QUOTA_MAX_OFFSET_MIN, RL_QUOTA_MAX_OFFSET_MIN);
    if (rng() % 4 == 0) offset = 0;
    int period = (int)(rng() % 3); /* drawn apart: argument order is unspecified */
    return new_quota(limit, period, offset);
}

/* A gap between calls: none, under a ms, within a day, or up to 40 days. */
static int64_t random_gap(const limiter *l) {
    (void)l;
    switch (rng() % 5) {
    case 0: return 0;
    case 1: return (int64_t)(rng() % 3000);
    case 2: return (int64_t)(rng() % (uint64_t)DAY_US);
    default: return (int64_t)(rng() % (uint64_t)(40 * DAY_US));
    }
}

static uint32_t plain_mode(int set, int step) {
    (void)set;
    (void)step;
    return 0;
}

/* A quota never delays an admitted request, and a refund gives back unit for unit. */
static void check_quota_own(const limiter *before, int64_t now, int64_t cost, uint32_t flags, const rl_reply *r) {
    CHECK_EQ(r->wait_ms, 0);
    if (flags & RL_F_REFUND) check_refund_exact(before, now, cost, flags, r);
}

static void test_generic(void) {
    const promise_plan plan = {1500, 40, BASE_US, 0, RL_F_REFUND, random_quota, random_gap, plain_mode,
                               check_quota_own};
    check_promises(&plan);
}

static int64_t short_gap(const limiter *l) { return random_gap(l) / 16; }

static void test_clock_back_sequences(void) {
    for (int set = 0; set < 200; set++) {
        limiter l = random_quota();
        l.params[0] = rng_magnitude(20);
        check_clock_back_run(l, 0, 300, BASE_US, short_gap, random_gap);
    }
}

/* --- a generated trace against a reference model ---------------------------------------------------- */

/* The rules of quota.c written again, plainly, over libc's windows: the stored window while now is before
 * its end, else the window of now with nothing counted. */
typedef struct model {
    int exists;
    int64_t end_ms, count;
} model;

static rl_reply model_call(model *m, const rl_request *q) {
    int64_t t_ms = q->now_us / 1000, limit = q->params[0], cost = q->cost;
    int64_t end = m->end_ms, count = m->count;
    if (!m->exists || t_ms >= end) {
        int64_t start;
        ref_window((int)q->params[1], q->params[2], t_ms, &start, &end);
        count = 0;
    }
    rl_reply r = {.limit = limit};
    if (q->flags & RL_F_REFUND) {
        count = count > cost ? count - cost : 0;
        r.allowed = 1;
    } else if (q->flags & RL_F_FORCE) {
        int64_t most = limit + RL_MAX_DEBT;
        if (count < most) count = count + cost < most ? count + cost : most;
        r.allowed = 1;
        r.granted = cost;
    } else if (count + cost <= limit) {
        count += cost;
        r.allowed = 1;
        r.granted = cost;
    }
    r.remaining = limit > count ? limit - count : 0;
    int64_t left_us = end * 1000 - q->now_us, left_ms = (left_us + 999) / 1000;
    r.retry_after_ms = r.allowed || (q->flags & RL_F_REFUND) || cost > limit ? -1 : left_ms;
    r.reset_after_ms = count > 0 ? left_ms : 0;
    r.reset_after_us = count > 0 ? left_us : 0;
    if (!(q->flags & RL_F_DRYRUN)) {
        m->exists = count > 0;
        m->end_ms = end;
        m->count = count;
    }
    return r;
}

static void test_trace(void) {
    int64_t bad = 0, calls = 0;
    for (int run = 0; run < 400; run++) {
        limiter l = random_quota();
        l.params[0] = rng_magnitude(rng() % 4 ? 10 : RL_MAX_COUNT);
        model m = {0, 0, 0};
        int64_t now = rng() % 8 == 0 ? rng_range(0, 40 * DAY_US) : rng_range(0, RL_MAX_TIME_US - 1);
        for (int step = 0; step < 250; step++, calls++) {
            switch (rng() % 16) { /* the clock: mostly forward, now and then back or anywhere */
            case 0: now -= (int64_t)(rng() % (uint64_t)(3 * DAY_US)); break;
            case 1: now = rng_range(0, RL_MAX_TIME_US - 1); break;
            case 2: /* onto the stored window's end, or next to it */
                if (m.exists) now = m.end_ms * MS + rng_range(-1000, 1000);
                break;
            default: now += random_gap(&l) / 4; break;
            }
            if (now < 0) now = 0;
            if (now > RL_MAX_TIME_US - 1) now = RL_MAX_TIME_US - 1;
            if (rng() % 20 == 0) { /* new parameters on the live key */
                limiter p = random_quota();
                l.params[1] = p.params[1];
                l.params[2] = p.params[2];
                if (rng() % 2) l.params[0] = rng_magnitude(10);
            }
            int64_t cost = random_cost(l.params[0]);
            uint32_t flags = 0;
            switch (rng() % 10) {
            case 0: flags = RL_F_REFUND; break;
            case 1: flags = RL_F_FORCE; break;
            case 2: flags = RL_F_DRYRUN; break;
            case 3: flags = RL_F_FORCE | RL_F_DRYRUN; break;
            default: break;
            }
            rl_request q = request_of(&l, now, cost, flags);
            rl_reply want = model_call(&m, &q);
            rl_reply got = apply(&l, now, cost, flags);
            int same = got.allowed == want.allowed && got.limit == want.limit && got.remaining == want.remaining &&
                       got.retry_after_ms == want.retry_after_ms && got.reset_after_ms == want.reset_after_ms &&
                       got.reset_after_us == want.reset_after_us && got.wait_ms == 0 && got.granted == want.granted &&
                       l.exists == m.exists && (!m.exists || ((int64_t)l.cell.w[0] == m.end_ms &&
                                                              (int64_t)l.cell.w[1] == m.count));
            if (l.exists) same &= rl_quota_algorithm.cell_valid(&l.cell);
            if (!same && bad++ < 5) {
                fprintf(stderr, "     run %d step %d: params %lld %lld %lld cost %lld flags 0x%x at %lld\n", run, step,
                        (long long)l.params[0], (long long)l.params[1], (long long)l.params[2], (long long)cost,
                        flags, (long long)now);
                print_reply("got     ", &got);
                print_reply("expected", &want);
            }
        }
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(calls, 400 * 250);
}

int main(void) {
    test_known_dates();
    test_every_day();
    test_windows_against_libc();
    test_known_windows();
    test_tables();
    test_cells();
    test_generic();
    test_clock_back_sequences();
    test_trace();
    return check_summary("unit_quota");
}
