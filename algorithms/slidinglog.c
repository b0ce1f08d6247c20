/* slidinglog.c -- the sliding log (RL.SLIDINGLOG), the decision only.
 *
 * The idea. Every attempt is remembered as `cost` entries at its time; an attempt at t may go ahead iff
 * the entries of the last W (those with score > t - W) plus its own cost stay within the limit, and, with
 * MINGAP G, the newest entry still in the window is at least G old. As in ClassDojo's limiter the attempt
 * is logged whether admitted or blocked, so a client that keeps hammering stays blocked. The module keeps
 * the log in a sorted set and does the I/O; this file decides, from the newest entries in the window, what
 * to reply and which entries to keep.
 *
 * The rule, with L = limit, n = cost, W = window_ms in µs, G = mingap_ms in µs, c = entries with
 * score > t - W (after the ones with score <= t - W are removed):
 *   - n > L: blocked, retry_after -1 (never);
 *   - else blocked iff c + n > L, or G > 0, c > 0 and t - newest < G (newest = the newest entry in the
 *     window; once it has left the window it no longer counts, so a G longer than W acts as W);
 *   - n = 0 (a peek) follows the same rule: blocked while c > L or the gap is not yet over;
 *   - the attempt then logs n entries at t, whatever the outcome.
 *
 * Why limit + 1 entries are enough (the memory bound). Call the log the module would keep without any cap
 * the full log. Whatever time t' a later call reads, its window {score > t' - W} is an upper set of scores,
 * i.e. a newest-first prefix of the log. Everything that call asks is about that prefix:
 *   - the count rule asks whether c' > L - n' with 0 <= n' <= L, i.e. whether the window holds at least
 *     k = L - n' + 1 <= L + 1 entries, i.e. whether the k-th newest entry is in the window;
 *   - a peek asks whether c' > L: whether the (L+1)-th newest is in the window;
 *   - n' > L is blocked whatever the log; MINGAP looks only at the newest entry;
 *   - remaining = max(0, L - c') depends only on min(c', L + 1); reset_after on the newest entry;
 *   - retry_after is the first time the k-th newest (k <= L + 1 as above) and the newest have left (or
 *     the gap is over).
 * So the replies of every later call depend on the newest L + 1 entries only. And keeping the newest
 * L + 1 commutes with what a call does to the log: removing all entries <= t - W cuts an older suffix,
 * adding n entries at t inserts them at their place; the newest L + 1 of the result are the newest L + 1
 * of (the newest L + 1 before) + (the new ones). Hence a log capped at L + 1 answers every call exactly
 * as the full log would, and one call writes at most L + 1 entries whatever its cost (a cost above L
 * writes L + 1 copies of t, which is all the full log's n copies could ever show).
 *
 * Clock moving backwards. The log keeps its own clock: the newest entry's time. A call whose clock is
 * behind it is decided, and logged, at that newest time t = max(now, newest): as if the clock had held
 * still. Logging at the earlier now would let the new entries leave the window sooner than the ones
 * already there and admit more later than a held clock would. Reply times are measured from now, so a
 * client behind the log's clock is told to wait the extra difference.
 *
 * Retry. After the attempt's own entries are logged, with e_0 >= e_1 >= ... the log newest first, the same
 * attempt at T >= t passes the count rule iff fewer than L - n + 1 entries remain, i.e. T >= e_{L-n} + W
 * (no condition if the log holds at most L - n entries), and passes MINGAP iff T >= e_0 + min(G, W). Both
 * conditions only relax as T grows, so the first admitted time is the larger of the two and the reply
 * rounds it up to whole ms. A blocked attempt is still blocked at t after logging itself, so retry >= 1 ms. Everything below
 * uses t for the decision and now only to turn instants into durations.
 *
 * Bounds: scores and now are within +-7.1*10^16 µs (the module's clock), W and G <= 10^15 µs, L, n <=
 * 10^12: every sum below fits in 64 bits; they are taken in 128 anyway, since scores come from the store. */
#include "slidinglog.h"

int64_t rl_slog_read_max(const rl_request *req) {
    int64_t limit = req->params[0];
    if (limit < 0) return 1;
    return limit == INT64_MAX ? INT64_MAX : limit + 1;
}

/* The log after the call, newest first, without building it: `add` entries at the decision time, then
 * the entries kept (read through the view). */
typedef struct slog_after {
    const rl_slog_view *read;
    int64_t add, size;
    int64_t at;
} slog_after;

static int64_t slog_entry(const slog_after *a, int64_t k) {
    return k < a->add ? a->at : a->read->nth(a->read->ctx, k - a->add);
}

int64_t rl_slog_time(const rl_request *req, int64_t newest_us) {
    /* The log's own clock never runs back: decide (and log) at the newest entry's time if the clock is
     * behind it. Reply times are still measured from now. */
    return newest_us > req->now_us ? newest_us : req->now_us;
}

static int64_t array_nth(void *ctx, int64_t i) { return ((const int64_t *)ctx)[i]; }

void rl_slog_decide(const rl_request *req, const int64_t *newest_first, size_t in_window, rl_slog_plan *plan,
                    rl_reply *reply) {
    int64_t newest = in_window > 0 ? newest_first[0] : INT64_MIN;
    rl_i128 oldest_out = (rl_i128)rl_slog_time(req, newest) - req->params[1] * 1000;
    /* The entries read that are in the window at the decision time (a newest-first prefix). */
    int64_t c = 0;
    while ((size_t)c < in_window && (rl_i128)newest_first[c] > oldest_out) c++;
    rl_slog_view view = {c, newest, array_nth, (void *)newest_first};
    rl_slog_decide_view(req, &view, plan, reply);
}

void rl_slog_decide_view(const rl_request *req, const rl_slog_view *view, rl_slog_plan *plan, rl_reply *reply) {
    int64_t limit = req->params[0];
    int64_t window_us = req->params[1] * 1000;
    int64_t gap_us = req->mingap_ms * 1000;
    int64_t cost = req->cost;
    int64_t now = req->now_us;
    int64_t cap = rl_slog_read_max(req); /* limit + 1 */
    int64_t t = rl_slog_time(req, view->newest_us);
    int64_t c = view->in_window < cap ? view->in_window : cap;

    int over = cost > limit;
    int allowed = !over && (rl_i128)c + cost <= limit;
    if (allowed && gap_us > 0 && c > 0 && (rl_i128)t - view->newest_us < gap_us) allowed = 0;

    /* Keep the newest limit + 1 of (cost entries at t) + (entries read): the new ones are the newest. A
     * blocked attempt is logged too, unless the caller logs nothing for it (RL_F_NOLOG). */
    int64_t add = cost < cap ? cost : cap;
    if (!allowed && (req->flags & RL_F_NOLOG)) add = 0;
    int64_t keep = c < cap - add ? c : cap - add;
    plan->add = add;
    plan->keep = keep;
    plan->at_us = t;

    slog_after after = {view, add, keep + add, t};

    reply->allowed = allowed;
    reply->limit = limit;
    reply->wait_ms = 0;
    reply->granted = allowed ? cost : 0;
    reply->remaining = after.size < limit ? limit - after.size : 0;

    /* Every entry kept is in the window at t, so the log empties when the newest leaves it. */
    rl_i128 idle_us = 0;
    if (after.size > 0) idle_us = (rl_i128)slog_entry(&after, 0) + window_us - now;

    rl_i128 retry_us = -1;
    if (!allowed && !over) {
        rl_i128 at = t;
        int64_t k = limit - cost; /* 0 <= k <= limit < cap: the (L-n+1)-th newest must leave */
        if (k < after.size) {
            rl_i128 leave = (rl_i128)slog_entry(&after, k) + window_us;
            if (leave > at) at = leave;
        }
        if (gap_us > 0 && after.size > 0) {
            rl_i128 gap_over = (rl_i128)slog_entry(&after, 0) + (gap_us < window_us ? gap_us : window_us);
            if (gap_over > at) at = gap_over;
        }
        retry_us = at - now;
    }
    rl_reply_times(reply, retry_us, idle_us);
}
