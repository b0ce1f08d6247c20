/* slidinglog.h -- sliding log (RL.SLIDINGLOG key limit window_ms [MINGAP ms] [COST n] [DRYRUN]): the decision.
 *
 * The log lives in a Redis sorted set whose scores are attempt times in Unix microseconds; the module
 * (module/store_log.c) does the sorted-set I/O and this file only decides. Request: params[0] = limit
 * (1..RL_SLOG_MAX_LIMIT), params[1] = window_ms (1..RL_MAX_PERIOD_MS), cost, mingap_ms (0 = none), now_us.
 *
 * The decision never sees the whole log. It gets a view (rl_slog_view): how many entries are in the window
 * at the decision time, the newest entry's time, and an accessor for the i-th newest entry, which it calls
 * only when it blocks, for at most two entries. It answers with the reply and a plan (rl_slog_plan): keep
 * the newest plan.keep entries, remove every other one, add plan.add entries at plan.at_us. The stored log
 * then holds at most limit + 1 entries; slidinglog.c says why the newest limit + 1 are all that can ever
 * matter. */
#ifndef RL_SLIDINGLOG_H
#define RL_SLIDINGLOG_H

#include <stddef.h>
#include <stdint.h>

#include "rl_common.h"

/* The log stores one sorted-set entry per unit of cost, up to limit + 1 of them, so its limit (and cost)
 * is capped well below RL_MAX_COUNT: 10^5 entries is a few MB for one key, and the most one call writes. */
#define RL_SLOG_MAX_LIMIT 100000LL

/* RL.SLIDINGLOG's own option: MINGAP was given (req->mingap_ms holds the value). */
#define RL_F_MINGAP RL_F_ALG(0)
/* Not an option: RL.ALL's denied requests are not logged (nothing is written when any limit denies), so
 * their reply describes the log without the attempt. */
#define RL_F_NOLOG RL_F_ALG(1)

/* What to write back. keep + add <= limit + 1, add <= cost (0 for COST 0), keep <= in_window. */
typedef struct rl_slog_plan {
    int64_t at_us; /* when the new entries are logged: now_us, or the newest entry's time if the clock is
                      behind it (the log's clock never runs back) */
    int64_t add;  /* entries to add at at_us: min(cost, limit + 1) */
    int64_t keep; /* how many of the entries read (newest first) to keep; every older entry and
                     every entry with score <= now_us - W is removed */
} rl_slog_plan;

/* The log as a decision sees it, without copying it: how many entries are in the window at the decision
 * time (rl_slog_time; at most limit + 1 are looked at), the newest entry's time (INT64_MIN when the log
 * is empty), and the i-th newest entry on demand (0 <= i < in_window). A decision asks for at most two
 * entries, and only when it blocks; so the module need not read the whole window. */
typedef struct rl_slog_view {
    int64_t in_window;
    int64_t newest_us;
    int64_t (*nth)(void *ctx, int64_t i);
    void *ctx;
} rl_slog_view;

/* The decision time: now, or the newest entry's time when the clock is behind it (the log's clock never
 * runs back). The module reads the entries at this time to name new members after them. */
int64_t rl_slog_time(const rl_request *req, int64_t newest_us);

/* Decide req against a view of the log; the same as rl_slog_decide. */
void rl_slog_decide_view(const rl_request *req, const rl_slog_view *view, rl_slog_plan *plan, rl_reply *reply);

/* The most entries a decision looks at: limit + 1 (saturating); what rl_slog_decide needs at most. */
int64_t rl_slog_read_max(const rl_request *req);

/* Decide req over a log held in an array (the accuracy script, the micro-benchmark, the tests):
 * newest_first[0..in_window) sorted newest first, at most rl_slog_read_max(req) of them (trailing entries
 * with score <= the decision time - W are tolerated and ignored). O(in_window) time, no allocation. Fills *plan and *reply (allowed, limit,
 * remaining, retry_after_ms, reset_after_ms, wait_ms = 0, reset_after_us). */
void rl_slog_decide(const rl_request *req, const int64_t *newest_first, size_t in_window, rl_slog_plan *plan,
                    rl_reply *reply);

#endif
