/* store_log.c -- the steps of RL.SLIDINGLOG (rl_log_steps), and the idea of its storage: a plain Redis
 * sorted set, scores = attempt times in Unix µs, one member per attempt that carries its cost (its weight)
 * in its name.
 *
 * The key stays an ordinary sorted set (ZRANGE key 0 -1 WITHSCORES shows the log; DEL clears it). The
 * module writes members named
 *
 *     <time_us>-<seq>:<weight>:<x>:<floor>
 *
 * weight = the units (cost) the member stands for, >= 1; x = the running total of (weight - 1) over the
 * module's members from the oldest up to this one, modulo 10^12; floor = the running total just below the
 * oldest of them (meaningful in the newest member). Any other member (the user's own ZADD, or the
 * "<time_us>-<seq>" members of earlier versions, one per unit) weighs 1. There is at most one module
 * member per score: a call at the time of an existing one rewrites it with the sum.
 *
 * Why the totals. A call must count the units in its window, and, when it blocks, find the time of the
 * k-th newest unit. Summing weights member by member would cost one step per member in the window (up to
 * limit + 1 of them). With x, the units of the members ranked 0..r from the top are
 *     (r + 1) + E(r),  E(r) = x_newest - x_m + (weight_m - 1)   for a module member m at rank r,
 * so the count is the number of members in the window plus E at its oldest one, and the k-th unit is a
 * binary search over ranks (ZRANGE by rank is O(log N)). floor, kept in the newest member, gives the
 * total E of the whole set, so members that left the window can be counted off from the bottom without
 * walking the window. A member of another format, met by a search, is resolved by looking at the
 * nearest module member above it.
 *
 * The invariant of the totals, which every write keeps (store_log_write.c: how). Let m_1 (oldest) .. m_k
 * (newest) be the module's members in score order; then, modulo 10^12,
 *     x(m_j) = x(m_(j-1)) + weight(m_j) - 1   for 1 < j <= k,    floor(m_k) = x(m_1) - (weight(m_1) - 1):
 * each x follows the one below it by its own weight - 1, and the newest member's floor is the total just
 * below the oldest (the floors of the other members are left as they were written, and never read). Then
 * E(r) above and x_newest - floor_newest (the total of the set) are exact.
 *
 * The steps, each in its file:
 *   prepare (store_log_read.c) reads what the decision (algorithms/slidinglog.c) asks for, decides and
 *     writes nothing;
 *   commit (store_log_write.c) works out which members the plan removes, cuts, merges and rewrites, and
 *     applies them as one batch (store_log_edit.c) that it replicates (and AOF-logs) as ordinary
 *     sorted-set commands: ZREMRANGEBYRANK, ZREM, ZADD, PEXPIREAT;
 *   release (here) frees what prepare held and closes the key.
 * Member names are read and written by one codec (store_log_name.c).
 *
 * Cost of one call: O(log N) sorted-set operations (N = members), plus the members that left the window
 * or fell out of the newest limit + 1 units, which the call removes (each member is removed once, so this
 * is amortised O(1) per logged call, though one call may remove many), plus members of another format
 * where a read lands on them: above the newest module member, and between a searched rank and the
 * module member above it. A blocked call does a binary search of at most log2(N) ZRANGE reads. A refund
 * visits the members it removes, each once, as the trim does.
 *
 * Scores are doubles: exact to the µs up to 2^53 µs (the year 2255). A score above now counts as now
 * (slidinglog.c), and commit moves such members to now. */
#include "store_log_parts.h"

static void log_release(RedisModuleCtx *ctx, rl_pending *p) {
    if (p->u.log.newest.name) RedisModule_FreeString(ctx, p->u.log.newest.name);
    if (p->u.log.lock_name) RedisModule_FreeString(ctx, p->u.log.lock_name);
    if (p->key) RedisModule_CloseKey(p->key);
}

/* Not `fast`: one call removes every entry that has left the window, however many (amortised O(1) per
 * logged call, but a single call may remove up to limit + 1 entries). */
const rl_steps rl_log_steps = {"write", "readonly", rl_log_prepare, rl_log_commit, log_release,
                               rl_lock_start, NULL};
