/* store_log.c -- the steps of RL.SLIDINGLOG: its state is a plain Redis sorted set, scores = attempt times
 * in Unix µs.
 *
 * The key stays an ordinary sorted set (ZRANGE key 0 -1 WITHSCORES shows the log; DEL clears it). prepare
 * reads only what the decision (algorithms/slidinglog.c) needs: the newest entry and those at the decision
 * time, the count of entries that left the window, and more of the newest only when the decision asks
 * (which it does only when it blocks). commit writes straight to the open key and replicates (and
 * AOF-logs) the same effect as ordinary sorted-set commands, which Redis wraps in MULTI/EXEC: the exact
 * rank range removed, the exact members added with their scores, the absolute expiry. A replica's set is
 * then member-for-member the primary's, whatever its clock.
 *
 * Members are "<t_us>-<seq>": two attempts in the same µs get distinct members (seq continues after the
 * highest seq already at that score), so none is lost. Scores are doubles: exact to the µs up to 2^53 µs
 * (the year 2255). */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "compat.h"
#include "rl_module.h"

/* A score as whole µs, clamped into the module's time range (a user's ZADD may hold anything). Rounded
 * up: decisions happen at whole µs, and an entry at s leaves the window at the first whole instant
 * t >= s + W, which is ceil(s) + W; so rounding up decides exactly as the fractional score would. */
static int64_t score_us(double score) {
    const double bound = (double)RL_MAX_TIME_US * 2;
    if (!(score > -bound)) return (int64_t)-bound; /* also NaN */
    if (score > bound) return (int64_t)bound;
    int64_t whole = (int64_t)score;
    return (double)whole < score ? whole + 1 : whole;
}

/* --- reading the log -------------------------------------------------------------------------------- */

/* What a reader is given: the pending call, the key it reads, and the decision time once known. */
typedef struct log_reader {
    RedisModuleCtx *ctx;
    rl_pending *p;
    int64_t at_us;
    char at_prefix[32]; /* "<at_us>-": the member names at the decision time */
    size_t prefix_len;
    int64_t want;       /* read_more: entries to hold */
} log_reader;

static void hold_score(rl_log_pending *log, int64_t score) {
    if (log->count == log->capacity) {
        size_t grown = log->capacity * 2;
        int64_t *bigger = RedisModule_Alloc(grown * sizeof *bigger);
        memcpy(bigger, log->scores, log->count * sizeof *bigger);
        if (log->scores != log->local) RedisModule_Free(log->scores);
        log->scores = bigger;
        log->capacity = grown;
    }
    log->scores[log->count++] = score;
}

/* Sequence numbers the module writes stay far below this; a longer one is someone else's member. */
#define SEQ_MAX_DIGITS 15

/* If member is "<at_us>-<seq>", keep next_seq above seq. */
static void note_member(log_reader *r, RedisModuleString *member) {
    size_t len;
    const char *s = RedisModule_StringPtrLen(member, &len);
    if (len <= r->prefix_len || len > r->prefix_len + SEQ_MAX_DIGITS || memcmp(s, r->at_prefix, r->prefix_len) != 0)
        return;
    int64_t seq = 0;
    for (size_t i = r->prefix_len; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return;
        seq = seq * 10 + (s[i] - '0');
    }
    if (seq >= r->p->u.log.next_seq) r->p->u.log.next_seq = seq + 1;
}

/* Hand the entries to visit from the newest down, until it returns 0. The held scores start over. */
static void walk_down(log_reader *r, int (*visit)(log_reader *r, int64_t us, RedisModuleString *member)) {
    RedisModuleKey *key = r->p->key;
    r->p->u.log.count = 0;
    if (RedisModule_ZsetLastInScoreRange(key, REDISMODULE_NEGATIVE_INFINITE, REDISMODULE_POSITIVE_INFINITE, 0, 0) !=
        REDISMODULE_OK)
        return;
    while (!RedisModule_ZsetRangeEndReached(key)) {
        double score;
        RedisModuleString *member = RedisModule_ZsetRangeCurrentElement(key, &score);
        int more = visit(r, score_us(score), member);
        RedisModule_FreeString(r->ctx, member);
        if (!more || !RedisModule_ZsetRangePrev(key)) break;
    }
    RedisModule_ZsetRangeStop(key);
}

/* The newest entry sets the decision time; every entry at that time is held, its sequence noted. */
static int visit_head(log_reader *r, int64_t us, RedisModuleString *member) {
    rl_log_pending *log = &r->p->u.log;
    if (log->count == 0) {
        r->at_us = rl_slog_time(r->p->req, us);
        r->prefix_len = (size_t)snprintf(r->at_prefix, sizeof r->at_prefix, "%lld-", (long long)r->at_us);
    } else if (us != r->at_us) {
        return 0;
    }
    if (us == r->at_us) note_member(r, member);
    hold_score(log, us);
    return 1;
}

static int visit_more(log_reader *r, int64_t us, RedisModuleString *member) {
    (void)member;
    rl_log_pending *log = &r->p->u.log;
    if ((int64_t)log->count >= r->want) return 0;
    hold_score(log, us);
    return 1;
}

/* How many entries have left the window at the decision time (score <= at - W): counted from the
 * bottom, where they are; few, as every call trims them. */
static int64_t count_out(RedisModuleKey *key, RedisModuleCtx *ctx, int64_t at_us, int64_t window_us) {
    int64_t out = 0;
    double edge = (double)(at_us - window_us);
    if (RedisModule_ZsetFirstInScoreRange(key, REDISMODULE_NEGATIVE_INFINITE, edge, 0, 0) != REDISMODULE_OK) return 0;
    while (!RedisModule_ZsetRangeEndReached(key)) {
        RedisModuleString *member = RedisModule_ZsetRangeCurrentElement(key, NULL);
        RedisModule_FreeString(ctx, member);
        out++;
        if (!RedisModule_ZsetRangeNext(key)) break;
    }
    RedisModule_ZsetRangeStop(key);
    return out;
}

/* The view's accessor: the i-th newest entry, reading further from the top if it is not held yet. */
static int64_t log_nth(void *arg, int64_t i) {
    log_reader *r = arg;
    rl_log_pending *log = &r->p->u.log;
    if ((int64_t)log->count <= i) {
        r->want = i + 1;
        walk_down(r, visit_more);
    }
    return (int64_t)log->count > i ? log->scores[i] : 0;
}

/* --- the steps ------------------------------------------------------------------------------------- */

static const char *log_prepare(RedisModuleCtx *ctx, rl_pending *p, char err[RL_ERR_LEN]) {
    (void)err;
    int dryrun = (p->req->flags & RL_F_DRYRUN) != 0;
    p->key = RedisModule_OpenKey(ctx, p->keyname, dryrun ? rl_compat_read_mode() : REDISMODULE_READ | REDISMODULE_WRITE);
    rl_log_pending *log = &p->u.log;
    log->scores = log->local;
    log->capacity = RL_LOG_LOCAL_SCORES;
    int type = RedisModule_KeyType(p->key);
    if (type != REDISMODULE_KEYTYPE_EMPTY && type != REDISMODULE_KEYTYPE_ZSET) return REDISMODULE_ERRORMSG_WRONGTYPE;

    log_reader r = {.ctx = ctx, .p = p, .at_us = p->req->now_us};
    rl_slog_view view = {0, INT64_MIN, log_nth, &r};
    if (type == REDISMODULE_KEYTYPE_ZSET) {
        log->card = (long long)RedisModule_ValueLength(p->key);
        walk_down(&r, visit_head);
        view.newest_us = log->count > 0 ? log->scores[0] : INT64_MIN;
        view.in_window = log->card - count_out(p->key, ctx, r.at_us, p->req->params[1] * 1000);
    }
    rl_slog_decide_view(p->req, &view, &log->plan, &p->reply);
    /* A call that logs nothing, trims nothing and leaves the expiry where it was changes nothing. */
    if (p->reply.reset_after_ms > 0) log->expire_at_ms = rl_clock_expire_at_ms(p->req->now_us, p->reply.reset_after_us);
    p->creates = log->card == 0 && log->plan.add > 0;
    p->changes = log->card > log->plan.keep || log->plan.add > 0 ||
                 (p->reply.reset_after_ms > 0 && RedisModule_GetAbsExpire(p->key) != log->expire_at_ms);
    return NULL;
}

/* The members to add: "<at>-<seq>" for seq from next_seq on, skipping any name the set already holds (at
 * any score: a user's ZADD may have used one), so every attempt is its own entry. */
static RedisModuleString **new_members(RedisModuleCtx *ctx, RedisModuleKey *key, const rl_log_pending *log) {
    RedisModuleString **members = RedisModule_Alloc((size_t)log->plan.add * sizeof *members);
    int64_t seq = log->next_seq;
    for (int64_t i = 0; i < log->plan.add; seq++) {
        RedisModuleString *m = RedisModule_CreateStringPrintf(ctx, "%lld-%lld", (long long)log->plan.at_us, (long long)seq);
        double taken;
        if (RedisModule_ZsetScore(key, m, &taken) == REDISMODULE_OK) {
            RedisModule_FreeString(ctx, m);
            continue;
        }
        members[i++] = m;
    }
    return members;
}

/* Remove the `drop` lowest-ranked entries (lowest score first, then member, as ZREMRANGEBYRANK does). */
static void trim_lowest(RedisModuleCtx *ctx, RedisModuleKey *key, long long drop) {
    RedisModuleString **gone = RedisModule_Alloc((size_t)drop * sizeof *gone);
    long long n = 0;
    if (RedisModule_ZsetFirstInScoreRange(key, REDISMODULE_NEGATIVE_INFINITE, REDISMODULE_POSITIVE_INFINITE, 0, 0) ==
        REDISMODULE_OK) {
        while (n < drop && !RedisModule_ZsetRangeEndReached(key)) {
            gone[n++] = RedisModule_ZsetRangeCurrentElement(key, NULL);
            if (!RedisModule_ZsetRangeNext(key)) break;
        }
        RedisModule_ZsetRangeStop(key);
    }
    for (long long i = 0; i < n; i++) {
        RedisModule_ZsetRem(key, gone[i], NULL);
        RedisModule_FreeString(ctx, gone[i]);
    }
    RedisModule_Free(gone);
}

/* Add the plan's members at its time, and replicate them as one ZADD. */
static void add_members(RedisModuleCtx *ctx, rl_pending *p) {
    const rl_log_pending *log = &p->u.log;
    RedisModuleString **members = new_members(ctx, p->key, log);
    size_t nargs = 2 * (size_t)log->plan.add;
    RedisModuleString **args = RedisModule_Alloc(nargs * sizeof *args);
    RedisModuleString *score = RedisModule_CreateStringFromLongLong(ctx, log->plan.at_us);
    for (int64_t i = 0; i < log->plan.add; i++) {
        RedisModule_ZsetAdd(p->key, (double)log->plan.at_us, members[i], NULL);
        args[2 * i] = score;
        args[2 * i + 1] = members[i];
    }
    RedisModule_Replicate(ctx, "ZADD", "sv", p->keyname, args, nargs);
    RedisModule_FreeString(ctx, score);
    for (int64_t i = 0; i < log->plan.add; i++) RedisModule_FreeString(ctx, members[i]);
    RedisModule_Free(members);
    RedisModule_Free(args);
}

/* Keep the newest plan.keep entries, add plan.add at plan.at_us, set the expiry. Everything not kept is
 * the lowest card - keep ranks: the entries read past `keep`, those never read, those out of the window. */
static void log_commit(RedisModuleCtx *ctx, rl_pending *p) {
    const rl_log_pending *log = &p->u.log;
    long long drop = log->card - log->plan.keep;
    if (drop > 0) {
        trim_lowest(ctx, p->key, drop);
        RedisModule_Replicate(ctx, "ZREMRANGEBYRANK", "sll", p->keyname, 0LL, drop - 1);
    }
    if (log->plan.add > 0) add_members(ctx, p);
    if (p->reply.reset_after_ms > 0) {
        RedisModule_SetAbsExpire(p->key, log->expire_at_ms);
        RedisModule_Replicate(ctx, "PEXPIREAT", "sl", p->keyname, (long long)log->expire_at_ms);
    } else if (RedisModule_KeyType(p->key) == REDISMODULE_KEYTYPE_ZSET && RedisModule_ValueLength(p->key) == 0) {
        RedisModule_DeleteKey(p->key); /* an empty log is no key, as Redis does for an emptied sorted set */
    }
}

static void log_release(RedisModuleCtx *ctx, rl_pending *p) {
    (void)ctx;
    if (p->u.log.scores && p->u.log.scores != p->u.log.local) RedisModule_Free(p->u.log.scores);
    if (p->key) RedisModule_CloseKey(p->key);
}

/* Not `fast`: one call removes every entry that has left the window, however many (amortised O(1) per
 * logged call, but a single call may remove up to limit + 1 entries). */
const rl_steps rl_log_steps = {"write deny-oom", "readonly", log_prepare, log_commit, log_release};
