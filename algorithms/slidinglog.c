/* slidinglog.c -- the sliding log (RL.SLIDINGLOG), the decision only.
 *
 * The idea. Every attempt is remembered as `cost` units at its time; an attempt at t may go ahead iff
 * the units of the last W (those with score > t - W) plus its own cost stay within the limit, and, with
 * MINGAP G, the newest entry still in the window is at least G old. As in ClassDojo's limiter the attempt
 * is logged whether admitted or blocked, so a client that keeps hammering stays blocked. The module keeps
 * the log in a sorted set, one member per attempt carrying its cost as a weight, and does the I/O; this
 * file decides, from the newest units in the window, what to reply and which units to keep (and, for
 * REFUND n, how many of the newest to give back). Everything below is stated for a log of one entry per
 * unit; a member of weight w is w such entries at one score.
 *
 * The rule, with L = limit, n = cost, W = window_ms in µs, G = mingap_ms in µs, t = now, and c = units
 * with score > t - W (after the ones with score <= t - W are removed), where a score above t counts as t:
 *   - n > L: blocked, retry_after -1 (never), and nothing is logged: such an attempt can never be
 *     admitted, so logging it would only lock the key for a window, as no other limiter does;
 *   - else blocked iff c + n > L, or G > 0, c > 0 and t - newest < G (newest = the newest entry in the
 *     window; once it has left the window it no longer counts, so a G longer than W acts as W);
 *   - n = 0 (a peek) follows the same rule: blocked while c > L or the gap is not yet over;
 *   - an attempt with n <= L then logs n units at t, whatever the outcome.
 *
 * Scores above now. An entry whose score is above t (logged before the clock stepped back, or a user's
 * ZADD in the future, even +inf) counts as logged at t, and the module moves it to t when it writes. So
 * no entry keeps a key alive for more than one window after the call that writes it. The price: after the
 * clock steps back by X, the entries logged in the X before the step count as logged at the new time and
 * leave the window up to X sooner than they would on a clock that held still, so the next window may
 * admit up to the limit again sooner. (The count at the moment of the step never goes down: the window
 * (t - W, t] reaches further back and still holds the moved entries.)
 *
 * Why limit + 1 units are enough (the memory bound). Call the log the module would keep without any cap
 * the full log. Whatever time t' a later call reads, its window {score > t' - W} is an upper set of scores,
 * i.e. a newest-first prefix of the log. Everything that call asks is about that prefix:
 *   - the count rule asks whether c' > L - n' with 0 <= n' <= L, i.e. whether the window holds at least
 *     k = L - n' + 1 <= L + 1 units, i.e. whether the k-th newest unit is in the window;
 *   - a peek asks whether c' > L: whether the (L+1)-th newest is in the window;
 *   - n' > L is blocked whatever the log; MINGAP looks only at the newest entry;
 *   - remaining = max(0, L - c') depends only on min(c', L + 1); reset_after on the newest entry;
 *   - retry_after is the first time the k-th newest (k <= L + 1 as above) and the newest have left (or
 *     the gap is over).
 * So the replies of every later call depend on the newest L + 1 units only. And keeping the newest
 * L + 1 commutes with what a call does to the log: removing all units <= t - W cuts an older suffix,
 * moving units above t to t keeps the newest-first order (it only makes ties), adding n units at t
 * inserts them at their place; the newest L + 1 of the result are the newest L + 1 of (the newest L + 1
 * before) + (the new ones). Hence a log capped at L + 1 units answers every call exactly as the full log
 * would. Units of one score are interchangeable, so the cap may cut a member: it keeps part of its weight.
 *
 * FORCE (COST n, FORCE): the attempt is admitted whatever the log holds (the count rule, MINGAP, and a cost
 * above the limit are not asked), and its n units are logged at t. The window may then hold more than L
 * units, which is the debt: remaining is 0, a later attempt without FORCE is blocked until enough units
 * have left (the retry below, exact as always), and reset_after is when the newest unit leaves. The memory
 * bound still holds with FORCE: a forced attempt is "adding n units at t", which the argument above covers
 * for any n, because the n units share the score t. So of an attempt of n > L + 1 units, L + 1 are logged
 * (one member of that weight), and every later reply is the one the full log would give: whatever the
 * cost, all of it leaves the window at the same instant t + W, and no decision asks about more than the
 * newest L + 1 units. Nothing saturates for the decisions, then; what the cap cuts is seen by a refund
 * only, as for blocked attempts (and a forced attempt is usage that happened, not one to refund).
 *
 * REFUND n. The newest units of the log are the attempts just made, so a refund, for an attempt that
 * failed downstream and should not count, removes up to n units from the newest end: the newest
 * min(n, c') of the c' = min(c, L + 1) units the log keeps in the window (scores above now counting as
 * now, as always; which units of one score go does not matter). Nothing is logged; the call still trims
 * what left the window and what lies beyond the newest L + 1, as every call does, so a refund of 0 changes
 * nothing else. The reply is the log after it: allowed 1, remaining = max(0, L - (c' - dropped)),
 * reset_after = until the newest unit left has left the window (0 when none is left), retry_after -1,
 * wait 0, granted 0.
 *   A refund is the one call whose result would depend on more than the newest L + 1 units of the full
 * log: removing the newest n brings the next n forward, and the cap may already have removed them. The
 * log the module keeps is the state, so they stay removed: a refund takes its units off the newest L + 1.
 * So after a window that held more than L + 1 units (blocked attempts that kept coming, or others'
 * members), a refund leaves fewer units than a log that kept everything would, and a later attempt may be
 * admitted sooner than there: the price of the memory bound. (Keeping exactly what every sequence of
 * refunds could bring forward would mean keeping the whole log.) The undo of an admitted attempt is exact
 * all the same: that attempt found c + n <= L, so nothing was cut, and a refund of n right after it leaves
 * the log a COST 0 would have left. After a refund the stored log is the newest units of the log the
 * refund left, so the proof above applies again from there on.
 *
 * Retry. After the attempt's own units are logged, with e_0 >= e_1 >= ... the log newest first (every
 * score now <= t), the same attempt at T >= t passes the count rule iff fewer than L - n + 1 units remain,
 * i.e. T >= e_{L-n} + W (no condition if the log holds at most L - n units), and passes MINGAP iff
 * T >= e_0 + min(G, W). Both conditions only relax as T grows, so the first admitted time is the larger
 * of the two and the reply rounds it up to whole ms. A blocked attempt is still blocked at t after logging
 * itself, so retry >= 1 ms.
 *
 * Bounds: scores and now are within +-7.1*10^16 µs (the module's clock), W and G <= 10^15 µs, L, n <=
 * 10^12: every sum below fits in 64 bits; they are taken in 128 anyway, since scores come from the store. */
#include "slidinglog.h"

int64_t rl_slog_read_max(const rl_request *req) {
    int64_t limit = req->params[0];
    if (limit < 0) return 1;
    return limit == INT64_MAX ? INT64_MAX : limit + 1;
}

/* A score as the decision sees it: one above now counts as now. */
static int64_t clamp_now(int64_t score, int64_t now) { return score > now ? now : score; }

/* The log after the call, newest first, without building it: `add` units at now, then the units kept
 * (read through the view, after the `drop` newest that a refund removes). */
typedef struct slog_after {
    const rl_slog_view *read;
    int64_t add, size;
    int64_t now;
    int64_t drop;
} slog_after;

static int64_t slog_unit(const slog_after *a, int64_t k) {
    /* k - add + drop < keep + drop <= the units in the window: a unit the view holds */
    return k < a->add ? a->now : clamp_now(a->read->nth(a->read->ctx, k - a->add + a->drop), a->now);
}

/* --- the array form ------------------------------------------------------------------------------- */

typedef struct array_log {
    const rl_slog_entry *e;
    size_t n;
} array_log;

/* The i-th newest unit: walk the entries, their weights summed. */
static int64_t array_nth(void *ctx, int64_t i) {
    const array_log *a = ctx;
    for (size_t k = 0; k < a->n; k++) {
        if (i < a->e[k].weight) return a->e[k].at_us;
        i -= a->e[k].weight;
    }
    return INT64_MIN; /* not reached: the decision asks for i < in_window */
}

void rl_slog_decide(const rl_request *req, const rl_slog_entry *newest_first, size_t n, rl_slog_plan *plan,
                    rl_reply *reply) {
    rl_i128 out_edge = (rl_i128)req->now_us - req->params[1] * 1000;
    int64_t cap = rl_slog_read_max(req);
    /* The units in the window (a newest-first prefix of entries), counted until cap is reached. */
    int64_t c = 0;
    size_t k = 0;
    while (k < n && c < cap && (rl_i128)newest_first[k].at_us > out_edge) {
        c = newest_first[k].weight < cap - c ? c + newest_first[k].weight : cap;
        k++;
    }
    array_log a = {newest_first, k};
    rl_slog_view view = {c, n > 0 ? newest_first[0].at_us : INT64_MIN, array_nth, &a};
    rl_slog_decide_view(req, &view, plan, reply);
}

/* --- the decision ---------------------------------------------------------------------------------- */

/* REFUND n: the newest min(n, c) of the c units kept in the window go (c <= limit + 1), nothing is added;
 * always allowed. */
static void slog_refund(const rl_request *req, const rl_slog_view *view, int64_t c, rl_slog_plan *plan,
                        rl_reply *reply) {
    int64_t limit = req->params[0];
    int64_t n = req->cost > 0 ? req->cost : 0;
    int64_t drop = n < c ? n : c;
    plan->at_us = req->now_us;
    plan->add = 0;
    plan->drop = drop;
    plan->keep = c - drop;

    slog_after after = {view, 0, c - drop, req->now_us, drop};
    reply->allowed = 1;
    reply->limit = limit;
    reply->wait_ms = 0;
    reply->granted = 0;
    reply->remaining = after.size < limit ? limit - after.size : 0;
    /* Every unit left is in the window at now: the log empties when the newest of them leaves it. */
    rl_i128 idle_us = 0;
    if (after.size > 0) idle_us = (rl_i128)slog_unit(&after, 0) + req->params[1] * 1000 - req->now_us;
    rl_reply_times(reply, -1, idle_us);
}

void rl_slog_decide_view(const rl_request *req, const rl_slog_view *view, rl_slog_plan *plan, rl_reply *reply) {
    int64_t limit = req->params[0];
    int64_t window_us = req->params[1] * 1000;
    int64_t gap_us = req->mingap_ms * 1000;
    int64_t cost = req->cost;
    int64_t now = req->now_us;
    int64_t cap = rl_slog_read_max(req); /* limit + 1 */
    int64_t c = view->in_window < cap ? view->in_window : cap;
    int64_t newest = clamp_now(view->newest_us, now);

    if (req->flags & RL_F_REFUND) {
        slog_refund(req, view, c, plan, reply);
        return;
    }

    int force = (req->flags & RL_F_FORCE) != 0;
    int over = cost > limit;
    int allowed = force || (!over && (rl_i128)c + cost <= limit);
    if (allowed && !force && gap_us > 0 && c > 0 && (rl_i128)now - newest < gap_us) allowed = 0;

    /* Keep the newest limit + 1 of (cost units at now) + (units read): the new ones are the newest. An
     * attempt above the limit logs nothing, like a peek, unless forced: then its newest limit + 1 units are
     * logged (all at now, so which does not matter). A blocked one is logged too, unless the caller logs
     * nothing for it (RL_F_NOLOG: RL.ALL writes nothing when denied). */
    int64_t add = over ? 0 : cost; /* cost <= limit < cap */
    if (force) add = cost < cap ? cost : cap;
    if (!allowed && (req->flags & RL_F_NOLOG)) add = 0;
    int64_t keep = c < cap - add ? c : cap - add;
    plan->add = add;
    plan->keep = keep;
    plan->drop = 0;
    plan->at_us = now;

    slog_after after = {view, add, keep + add, now, 0};

    reply->allowed = allowed;
    reply->limit = limit;
    reply->wait_ms = 0;
    reply->granted = allowed ? cost : 0;
    reply->remaining = after.size < limit ? limit - after.size : 0;

    /* Every unit kept is in the window at now, so the log empties when the newest leaves it. */
    rl_i128 idle_us = 0;
    if (after.size > 0) idle_us = (rl_i128)slog_unit(&after, 0) + window_us - now;

    rl_i128 retry_us = -1;
    if (!allowed && !over) {
        rl_i128 at = now;
        int64_t k = limit - cost; /* 0 <= k <= limit < cap: the (L-n+1)-th newest must leave */
        if (k < after.size) {
            rl_i128 leave = (rl_i128)slog_unit(&after, k) + window_us;
            if (leave > at) at = leave;
        }
        if (gap_us > 0 && after.size > 0) {
            rl_i128 gap_over = (rl_i128)slog_unit(&after, 0) + (gap_us < window_us ? gap_us : window_us);
            if (gap_over > at) at = gap_over;
        }
        retry_us = at - now;
    }
    rl_reply_times(reply, retry_us, idle_us);
}
