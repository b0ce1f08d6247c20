/* slidinglog.h -- sliding log (RL.SLIDINGLOG key limit window_ms [MINGAP ms] [COST n | REFUND n] [FORCE]
 * [DRYRUN]): the decision.
 *
 * The log lives in a Redis sorted set whose scores are attempt times in Unix microseconds; the module
 * (module/store_log.c) does the sorted-set I/O and this file only decides. Request: params[0] = limit
 * (1..RL_SLOG_MAX_LIMIT), params[1] = window_ms (1..RL_MAX_PERIOD_MS), cost, mingap_ms (0 = none), now_us.
 *
 * The decision counts units, not sorted-set members: one member may stand for several units logged at the
 * same time (its weight), so an attempt of cost n is one member, not n. The rule and every reply are those
 * of a log holding one entry per unit, which is how slidinglog.c states and proves them.
 *
 * The decision never sees the whole log. It gets a view (rl_slog_view): how many units are in the window,
 * the newest entry's time, and an accessor for the time of the i-th newest unit, which it calls only when
 * it blocks or logs nothing (or, for a refund, for the newest unit it leaves), for at most two units. It
 * answers with the reply and a plan (rl_slog_plan): remove the newest plan.drop units (a refund), keep the
 * newest plan.keep units of the rest, remove every older one, add plan.add units at plan.at_us. The stored
 * log then holds at most limit + 1 units; slidinglog.c says why the newest limit + 1 are all that can ever
 * matter, and what that means for a refund. */
#ifndef RL_SLIDINGLOG_H
#define RL_SLIDINGLOG_H

#include <stddef.h>
#include <stdint.h>

#include "rl_common.h"

/* The largest limit and cost. An attempt is one sorted-set member whatever its cost, but a log of
 * attempts of cost 1 keeps up to limit + 1 members: 10^5 of them is a few MB for one key. */
#define RL_SLOG_MAX_LIMIT 100000LL

/* RL.SLIDINGLOG's own option: MINGAP was given (req->mingap_ms holds the value). The common REFUND n
 * (RL_F_REFUND, n in req->cost) removes up to n units from the newest end of the log: see slidinglog.c. */
#define RL_F_MINGAP RL_F_ALG(0)

/* What to write back, on the log newest first (scores above now counting as now): its newest `drop`
 * units go, the next `keep` stay, every older one goes; then `add` units are logged at at_us.
 * keep + add <= limit + 1, drop + keep <= the units in the window, drop > 0 only when add == 0. Units of
 * one score are interchangeable, so which of the units at now (scores above now included) a drop takes
 * is the storage's choice. */
typedef struct rl_slog_plan {
    int64_t at_us; /* when the new units are logged: now_us */
    int64_t add;   /* units to log at at_us: the cost, or 0 when the cost is above the limit (such an
                      attempt can never be admitted, so it is not logged), and 0 for a refund; with FORCE
                      the cost, at most limit + 1 (the rest would be cut at once: slidinglog.c) */
    int64_t keep;  /* how many units of the log to keep, after the dropped ones; every older unit, and
                      every unit with score <= now_us - W, is removed */
    int64_t drop;  /* REFUND n: the newest min(n, units in the window, at most limit + 1) units are
                      removed; 0 for every other call */
} rl_slog_plan;

/* The log as a decision sees it, without copying it: how many units have a score > now - W (scores
 * above now count as now; at most limit + 1 are looked at, so a view may report any number >= that
 * minimum), the newest entry's score (INT64_MIN when the log is empty), and the score of the i-th newest
 * unit on demand (0 <= i < in_window; units of one member share its score). The decision itself treats a
 * score above now as now. */
typedef struct rl_slog_view {
    int64_t in_window;
    int64_t newest_us;
    int64_t (*nth)(void *ctx, int64_t i);
    void *ctx;
} rl_slog_view;

/* Decide req against a view of the log; the same as rl_slog_decide. */
void rl_slog_decide_view(const rl_request *req, const rl_slog_view *view, rl_slog_plan *plan, rl_reply *reply);

/* The most units that can matter to a decision: limit + 1 (saturating). */
int64_t rl_slog_read_max(const rl_request *req);

/* One entry of a log held in an array: `weight` (>= 1) units logged at `at_us`. */
typedef struct rl_slog_entry {
    int64_t at_us;
    int64_t weight;
} rl_slog_entry;

/* Decide req over a log held in an array (the accuracy script, the micro-benchmark, the tests):
 * newest_first[0..n) sorted newest first (equal scores in any order). Entries with score <= now - W are
 * ignored, as are units beyond the newest rl_slog_read_max(req) in the window. O(entries looked at) time,
 * no allocation. Fills *plan and *reply (allowed, limit, remaining, retry_after_ms, reset_after_ms,
 * wait_ms = 0, reset_after_us). */
void rl_slog_decide(const rl_request *req, const rl_slog_entry *newest_first, size_t n, rl_slog_plan *plan,
                    rl_reply *reply);

#endif
