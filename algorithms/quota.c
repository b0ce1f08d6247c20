/* quota.c -- calendar quotas (RL.QUOTA): a fixed window that is a calendar day, week or month.
 *
 * The idea: "1000 calls per day" in a customer's time zone means per calendar day, not per 86,400 s from
 * whenever the first call came. The windows are the calendar's, in UTC shifted by a fixed OFFSET (minutes,
 * -840..840): a local day starts at local midnight (OFFSET 60, UTC+1: at 23:00 UTC the day before), a week
 * on Monday at local midnight, a month on the 1st at local midnight, so a month is 28 to 31 days long. The
 * calendar is our own integer arithmetic (day numbers <-> dates, below): no float, no libc time function,
 * exact for every instant the clock can hold (RL_MAX_TIME_MS, the year 4199), leap years with their
 * century rules (2000 is one, 2100 is not) included. A window may start before the epoch (OFFSET 60 at
 * the epoch: the day started at -1 h); day numbers are then negative and the divisions floor.
 *
 * Counting is that of RL.WINDOW FIXED:
 *   - a request of COST n is admitted iff count + n <= limit, and then counted; a denied request is not
 *     counted; COST 0 peeks (admitted unless the count is above the limit, in debt); a cost above the
 *     limit is never admitted (retry_after_ms -1);
 *   - REFUND n: count = max(0, count - n), always allowed, granted 0;
 *   - FORCE: always admitted, granted the cost, and counted even past the limit (debt). The count is
 *     capped at limit + RL_MAX_DEBT: a FORCE beyond that is admitted all the same and the count saturates
 *     there (it never falls through FORCE: a count already above that cap, left by a larger limit, stays
 *     as it is). While the count is above the limit, remaining is 0 and a plain request is denied until
 *     the window ends;
 *   - remaining = max(0, limit - count); retry_after_ms (denied, cost <= limit) and reset_after_ms
 *     (count > 0) are the exact time from now (µs) to the end of the window, rounded up to ms as every
 *     limiter does (rl_reply_times); a count of 0 is idle (reset_after_ms 0: the module deletes the key),
 *     and since only a count is kept, an idle quota is exactly a new one.
 *
 * The state is the stored window's end and its count (quota.h). A request at now reads the stored window
 * while now < its end, whatever the request's period and OFFSET; otherwise it starts the window of its
 * own period and OFFSET that holds now, [boundary <= now, next boundary), with count 0. So:
 *   - a change of period or of OFFSET on a live key takes effect when the stored window ends: nothing
 *     admitted is forgotten early (a caller following daylight saving by changing OFFSET moves the
 *     boundary from the next window on);
 *   - a clock that runs backwards reads the stored window (now is still before its end), so its units
 *     still count; a new window is only ever started at now >= the stored end and ends after now, so the
 *     stored end never moves back, and a window that has ended, with its budget, is never entered again.
 *     An earlier clock never admits what now denies: before the end it is the same count, and after it a
 *     denial is a cost above the limit, denied at any time. */
#include "quota.h"

#include <stdio.h>

/* --- the calendar ----------------------------------------------------------------------------------- */

/* Days from 0001-01-01 to 1970-01-01: 1969 years of 365 days and their 492 - 19 + 4 leap days. */
#define DAYS_TO_EPOCH 719162LL
/* Days in 400, 100 and 4 Gregorian years (a century's last year is no leap year, the 400th is). */
#define DAYS_400Y 146097LL
#define DAYS_100Y 36524LL
#define DAYS_4Y 1461LL

static const int days_before_month[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};

static int is_leap(int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

/* Days of the year before the 1st of `month`. */
static int64_t days_before(int64_t year, int month) {
    return days_before_month[month - 1] + (month > 2 && is_leap(year));
}

int64_t rl_quota_days_from_civil(int64_t year, int month, int day) {
    int64_t y = year - 1; /* whole years since 0001-01-01, >= 0: the divisions below are floors */
    int64_t days = 365 * y + y / 4 - y / 100 + y / 400;
    return days + days_before(year, month) + (day - 1) - DAYS_TO_EPOCH;
}

void rl_quota_civil_from_days(int64_t days, int64_t *year, int *month, int *day) {
    int64_t n = days + DAYS_TO_EPOCH; /* days since 0001-01-01 */
    int64_t cycles400 = n / DAYS_400Y, rest = n % DAYS_400Y;
    /* The last day of a 400-year cycle is the extra leap day of its fourth century: at most 3 whole
     * centuries, and likewise at most 3 whole years in a 4-year block. */
    int64_t centuries = rest / DAYS_100Y;
    if (centuries == 4) centuries = 3;
    rest -= centuries * DAYS_100Y;
    int64_t blocks4 = rest / DAYS_4Y;
    rest -= blocks4 * DAYS_4Y;
    int64_t years = rest / 365;
    if (years == 4) years = 3;
    rest -= years * 365; /* the day of the year, from 0 */
    int64_t y = 400 * cycles400 + 100 * centuries + 4 * blocks4 + years + 1;
    int m = 12;
    while (m > 1 && days_before(y, m) > rest) m--;
    *year = y;
    *month = m;
    *day = (int)(rest - days_before(y, m)) + 1;
}

/* The first day of the window of `period` that holds local day `d`, and the first day after it. */
static void window_days(int period, int64_t d, int64_t *first, int64_t *after) {
    if (period == RL_QUOTA_DAY) {
        *first = d;
        *after = d + 1;
    } else if (period == RL_QUOTA_WEEK) {
        int64_t since_monday = ((d + 3) % 7 + 7) % 7; /* day 0, 1970-01-01, was a Thursday */
        *first = d - since_monday;
        *after = *first + 7;
    } else {
        int64_t year;
        int month, day;
        rl_quota_civil_from_days(d, &year, &month, &day);
        *first = d - (day - 1);
        *after = month == 12 ? rl_quota_days_from_civil(year + 1, 1, 1) : rl_quota_days_from_civil(year, month + 1, 1);
    }
}

void rl_quota_window_at(int period, int64_t offset_min, int64_t t_ms, int64_t *start_ms, int64_t *end_ms) {
    int64_t offset_ms = offset_min * 60000; /* local time = UTC + offset */
    int64_t local_day = (int64_t)rl_floor_div((rl_i128)t_ms + offset_ms, RL_QUOTA_DAY_MS);
    int64_t first, after;
    window_days(period, local_day, &first, &after);
    *start_ms = first * RL_QUOTA_DAY_MS - offset_ms;
    *end_ms = after * RL_QUOTA_DAY_MS - offset_ms;
}

/* --- the decision ----------------------------------------------------------------------------------- */

/* The decision's time in whole ms, within the clock's range (the module clamps it there already). */
static int64_t quota_now_ms(int64_t now_us) {
    int64_t t_ms = now_us > 0 ? now_us / 1000 : 0;
    return t_ms < RL_MAX_TIME_MS ? t_ms : RL_MAX_TIME_MS - 1;
}

static int quota_validate(const rl_request *req, char err[RL_ERR_LEN]) {
    /* The parser's ranges already hold these; a caller that builds requests itself gets the same words. */
    if (req->params[1] < RL_QUOTA_DAY || req->params[1] > RL_QUOTA_MONTH) {
        snprintf(err, RL_ERR_LEN, "ERR period: must be DAY, WEEK or MONTH");
        return -1;
    }
    if (req->params[2] < -RL_QUOTA_MAX_OFFSET_MIN || req->params[2] > RL_QUOTA_MAX_OFFSET_MIN) {
        snprintf(err, RL_ERR_LEN, "ERR OFFSET: must be an integer between %d and %d", -RL_QUOTA_MAX_OFFSET_MIN,
                 RL_QUOTA_MAX_OFFSET_MIN);
        return -1;
    }
    return 0;
}

static void quota_decide(const rl_request *req, rl_cell *cell, int exists, rl_reply *reply) {
    int64_t limit = req->params[0], cost = req->cost, t_ms = quota_now_ms(req->now_us);
    int refund = (req->flags & RL_F_REFUND) != 0, force = !refund && (req->flags & RL_F_FORCE);
    int64_t end_ms, count;
    if (exists && t_ms < (int64_t)cell->w[0]) { /* the stored window, whatever this request's period */
        end_ms = (int64_t)cell->w[0];
        count = (int64_t)cell->w[1];
    } else {
        int64_t start_ms;
        rl_quota_window_at((int)req->params[1], req->params[2], t_ms, &start_ms, &end_ms);
        count = 0;
    }

    reply->limit = limit;
    reply->wait_ms = 0;
    if (refund) {
        count = cost < count ? count - cost : 0;
        reply->allowed = 1;
    } else if (force) {
        int64_t cap = limit + RL_MAX_DEBT; /* both <= 10^12: no overflow, nor in count + cost below */
        int64_t forced = count + cost < cap ? count + cost : cap;
        if (forced > count) count = forced;
        reply->allowed = 1;
    } else {
        reply->allowed = count + cost <= limit;
        if (reply->allowed) count += cost;
    }
    reply->remaining = count < limit ? limit - count : 0;
    reply->granted = reply->allowed && !refund ? cost : 0;

    /* The count only falls, to 0, when the window ends. */
    rl_i128 to_end_us = (rl_i128)end_ms * 1000 - req->now_us;
    rl_reply_times(reply, !refund && cost <= limit ? to_end_us : -1, count > 0 ? to_end_us : 0);
    cell->w[0] = (uint64_t)end_ms;
    cell->w[1] = (uint64_t)count;
}

static int quota_cell_valid(const rl_cell *cell) {
    /* A count of 0 is idle, never kept by the module; such a state reads as a new quota all the same. */
    return cell->w[0] >= 1 && cell->w[0] <= (uint64_t)RL_QUOTA_MAX_END_MS &&
           cell->w[1] <= (uint64_t)(RL_MAX_COUNT + RL_MAX_DEBT);
}

const rl_algorithm rl_quota_algorithm = {
    .validate = quota_validate,
    .decide = quota_decide,
    .cell_valid = quota_cell_valid,
    .words = rl_two_words,
};
