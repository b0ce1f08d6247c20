/* slidinglog.c -- RL.SLIDINGLOG's storage: a plain Redis sorted set, scores = attempt times in Unix µs.
 *
 * The key stays an ordinary sorted set (ZRANGE key 0 -1 WITHSCORES shows the log; DEL clears it), so the
 * decision (algorithms/slidinglog.c) reads the newest limit + 1 scores in the window; the writes go
 * straight to the open key and are replicated (and AOF-logged) as ordinary sorted-set commands, wrapped
 * in MULTI/EXEC: the exact rank range removed, the exact members added with their scores, the absolute
 * expiry. A replica's set is then member-for-member the primary's, whatever its clock.
 *
 * Members are "<t_us>-<seq>": two attempts in the same µs get distinct members (seq continues after the
 * highest seq already at that score), so none is lost. Scores are doubles: exact to the µs up to 2^53 µs
 * (the year 2255). */
#include <stdlib.h>
#include <string.h>

#include "../algorithms/slidinglog.h"
#include "clock.h"
#include "rl_module.h"

/* What is read of the log, newest first: the newest entry and every entry at the decision time (to name
 * new members after them), and more only when the decision asks for it (slog_nth), which it does only
 * when it blocks. Small reads fit on the stack; larger ones grow on the heap. */
typedef struct slog_read {
    RedisModuleCtx *ctx;
    RedisModuleKey *key;
    int64_t local[64];
    int64_t *scores;
    size_t count, capacity;
    int64_t next_seq; /* first free seq for members at the decision time */
} slog_read;

static void read_push(slog_read *r, int64_t score) {
    if (r->count == r->capacity) {
        size_t grown = r->capacity * 2;
        int64_t *bigger = RedisModule_Alloc(grown * sizeof *bigger);
        memcpy(bigger, r->scores, r->count * sizeof *bigger);
        if (r->scores != r->local) RedisModule_Free(r->scores);
        r->scores = bigger;
        r->capacity = grown;
    }
    r->scores[r->count++] = score;
}

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

/* Sequence numbers the module writes stay far below this; a longer one is someone else's member. */
#define SEQ_MAX_DIGITS 15

/* If member is "<at_us>-<seq>", keep next_seq above seq. */
static void note_member(slog_read *r, RedisModuleString *member, const char *at_prefix, size_t prefix_len) {
    size_t len;
    const char *s = RedisModule_StringPtrLen(member, &len);
    if (len <= prefix_len || len > prefix_len + SEQ_MAX_DIGITS || memcmp(s, at_prefix, prefix_len) != 0) return;
    int64_t seq = 0;
    for (size_t i = prefix_len; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return;
        seq = seq * 10 + (s[i] - '0');
    }
    if (seq >= r->next_seq) r->next_seq = seq + 1;
}

/* Read from the top of the log until `want` entries are held, or, with want 0, the newest entry and
 * every entry at its decision time (now, or the newest entry's time if the clock is behind it), noting
 * the sequence numbers used there. Returns that decision time. */
static int64_t read_top(slog_read *r, const rl_request *req, int64_t want) {
    int64_t at = req->now_us;
    char at_prefix[32];
    size_t prefix_len = 0;
    r->count = 0;
    if (RedisModule_ZsetLastInScoreRange(r->key, REDISMODULE_NEGATIVE_INFINITE, REDISMODULE_POSITIVE_INFINITE, 0, 0) !=
        REDISMODULE_OK)
        return at;
    while (!RedisModule_ZsetRangeEndReached(r->key)) {
        double score;
        RedisModuleString *member = RedisModule_ZsetRangeCurrentElement(r->key, &score);
        int64_t us = score_us(score);
        if (r->count == 0) {
            at = us > at ? us : at;
            prefix_len = (size_t)snprintf(at_prefix, sizeof at_prefix, "%lld-", (long long)at);
        }
        int wanted = want > 0 ? (int64_t)r->count < want : (r->count == 0 || us == at);
        if (wanted && want == 0 && us == at) note_member(r, member, at_prefix, prefix_len);
        RedisModule_FreeString(r->ctx, member);
        if (!wanted) break;
        read_push(r, us);
        if (!RedisModule_ZsetRangePrev(r->key)) break;
    }
    RedisModule_ZsetRangeStop(r->key);
    return at;
}

/* How many entries have left the window at the decision time `at` (score <= at - W): counted from the
 * bottom, where they are; few, as every call trims them. */
static int64_t count_out(RedisModuleKey *key, RedisModuleCtx *ctx, int64_t at, int64_t window_us) {
    int64_t out = 0;
    double edge = (double)(at - window_us);
    if (RedisModule_ZsetFirstInScoreRange(key, REDISMODULE_NEGATIVE_INFINITE, edge, 0, 0) != REDISMODULE_OK) return 0;
    while (!RedisModule_ZsetRangeEndReached(key)) {
        double score;
        RedisModuleString *member = RedisModule_ZsetRangeCurrentElement(key, &score);
        RedisModule_FreeString(ctx, member);
        out++;
        if (!RedisModule_ZsetRangeNext(key)) break;
    }
    RedisModule_ZsetRangeStop(key);
    return out;
}

/* The view's accessor: the i-th newest entry, reading further from the top if it is not held yet. */
static int64_t slog_nth(void *ctx, int64_t i) {
    slog_read *r = ctx;
    static const rl_request none = {{0}, 0, 0, 0, 0};
    if ((int64_t)r->count <= i) read_top(r, &none, i + 1);
    return (int64_t)r->count > i ? r->scores[i] : 0;
}

/* The members to add: "<at>-<seq>" for seq from r->next_seq on, skipping any name the set already
 * holds (at any score: a user's ZADD may have used one), so every attempt is its own entry. */
static RedisModuleString **new_members(RedisModuleCtx *ctx, RedisModuleKey *key, int64_t at, int64_t seq,
                                       int64_t count) {
    RedisModuleString **members = RedisModule_Alloc((size_t)count * sizeof *members);
    for (int64_t i = 0; i < count; seq++) {
        RedisModuleString *m = RedisModule_CreateStringPrintf(ctx, "%lld-%lld", (long long)at, (long long)seq);
        double taken;
        if (key && RedisModule_ZsetScore(key, m, &taken) == REDISMODULE_OK) {
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

/* Keep the newest plan->keep entries, add plan->add at plan->at_us, set the expiry: on the open key, and
 * replicated as the same effect in ordinary commands (ZREMRANGEBYRANK of the exact rank range, ZADD of
 * the exact members, PEXPIREAT), which Redis wraps in MULTI/EXEC. Everything not kept is the lowest
 * card - keep ranks: the entries read past `keep`, those never read, those out of the window. */
static void write_plan(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, const rl_request *req,
                       long long card, const rl_slog_plan *plan, const rl_reply *reply, RedisModuleString **members) {
    long long drop = card - plan->keep;
    if (drop > 0) {
        trim_lowest(ctx, key, drop);
        RedisModule_Replicate(ctx, "ZREMRANGEBYRANK", "sll", keyname, 0LL, drop - 1);
    }
    if (plan->add > 0) {
        size_t nargs = 2 * (size_t)plan->add;
        RedisModuleString **args = RedisModule_Alloc(nargs * sizeof *args);
        RedisModuleString *score = RedisModule_CreateStringFromLongLong(ctx, plan->at_us);
        for (int64_t i = 0; i < plan->add; i++) {
            RedisModule_ZsetAdd(key, (double)plan->at_us, members[i], NULL);
            args[2 * i] = score;
            args[2 * i + 1] = members[i];
        }
        RedisModule_Replicate(ctx, "ZADD", "sv", keyname, args, nargs);
        RedisModule_FreeString(ctx, score);
        RedisModule_Free(args);
    }
    if (reply->reset_after_ms > 0) {
        long long at = rl_clock_expire_at_ms(req->now_us, reply->reset_after_us);
        RedisModule_SetAbsExpire(key, at);
        RedisModule_Replicate(ctx, "PEXPIREAT", "sl", keyname, at);
    } else if (RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_ZSET && RedisModule_ValueLength(key) == 0) {
        RedisModule_DeleteKey(key); /* an empty log is no key, as Redis does for an emptied sorted set */
    }
}

const char *rl_slog_execute(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_request *req,
                            const void *target, rl_reply *reply) {
    (void)target;
    int dryrun = (req->flags & RL_F_DRYRUN) != 0;
    RedisModuleKey *key = RedisModule_OpenKey(ctx, keyname, REDISMODULE_READ | (dryrun ? 0 : REDISMODULE_WRITE));
    int type = RedisModule_KeyType(key);
    if (type != REDISMODULE_KEYTYPE_EMPTY && type != REDISMODULE_KEYTYPE_ZSET) {
        RedisModule_CloseKey(key);
        return REDISMODULE_ERRORMSG_WRONGTYPE;
    }
    slog_read r = {.ctx = ctx, .key = key, .capacity = 64, .next_seq = 0};
    r.scores = r.local;
    long long card = 0;
    rl_slog_view view = {0, INT64_MIN, slog_nth, &r};
    if (type == REDISMODULE_KEYTYPE_ZSET) {
        card = (long long)RedisModule_ValueLength(key);
        int64_t at = read_top(&r, req, 0);
        view.newest_us = r.count > 0 ? r.scores[0] : INT64_MIN;
        view.in_window = card - count_out(key, ctx, at, req->params[1] * 1000);
    }
    rl_slog_plan plan;
    rl_slog_decide_view(req, &view, &plan, reply);
    if (r.scores != r.local) RedisModule_Free(r.scores);
    if (!dryrun) {
        RedisModuleString **members = plan.add > 0 ? new_members(ctx, key, plan.at_us, r.next_seq, plan.add) : NULL;
        write_plan(ctx, key, keyname, req, card, &plan, reply, members);
        for (int64_t i = 0; i < plan.add; i++) RedisModule_FreeString(ctx, members[i]);
        if (members) RedisModule_Free(members);
    }
    RedisModule_CloseKey(key);
    return NULL;
}
