/* slidinglog.h -- sliding log (RL.SLIDINGLOG key limit window_ms [MINGAP ms] [COST n] [DRYRUN]).
 *
 * The log lives in a Redis sorted set whose scores are attempt times in Unix microseconds; the module
 * does the sorted-set I/O and this file only decides. Request: params[0] = limit (1..RL_SLOG_MAX_LIMIT),
 * params[1] = window_ms (1..RL_MAX_PERIOD_MS), cost (0..RL_MAX_COUNT), mingap_ms (0 = none, up to
 * RL_MAX_PERIOD_MS), now_us.
 *
 * One call, as the module runs it:
 *   1. read = rl_slog_read_max(req) (= limit + 1);
 *   2. read the newest `read` scores with score > now_us - W (W = window_ms * 1000), newest first
 *      (ZREVRANGEBYSCORE key +inf (now_us-W LIMIT 0 read). Entries in the future (clock went back)
 *      are included: the newest sets the decision time;
 *   3. rl_slog_decide(req, scores, count, &plan, &reply);
 *   4. unless DRYRUN: remove every entry with score <= now_us - W and every entry older than the first
 *      plan.keep of the scores read (that is, keep exactly the newest plan.keep entries), then add
 *      plan.add entries with score plan.at_us (distinct members). If the log is then empty
 *      (reply.reset_after_ms == 0) delete the key, else expire it after reply.reset_after_us.
 * The stored log then holds plan.keep + plan.add <= limit + 1 entries; see slidinglog.c for why the
 * newest limit + 1 are all that can ever matter. */
#ifndef RL_SLIDINGLOG_H
#define RL_SLIDINGLOG_H

#include <stddef.h>
#include <stdint.h>

#include "rl_common.h"

/* The log stores one sorted-set entry per unit of cost, up to limit + 1 of them, so its limit (and cost)
 * is capped well below RL_MAX_COUNT: 10^5 entries is a few MB for one key, and the most one call writes. */
#define RL_SLOG_MAX_LIMIT 100000LL

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
 * runs back). */
int64_t rl_slog_time(const rl_request *req, int64_t newest_us);

/* Decide req against a view of the log; the same as rl_slog_decide. */
void rl_slog_decide_view(const rl_request *req, const rl_slog_view *view, rl_slog_plan *plan, rl_reply *reply);

/* How many entries the module must read: limit + 1 (saturating). */
int64_t rl_slog_read_max(const rl_request *req);

/* Decide req. newest_first[0..in_window) are the scores read in step 2: sorted newest first, all with
 * score > now_us - W, at most rl_slog_read_max(req) of them (trailing entries with score <= now_us - W
 * are tolerated and ignored). O(in_window) time, no allocation. Fills *plan and *reply (allowed, limit,
 * remaining, retry_after_ms, reset_after_ms, wait_ms = 0, reset_after_us). */
void rl_slog_decide(const rl_request *req, const int64_t *newest_first, size_t in_window, rl_slog_plan *plan,
                    rl_reply *reply);

#endif
