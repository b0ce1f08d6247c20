/* store_log_parts.h -- what the sliding log's files offer each other (not used outside them).
 *
 *   store_log.c        the steps (rl_log_steps), and the idea: member names, running totals, cost
 *   store_log_name.c   the member-name codec: a name and score to an rl_log_member, and back
 *   store_log_read.c   prepare: the view over the set that the decision reads, and walking the set
 *   store_log_write.c  commit: which members the plan removes, cuts, merges and rewrites
 *   store_log_edit.c   one commit's edits, applied as one batch and replicated as sorted-set commands
 *
 * The running totals (rl_log_member's extra_upto and extra_below) are sums modulo RL_LOG_TOTAL_MOD; the
 * helpers below read the differences a call needs off the newest module member (store_log.c: why). */
#ifndef RL_STORE_LOG_PARTS_H
#define RL_STORE_LOG_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "rl_module.h"

#define RL_LOG_TOTAL_MOD 1000000000000LL /* the totals wrap here; true differences stay below 10^6 */
#define RL_LOG_WEIGHT_MAX RL_MAX_COUNT   /* the largest weight a name may carry (the module's stay near the
                                            limit) */

static inline int64_t rl_log_mod_total(int64_t v) {
    v %= RL_LOG_TOTAL_MOD;
    return v < 0 ? v + RL_LOG_TOTAL_MOD : v;
}

/* Total (weight - 1) of the module's members in the set, read off the newest of them (ours = 0: none). */
static inline int64_t rl_log_extra_all(const rl_log_member *newest_ours) {
    return newest_ours->ours ? rl_log_mod_total(newest_ours->extra_upto - newest_ours->extra_below) : 0;
}

/* E of a module member m: the total (weight - 1) of the module's members from m up to the newest. */
static inline int64_t rl_log_extra_through(const rl_log_member *newest_ours, const rl_log_member *m) {
    return rl_log_mod_total(newest_ours->extra_upto - m->extra_upto) + m->weight - 1;
}

/* --- store_log_name.c: the member-name codec --------------------------------------------------------- */

/* A score as whole µs, clamped into the module's time range. */
int64_t rl_log_score_us(double score);
/* Fill m's weight and format fields from a member name (weight 1 and ours 0 for another format); leaves
 * its name and time alone. */
void rl_log_parse_name(const char *s, size_t len, rl_log_member *m);
/* m from a member of the set: its name parsed, its score as time_us; m->name is left NULL. */
void rl_log_parse(RedisModuleString *name, double score, rl_log_member *m);
/* The module's name of m ("<time_us>-<seq>:<weight>:<x>:<floor>"), written into buf; returns its length. */
#define RL_LOG_NAME_MAX (5 * 21) /* five numbers of at most 20 characters, four separators */
size_t rl_log_format_name(char buf[RL_LOG_NAME_MAX], const rl_log_member *m);

/* A key's lock record as a member of the log (score -inf, "rl-lock:..."): 1 and *rec (when not NULL) if
 * name and score are one; and the member's name for rec. */
int rl_log_lock_parse(RedisModuleString *name, double score, rl_lock_rec *rec);
RedisModuleString *rl_log_lock_name(RedisModuleCtx *ctx, const rl_lock_rec *rec);
/* The log's lock and the key's expiry after it: write (or remove) the lock member of the open set, its
 * record rec (alive) or none; the log's other members are not touched (store_log_write.c). */
void rl_log_lock_write(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname,
                       RedisModuleString *old_name, const rl_lock_rec *rec, int alive);

/* --- store_log_read.c: prepare, and walking the set --------------------------------------------------- */

/* Visit members in score order (from_top: newest first; else oldest first) within [min, max] (min
 * excluded when minex), until visit returns 0. The name handed to visit is freed after it unless visit
 * took it (set *take). */
typedef int (*rl_log_visit_fn)(void *arg, RedisModuleString *name, double score, int *take);
void rl_log_walk(RedisModuleKey *key, RedisModuleCtx *ctx, int from_top, double min, double max, int minex,
                 rl_log_visit_fn visit, void *arg);
#define RL_LOG_NEG_INF REDISMODULE_NEGATIVE_INFINITE
#define RL_LOG_POS_INF REDISMODULE_POSITIVE_INFINITE

const char *rl_log_prepare(RedisModuleCtx *ctx, rl_pending *p, char err[RL_ERR_LEN]);

/* --- store_log_write.c -------------------------------------------------------------------------------- */

void rl_log_commit(RedisModuleCtx *ctx, rl_pending *p);

/* --- store_log_edit.c: a commit's edits as one batch ------------------------------------------------- */

/* The writes of one commit, applied in this order and replicated as the same commands: ZREMRANGEBYRANK of
 * the lowest ranks, ZREM of members rewritten or merged, ZADD of members added or moved to now. Up to
 * RL_LOG_EDIT_INLINE removals and additions without an allocation. */
#define RL_LOG_EDIT_INLINE 8
typedef struct rl_log_edit {
    const rl_log_member *lowest; /* the lowest members of the set, removed by rank (names borrowed) */
    size_t nlowest;
    RedisModuleString **removed; /* members removed by name (borrowed) */
    size_t nremoved;
    /* Members to add: ours, a module member to be named when added (from its seq up; the name made is the
     * edit's); else an existing member moved to time_us (name borrowed). */
    rl_log_member *added;
    size_t nadded;
    int lowest_by_name; /* replicate the lowest members' removal by name: the set holds a lock member below
                           them (score -inf), so their ranks are not 0 .. nlowest - 1 */
    RedisModuleString *removed_inline[RL_LOG_EDIT_INLINE];
    rl_log_member added_inline[RL_LOG_EDIT_INLINE];
} rl_log_edit;

/* An empty edit with room for max removals by name and max additions. */
static inline void rl_log_edit_init(rl_log_edit *ed, const rl_log_member *lowest, size_t nlowest, size_t max) {
    ed->lowest = lowest;
    ed->nlowest = nlowest;
    ed->nremoved = ed->nadded = 0;
    ed->lowest_by_name = 0;
    int inline_fits = max <= RL_LOG_EDIT_INLINE;
    ed->removed = inline_fits ? ed->removed_inline : RedisModule_Alloc(max * sizeof *ed->removed);
    ed->added = inline_fits ? ed->added_inline : RedisModule_Alloc(max * sizeof *ed->added);
}

static inline void rl_log_edit_remove(rl_log_edit *ed, RedisModuleString *name) {
    ed->removed[ed->nremoved++] = name;
}

/* A module member to add at time_us, named when added from seq up. */
static inline void rl_log_edit_add_ours(rl_log_edit *ed, int64_t time_us, int64_t seq, int64_t weight,
                                        int64_t extra_upto, int64_t extra_below) {
    ed->added[ed->nadded++] = (rl_log_member){.time_us = time_us, .weight = weight, .ours = 1, .seq = seq,
                                              .extra_upto = extra_upto, .extra_below = extra_below};
}

/* An existing member of another format moved to time_us (name borrowed). */
static inline void rl_log_edit_move(rl_log_edit *ed, RedisModuleString *name, int64_t time_us) {
    ed->added[ed->nadded++] = (rl_log_member){.name = name, .time_us = time_us, .weight = 1};
}

/* Apply the edit to p's open key, replicate it, and free what it made or allocated. */
void rl_log_edit_apply(RedisModuleCtx *ctx, rl_pending *p, rl_log_edit *ed);

#endif
