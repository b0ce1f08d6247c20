/* window.c -- window counters: fixed window and sliding-window counter, in exact integer arithmetic.
 *
 * Time is cut into windows of W ms aligned to the Unix epoch: window k covers [k*W, (k+1)*W). Decisions
 * are made at whole milliseconds, t = floor(now_us / 1000); the times in the reply are measured from
 * now_us to a whole-ms instant, so rounding them up to ms in rl_reply_times is exact.
 *
 * Fixed window (FIXED). The current window's count c: a request of n is admitted iff c + n <= limit.
 *
 * Sliding-window counter (SLIDING, the default). With p the previous window's count, c the current one's
 * and e the ms elapsed in the current window, the requests of the last W ms are estimated as
 *     p * (W - e) / W + c
 * (the previous window's requests taken as spread evenly over it). A request of n is admitted iff the
 * estimate with it stays within the limit. Multiplied by W this is the exact integer test
 *     p * (W - e) + (c + n) * W <= limit * W.
 * As time passes the estimate only falls: p's weight decays each ms, then at the next window p becomes
 * c and c becomes 0, and one window later both are 0. So the first instant a denied request would pass is
 * found by solving the test in the current window, then in the next, else at the start of the one after.
 *
 * Denied requests are not counted. The state (see window.h) is shared by both modes; both keep prev
 * up to date as windows roll over, FIXED just does not look at it.
 *
 * REFUND n (both modes, the same rule, as the counts mean the same in both): the current window's count
 * drops by n, not below 0, and what is left of n comes off the previous window's count, not below 0.
 * The limiter does not know when the refunded units were admitted; the current window is charged first
 * because that is where the last admissions went (and its count weighs fully), the previous window
 * holds what was admitted just before it. Never more than n comes off. Going on into the previous count
 * is what makes a refund just after a boundary give back what the same refund just before it would have
 * (that one came off the count that is now the previous one), and so what keeps a clock running behind
 * from gaining anything by refunding early.
 *   - SLIDING: a unit off the current count lowers the estimate by 1, a unit off the previous count by
 *     (W - e) / W, what it still weighs. A refund that empties both counts leaves the limiter idle.
 *   - FIXED: what comes off the previous count is never seen. FIXED decisions do not read it, and it
 *     only comes off once the current count is 0, which leaves a FIXED key idle (deleted; idle is new).
 *     So a FIXED refund is curr = max(0, curr - n): units admitted in a window that has ended are not
 *     given back, as FIXED already forgot them at the boundary. (Charging the previous count rather
 *     than dropping the excess could only matter to a later SLIDING read of the cell, and there is none:
 *     the key is deleted, and an idle limiter is a new one.)
 * The refund applies to the decision's window (the view below: rolled forward to now, or the stored
 * window when the clock is behind it), like any request; it is always allowed.
 *
 * ATMOST with COST n takes min(n, available) units when that is >= 1, else it is the request of 1 unit
 * (denied, retry_after_ms when 1 unit would fit): see rl_atmost_cost. Available is the `remaining` of a
 * COST 0 call: limit - c (FIXED), the largest m with p * (W - e) + (c + m) * W <= limit * W (SLIDING).
 *
 * FORCE (every mode; COST n, FORCE) counts the n units whatever the count: the window goes over its limit,
 * which is the debt, and the reply is allowed (retry -1, granted n) even for n above the limit. remaining is
 * 0 while over; a later request without FORCE is denied until the units counted have left (or weigh) enough
 * for it, with the exact retry. A window repays its debt as it forgets any count: FIXED when the window
 * ends, SLIDING as the over-full count weighs less through the next window, SUBWINDOWS when the cell that
 * holds it leaves; reset_after is, as always, when everything counted has gone, debt included. Saturation:
 * a count (FIXED and SLIDING's current one; SUBWINDOWS's sum of cells) is at most RL_MAX_COUNT (10^12), the
 * largest a cell holds and cell_valid accepts (the counts have 40 bits, so no new layout): a debt of at most
 * 10^12 - limit units. A FORCE beyond it is still allowed; the count stays at 10^12.
 *
 * Sub-windows (SUBWINDOWS n). The window is made of n epoch-aligned cells of cell_ms = W / n; each
 * counts what it admitted, and a request at t counts the n cells ending with t's cell (index floor(t /
 * cell_ms)): admitted iff their sum + cost <= limit. The n cells cover the trailing W but for the stretch
 * (under one cell) that lies in the cell that has just left: the count is a part of the exact one, so it
 * never denies what an exact window would admit, and may admit what was admitted in that stretch too much
 * (accuracy grows with n, memory is n counters). retry_after_ms is the first cell boundary at which enough
 * of the oldest cells have left for the cost to fit; reset_after_ms is when the newest counted cell leaves.
 * REFUND n comes off the newest cells first (the last admissions went there), never below 0; ATMOST's
 * available is limit - sum. The clock behind the newest cell decides as at that cell, as above. A key last
 * written in another mode, or with another n or cell length, is read conservatively: whatever its state
 * still counts at t goes whole into t's cell (or, for FIXED and SLIDING reading a sub-window state, into
 * t's window), as if just admitted, so nothing is forgotten; the price is that it counts up to one window
 * longer than it would have.
 *
 * Edge cases:
 *   - The window size changed since the state was written (the stored start may not be a multiple of the
 *     new W): the stored window is mapped onto the new grid at j = floor(start / W), the window holding
 *     its start. Its count counts as window j's and its previous count as window j-1's. No count is lost
 *     at the change, but with only two counts kept some may land one window off from where their
 *     requests fell on the new grid: the estimate is approximate for two windows after a resize.
 *   - The clock runs backwards, to before the stored window: it must never grant more. The decision is
 *     made as if at the start of the stored window (e = 0, where the previous count weighs most). The
 *     clock never moves the state back, so nothing admitted is forgotten; reply times are still measured
 *     from the real now.
 *
 * Bounds: limit, counts and n <= 10^12, W <= 10^12 ms, times < 2^46 ms (7.1*10^13). Products such as
 * limit * W reach 10^24: they are taken in 128 bits. Every instant computed is at most two windows after
 * a time < 2^46 ms, so it fits in 64 bits even in µs. */
#include "window.h"

#include <stdio.h>
#include <string.h>

#define WINDOW_START_MASK ((1ULL << RL_WINDOW_START_BITS) - 1)
#define WINDOW_COUNT_MASK ((1ULL << RL_WINDOW_COUNT_BITS) - 1)
#define WINDOW_PREV_LOW_MASK ((1ULL << RL_WINDOW_PREV_LOW_BITS) - 1)
#define WINDOW_TOP_BIT (1ULL << 63)

/* --- the cell ------------------------------------------------------------------------------------- */

rl_window_state rl_window_unpack(const rl_cell *cell) {
    rl_window_state s;
    s.start_ms = (int64_t)(cell->w[0] & WINDOW_START_MASK);
    s.curr = (int64_t)(cell->w[1] & WINDOW_COUNT_MASK);
    uint64_t prev_low = (cell->w[0] >> RL_WINDOW_START_BITS) & WINDOW_PREV_LOW_MASK;
    uint64_t prev_high = (cell->w[1] & ~WINDOW_TOP_BIT) >> RL_WINDOW_COUNT_BITS;
    s.prev = (int64_t)(prev_low | (prev_high << RL_WINDOW_PREV_LOW_BITS));
    s.fixed = (cell->w[1] & WINDOW_TOP_BIT) != 0;
    return s;
}

void rl_window_pack(rl_window_state s, rl_cell *cell) {
    uint64_t prev = (uint64_t)s.prev;
    cell->w[0] = (uint64_t)s.start_ms | ((prev & WINDOW_PREV_LOW_MASK) << RL_WINDOW_START_BITS);
    cell->w[1] = (uint64_t)s.curr | ((prev >> RL_WINDOW_PREV_LOW_BITS) << RL_WINDOW_COUNT_BITS) |
                 (s.fixed ? WINDOW_TOP_BIT : 0);
}

/* --- the sub-window state (window.h) --------------------------------------------------------------- */

typedef struct sub_state {
    int n;
    int64_t cell_ms;
    int64_t newest;                              /* index of the newest cell */
    int64_t count[RL_WINDOW_MAX_SUBWINDOWS];     /* cell k's count at count[k % n] */
} sub_state;

/* Cell k's place in the ring (k < 0 near the epoch: cells before it, never counted). */
static int slot(int64_t k, int n) { return (int)(((k % n) + n) % n); }

static int is_sub(const rl_cell *cell) { return (cell->w[0] & RL_WINDOW_SUB_BIT) != 0; }
static int sub_n(const rl_cell *cell) { return (int)((cell->w[0] >> RL_WINDOW_SUB_N_SHIFT) & 0x3f); }

static void sub_read(const rl_cell *cell, sub_state *s) {
    s->n = sub_n(cell);
    s->newest = (int64_t)(cell->w[0] & WINDOW_START_MASK);
    s->cell_ms = (int64_t)cell->w[1];
    for (int i = 0; i < s->n; i++) s->count[i] = (int64_t)cell->w[2 + i];
}

static void sub_write(const sub_state *s, rl_cell *cell) {
    cell->w[0] = RL_WINDOW_SUB_BIT | ((uint64_t)s->n << RL_WINDOW_SUB_N_SHIFT) | (uint64_t)s->newest;
    cell->w[1] = (uint64_t)s->cell_ms;
    for (int i = 0; i < s->n; i++) cell->w[2 + i] = (uint64_t)s->count[i];
}

/* n in range, a cell length whose window is a valid period, a newest cell that starts at a valid time
 * (so (newest + n) * cell_ms stays far inside int64), counts within range, the unused bits clear. */
static int sub_valid(const rl_cell *cell) {
    int n = sub_n(cell);
    if (n < RL_WINDOW_MIN_SUBWINDOWS || n > RL_WINDOW_MAX_SUBWINDOWS) return 0;
    if ((cell->w[0] & ~RL_WINDOW_SUB_BIT) >> (RL_WINDOW_SUB_N_SHIFT + 6)) return 0;
    uint64_t cell_ms = cell->w[1], newest = cell->w[0] & WINDOW_START_MASK;
    if (cell_ms < 1 || cell_ms > (uint64_t)(RL_MAX_PERIOD_MS / n)) return 0;
    if (newest > (uint64_t)(RL_MAX_TIME_MS - 1) / cell_ms) return 0;
    for (int i = 0; i < n; i++)
        if (cell->w[2 + i] > (uint64_t)RL_MAX_COUNT) return 0;
    return 1;
}

static int window_cell_valid(const rl_cell *cell) {
    if (is_sub(cell)) return sub_valid(cell);
    rl_window_state s = rl_window_unpack(cell);
    return s.curr <= RL_MAX_COUNT && s.prev <= RL_MAX_COUNT;
}

static unsigned window_words(const rl_cell *cell) {
    int n = sub_n(cell);
    return is_sub(cell) && n >= RL_WINDOW_MIN_SUBWINDOWS && n <= RL_WINDOW_MAX_SUBWINDOWS ? 2 + (unsigned)n : 2;
}

/* --- the view at decision time ---------------------------------------------------------------------- */

/* The window a decision is made in, and the counts that weigh on it. */
typedef struct window_view {
    int64_t start_ms;    /* start of the decision's window, a multiple of W */
    int64_t elapsed_ms;  /* ms elapsed in it: 0 <= elapsed_ms < W */
    int64_t curr, prev;  /* counts of that window and of the one before */
} window_view;

/* The decision's time in whole ms, kept where a window start fits in the cell. */
static int64_t window_now_ms(int64_t now_us) {
    int64_t t_ms = now_us > 0 ? now_us / 1000 : 0;
    return t_ms < RL_MAX_TIME_MS ? t_ms : RL_MAX_TIME_MS - 1;
}

/* Roll the stored state forward to the window holding t_ms (see the edge cases above). */
static window_view window_view_at(const rl_window_state *stored, int exists, int64_t window_ms,
                                  int64_t t_ms) {
    window_view v = {t_ms - t_ms % window_ms, t_ms % window_ms, 0, 0};
    if (!exists) return v;
    int64_t stored_start = stored->start_ms - stored->start_ms % window_ms; /* onto the current grid */
    if (stored_start > v.start_ms) { /* clock behind the state: decide at the stored window's start */
        v.start_ms = stored_start;
        v.elapsed_ms = 0;
    }
    if (v.start_ms == stored_start) {
        v.curr = stored->curr;
        v.prev = stored->prev;
    } else if (v.start_ms == stored_start + window_ms && !stored->fixed) {
        /* (A FIXED write went idle when its window ended: from then on it is a new limiter.) */
        v.prev = stored->curr;
    }
    return v;
}

/* Microseconds from now_us to the instant `at_ms`. */
static rl_i128 window_us_until(int64_t at_ms, int64_t now_us) {
    return (rl_i128)at_ms * 1000 - now_us;
}

/* A count after `cost` more units: saturated at RL_MAX_COUNT, the most a count holds (only FORCE gets there;
 * a count already above it, from a crafted cell, is not raised). */
static int64_t counted(int64_t count, int64_t cost) {
    if (count >= RL_MAX_COUNT) return count;
    return cost < RL_MAX_COUNT - count ? count + cost : RL_MAX_COUNT;
}

/* --- refunds ---------------------------------------------------------------------------------------- */

/* REFUND n: off the current window's count first, the rest off the previous one's, neither below 0. */
static void window_refund(window_view *v, int64_t n) {
    int64_t from_curr = n < v->curr ? n : v->curr;
    v->curr -= from_curr;
    int64_t rest = n - from_curr;
    v->prev = rest < v->prev ? v->prev - rest : 0;
}

/* --- fixed window ----------------------------------------------------------------------------------- */

/* Units a FIXED request could take now. */
static int64_t fixed_available(const window_view *v, int64_t limit) {
    return v->curr < limit ? limit - v->curr : 0;
}

/* Decide `cost` (refund: the refund is already in *v, nothing to take). */
static void fixed_decide(const rl_request *req, window_view *v, int64_t cost, int refund, rl_reply *reply) {
    int64_t limit = req->params[0], window_ms = req->params[1];
    int force = (req->flags & RL_F_FORCE) != 0;
    int64_t window_end_ms = v->start_ms + window_ms;

    reply->allowed = refund || force || v->curr + cost <= limit;
    if (reply->allowed && !refund) v->curr = force ? counted(v->curr, cost) : v->curr + cost; /* (fits: <= limit) */
    reply->remaining = fixed_available(v, limit);

    /* The count only falls, to 0, when the window ends. */
    rl_i128 retry_us = !reply->allowed && cost <= limit ? window_us_until(window_end_ms, req->now_us) : -1;
    rl_i128 idle_us = v->curr > 0 ? window_us_until(window_end_ms, req->now_us) : 0;
    rl_reply_times(reply, retry_us, idle_us);
}

/* --- sliding-window counter ------------------------------------------------------------------------- */

/* The weighted estimate of the last W ms, times W, with `extra` more requests in the current window. */
static rl_i128 sliding_weight(const window_view *v, int64_t window_ms, int64_t extra) {
    return (rl_i128)v->prev * (window_ms - v->elapsed_ms) + ((rl_i128)v->curr + extra) * window_ms;
}

/* Units a SLIDING request could take now: the largest m with prev * (W - e) + (curr + m) * W <= limit * W
 * (0 if none). */
static int64_t sliding_available(const window_view *v, int64_t limit, int64_t window_ms) {
    rl_i128 fits = rl_floor_div((rl_i128)limit * window_ms - sliding_weight(v, window_ms, 0), window_ms);
    return fits > 0 ? rl_sat64(fits) : 0;
}

/* The first elapsed ms e >= from at which prev * (W - e) <= room, i.e. e >= W - room / prev; W when not
 * within the window (room < 0: not even once prev has stopped weighing). */
static int64_t sliding_first_fit(int64_t prev, rl_i128 room, int64_t from, int64_t window_ms) {
    if (room < 0) return window_ms;
    rl_i128 e = prev > 0 ? window_ms - room / prev : 0;
    if (e < from) e = from;
    return e < window_ms ? (int64_t)e : window_ms;
}

/* The first ms at which `cost` (<= limit) would be admitted, the state left as it is. */
static int64_t sliding_retry_ms(const window_view *v, int64_t limit, int64_t window_ms, int64_t cost) {
    /* Later in the current window: prev * (W - e) + (curr + cost) * W <= limit * W. */
    rl_i128 room = ((rl_i128)limit - v->curr - cost) * window_ms;
    int64_t e = sliding_first_fit(v->prev, room, v->elapsed_ms + 1, window_ms);
    if (e < window_ms) return v->start_ms + e;
    /* In the next window, where curr has become prev and nothing is counted yet; at worst at its end,
     * when both are 0 (cost <= limit fits then). */
    room = ((rl_i128)limit - cost) * window_ms;
    return v->start_ms + window_ms + sliding_first_fit(v->curr, room, 0, window_ms);
}

/* Decide `cost` (refund: the refund is already in *v, nothing to take). */
static void sliding_decide(const rl_request *req, window_view *v, int64_t cost, int refund, rl_reply *reply) {
    int64_t limit = req->params[0], window_ms = req->params[1];
    rl_i128 budget = (rl_i128)limit * window_ms;

    int force = (req->flags & RL_F_FORCE) != 0;
    reply->allowed = refund || force || (cost <= limit && sliding_weight(v, window_ms, cost) <= budget);
    if (reply->allowed && !refund) v->curr = force ? counted(v->curr, cost) : v->curr + cost; /* (fits: <= limit) */
    reply->remaining = sliding_available(v, limit, window_ms);

    rl_i128 retry_us = -1;
    if (!reply->allowed && cost <= limit)
        retry_us = window_us_until(sliding_retry_ms(v, limit, window_ms, cost), req->now_us);
    /* The estimate is 0 once the windows of both counts have passed. */
    rl_i128 idle_us = 0;
    if (v->curr > 0)
        idle_us = window_us_until(v->start_ms + 2 * window_ms, req->now_us);
    else if (v->prev > 0)
        idle_us = window_us_until(v->start_ms + window_ms, req->now_us);
    rl_reply_times(reply, retry_us, idle_us);
}

/* --- sub-windows ------------------------------------------------------------------------------------ */

/* The units a stored sub-window state still counts at t_ms, under its own n and cell length (all of them
 * when the clock is behind its newest cell). */
static int64_t sub_in_window(const sub_state *s, int64_t t_ms) {
    int64_t idx = t_ms / s->cell_ms, total = 0;
    if (idx < s->newest) idx = s->newest;
    for (int64_t k = s->newest - s->n + 1; k <= s->newest; k++)
        if (k > idx - s->n) total += s->count[slot(k, s->n)];
    return total;
}

/* A state of another mode (or another n or cell length) seen by SUBWINDOWS, and the reverse: whatever the
 * stored state still counts at t_ms goes whole into the cell (or window) of t_ms, as if just admitted. This
 * never admits more than the stored state would (its units are kept, and kept longest), at the price of
 * holding them up to one window longer. */
static int64_t stored_in_window(const rl_cell *cell, int64_t window_ms, int64_t t_ms) {
    if (is_sub(cell)) {
        sub_state s;
        sub_read(cell, &s);
        return sub_in_window(&s, t_ms);
    }
    rl_window_state stored = rl_window_unpack(cell);
    window_view v = window_view_at(&stored, 1, window_ms, t_ms);
    int64_t total = v.curr + (stored.fixed ? 0 : v.prev);
    return total < RL_MAX_COUNT ? total : RL_MAX_COUNT;
}

/* The state at t_ms for a request of n cells of cell_ms: the stored one rolled forward to t's cell (or kept
 * at its newest cell when the clock is behind it: decided there, it never grants more), else a new ring. */
static void sub_view_at(const rl_cell *cell, int exists, int n, int64_t cell_ms, int64_t t_ms, sub_state *s) {
    int64_t idx = t_ms / cell_ms;
    if (exists && is_sub(cell) && sub_n(cell) == n && (int64_t)cell->w[1] == cell_ms) {
        sub_read(cell, s);
        if (idx > s->newest) {
            for (int64_t k = s->newest + 1; k <= idx && k <= s->newest + n; k++) s->count[slot(k, n)] = 0;
            s->newest = idx;
        }
        return;
    }
    s->n = n;
    s->cell_ms = cell_ms;
    s->newest = idx;
    memset(s->count, 0, sizeof s->count);
    if (exists) s->count[slot(idx, n)] = stored_in_window(cell, (int64_t)n * cell_ms, t_ms);
}

static int64_t sub_sum(const sub_state *s) {
    int64_t sum = 0;
    for (int i = 0; i < s->n; i++) sum += s->count[i];
    return sum;
}

/* REFUND n: off the newest cells first, none below 0. */
static void sub_refund(sub_state *s, int64_t n) {
    for (int64_t k = s->newest; k > s->newest - s->n && n > 0; k--) {
        int64_t *c = &s->count[slot(k, s->n)];
        int64_t take = n < *c ? n : *c;
        *c -= take;
        n -= take;
    }
}

/* The first cell boundary at which `cost` (<= limit) fits: when enough of the oldest cells have left. */
static int64_t sub_retry_ms(const sub_state *s, int64_t limit, int64_t cost) {
    int64_t left = sub_sum(s);
    for (int j = 1; j < s->n; j++) {
        left -= s->count[slot(s->newest - s->n + j, s->n)];
        if (left + cost <= limit) return (s->newest + j) * s->cell_ms;
    }
    return (s->newest + s->n) * s->cell_ms; /* every cell has left */
}

static void sub_decide(const rl_request *req, rl_cell *cell, int exists, rl_reply *reply) {
    int64_t limit = req->params[0], n = req->params[2], cost = req->cost;
    int refund = (req->flags & RL_F_REFUND) != 0;
    sub_state s;
    sub_view_at(cell, exists, (int)n, req->params[1] / n, window_now_ms(req->now_us), &s);

    reply->limit = limit;
    reply->wait_ms = 0;
    if (refund)
        sub_refund(&s, cost);
    else if (req->flags & RL_F_ATMOST)
        cost = rl_atmost_cost(cost, limit > sub_sum(&s) ? limit - sub_sum(&s) : 0);
    int64_t sum = sub_sum(&s);
    reply->allowed = refund || (req->flags & RL_F_FORCE) || (cost <= limit && sum + cost <= limit);
    if (reply->allowed && !refund) { /* the sum saturates as one count does (FORCE) */
        int64_t *newest = &s.count[slot(s.newest, (int)n)];
        *newest += counted(sum, cost) - sum;
        sum = counted(sum, cost);
    }
    reply->remaining = limit > sum ? limit - sum : 0;
    reply->granted = reply->allowed && !refund ? cost : 0;

    rl_i128 retry_us = -1, idle_us = 0;
    if (!reply->allowed && cost <= limit) retry_us = window_us_until(sub_retry_ms(&s, limit, cost), req->now_us);
    for (int64_t k = s.newest; k > s.newest - n; k--) /* idle when the newest counted cell has left */
        if (s.count[slot(k, (int)n)] > 0) {
            idle_us = window_us_until((k + n) * s.cell_ms, req->now_us);
            break;
        }
    rl_reply_times(reply, retry_us, idle_us);
    sub_write(&s, cell);
}

/* --- the algorithm ---------------------------------------------------------------------------------- */

static int window_validate(const rl_request *req, char err[RL_ERR_LEN]) {
    /* Otherwise nothing the per-argument ranges leave open: at most two windows of 10^12 ms to idle, which
     * is within range everywhere it is used. */
    if ((req->flags & RL_F_SUBWINDOWS) && req->params[1] % req->params[2] != 0) {
        snprintf(err, RL_ERR_LEN, "ERR SUBWINDOWS: window_ms must be a multiple of n (%lld is not a multiple of %lld)",
                 (long long)req->params[1], (long long)req->params[2]);
        return -1;
    }
    return 0;
}

static void window_decide(const rl_request *req, rl_cell *cell, int exists, rl_reply *reply) {
    int64_t limit = req->params[0], window_ms = req->params[1], cost = req->cost;
    if (req->flags & RL_F_SUBWINDOWS) {
        sub_decide(req, cell, exists, reply);
        return;
    }
    int fixed = (req->flags & RL_F_FIXED) != 0, refund = (req->flags & RL_F_REFUND) != 0;
    int64_t t_ms = window_now_ms(req->now_us);
    rl_window_state stored = {0, 0, 0, 0};
    if (exists && is_sub(cell)) /* a sub-window state: what it counts, into the current window */
        stored = (rl_window_state){t_ms - t_ms % window_ms, stored_in_window(cell, window_ms, t_ms), 0, fixed};
    else if (exists)
        stored = rl_window_unpack(cell);
    window_view v = window_view_at(&stored, exists, window_ms, t_ms);

    reply->limit = limit;
    reply->wait_ms = 0;
    if (refund) {
        window_refund(&v, cost);
    } else if (req->flags & RL_F_ATMOST) {
        int64_t available = fixed ? fixed_available(&v, limit) : sliding_available(&v, limit, window_ms);
        cost = rl_atmost_cost(cost, available);
    }
    if (fixed)
        fixed_decide(req, &v, cost, refund, reply);
    else
        sliding_decide(req, &v, cost, refund, reply);
    reply->granted = reply->allowed && !refund ? cost : 0;

    rl_window_state next = {v.start_ms, v.curr, v.prev, fixed};
    rl_window_pack(next, cell);
}

const rl_algorithm rl_window_algorithm = {
    .validate = window_validate,
    .decide = window_decide,
    .cell_valid = window_cell_valid,
    .words = window_words,
};
