/* store_log_read.c -- the sliding log's prepare: reads what the decision (algorithms/slidinglog.c) asks
 * for, decides, and writes nothing.
 *
 * The decision sees the log through a view (rl_slog_view): the units in the window, the newest member's
 * time, and the time of the i-th newest unit on demand. Prepare fills the view without reading the window
 * member by member, in O(log N) sorted-set operations whatever the cost and limit:
 *   - the top walk reads the newest members down to the newest module member, whose totals every count
 *     is read against (store_log.c: with x, the units ranked 0..r from the top are (r + 1) + E(r));
 *   - the units in the window are the members in it plus E at the oldest of them, found from the bottom:
 *     the members that left the window are few (every call that writes removes them), so they are walked
 *     and counted off the total of the set; when many have (only DRYRUN calls came since), ZCOUNT and the
 *     nearest module member above the window's edge tell instead;
 *   - the i-th newest unit (asked only when the call blocks or logs nothing, for at most two units) comes
 *     from the members the top walk held, else from a binary search over ranks (ZRANGE by rank is
 *     O(log N)) for the smallest rank r with (r + 1) + E(r) > i. A member of another format, met by the
 *     search, is resolved by looking at the nearest module member above it (one step per such member).
 * The walk over the set (rl_log_walk) is here too: commit walks with it as well. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "compat.h"
#include "store_log_parts.h"

#define HELD_MAX 32          /* members held from the top walk */
#define EXPIRED_WALK_MAX 64  /* members that left the window counted one by one, before asking ZCOUNT */
#define SEARCH_BATCH 64      /* members fetched per ZRANGE when a search meets another format */

void rl_log_walk(RedisModuleKey *key, RedisModuleCtx *ctx, int from_top, double min, double max, int minex,
                 rl_log_visit_fn visit, void *arg) {
    int ok = from_top ? RedisModule_ZsetLastInScoreRange(key, min, max, minex, 0)
                      : RedisModule_ZsetFirstInScoreRange(key, min, max, minex, 0);
    if (ok != REDISMODULE_OK) return;
    while (!RedisModule_ZsetRangeEndReached(key)) {
        double score;
        int take = 0;
        RedisModuleString *name = RedisModule_ZsetRangeCurrentElement(key, &score);
        int more = visit(arg, name, score, &take);
        if (!take) RedisModule_FreeString(ctx, name);
        if (!more || !(from_top ? RedisModule_ZsetRangePrev(key) : RedisModule_ZsetRangeNext(key))) break;
    }
    RedisModule_ZsetRangeStop(key);
}

typedef struct log_reader {
    RedisModuleCtx *ctx;
    rl_pending *p;
    int64_t now_us;
    int64_t edge_us;             /* a member is in the window iff its score > edge_us = now - W */
    long long members;           /* in the set */
    rl_log_member newest_ours;   /* the newest module member (ours = 0: none), name not held */
    int64_t walked;              /* members the top walk passed */
    rl_log_member held[HELD_MAX]; /* the newest members: down to newest_ours, or HELD_MAX of them once a
                                    search wants more (names not held) */
    int64_t held_count, held_units;
    int64_t window_members;      /* members in the window */
    int64_t window_extra;        /* E at the oldest of them: the units in the window are
                                    window_members + window_extra */
    int64_t expired, expired_extra; /* members that left the window, and their total (weight - 1) */
    int expired_uncounted;       /* the walk over them stopped at EXPIRED_WALK_MAX */
    int has_lock;                /* the set holds the key's lock member (the lowest: score -inf), not a unit */
    rl_lock_rec lock;
} log_reader;

/* The lock member (score -inf, store_log_name.c), which every walk steps over: it is no attempt. */
static int is_lock(RedisModuleString *name, double score) {
    return score == RL_LOG_NEG_INF && rl_log_lock_parse(name, score, NULL);
}

static void hold(log_reader *r, const rl_log_member *m) {
    r->held[r->held_count++] = *m;
    r->held_units += m->weight;
}

/* From the top down to the newest module member, holding the first HELD_MAX members. When the newest
 * member of all is the module's and below now, it is kept (with its name) for commit, which would read
 * just that member (store_log_write.c). */
static int visit_top(void *arg, RedisModuleString *name, double score, int *take) {
    log_reader *r = arg;
    rl_log_member m;
    rl_log_parse(name, score, &m);
    if (!m.ours && is_lock(name, score)) return 1;
    if (r->held_count < HELD_MAX) hold(r, &m);
    r->walked++;
    if (!m.ours) return 1;
    r->newest_ours = m;
    if (r->walked == 1 && m.time_us < r->now_us) {
        *take = 1;
        m.name = name;
        r->p->u.log.newest = m;
    }
    return 0;
}

/* The first HELD_MAX members, for a decision that asks for a unit just beyond the ones held. */
static int visit_hold(void *arg, RedisModuleString *name, double score, int *take) {
    (void)take;
    log_reader *r = arg;
    rl_log_member m;
    rl_log_parse(name, score, &m);
    if (!m.ours && is_lock(name, score)) return 1;
    hold(r, &m);
    return r->held_count < HELD_MAX;
}

/* Count the members that left the window, and their (weight - 1), from the bottom. */
static int visit_expired(void *arg, RedisModuleString *name, double score, int *take) {
    log_reader *r = arg;
    if (score == RL_LOG_NEG_INF && !r->has_lock && rl_log_lock_parse(name, score, &r->lock)) {
        r->has_lock = 1; /* the lowest member: met first */
        *take = 1;
        r->p->u.log.lock_name = name;
        return 1;
    }
    if (r->expired == EXPIRED_WALK_MAX) {
        r->expired_uncounted = 1;
        return 0;
    }
    rl_log_member m;
    rl_log_parse(name, score, &m);
    r->expired++;
    if (m.ours) r->expired_extra = rl_log_mod_total(r->expired_extra + m.weight - 1);
    return 1;
}

/* E at the oldest member in the window: E of the nearest module member at or above it. */
static int visit_edge_up(void *arg, RedisModuleString *name, double score, int *take) {
    (void)take;
    log_reader *r = arg;
    rl_log_member m;
    rl_log_parse(name, score, &m);
    if (!m.ours) return 1;
    r->window_extra = rl_log_extra_through(&r->newest_ours, &m);
    return 0;
}

static long long call_int(RedisModuleCallReply *reply) {
    long long v = reply && RedisModule_CallReplyType(reply) == REDISMODULE_REPLY_INTEGER
                      ? RedisModule_CallReplyInteger(reply)
                      : 0;
    if (reply) RedisModule_FreeCallReply(reply);
    return v;
}

/* Members in the window and E at the oldest of them. Usually from the few members that left the window;
 * when many have, ZCOUNT and the nearest module member above the edge. */
static void count_window(log_reader *r) {
    RedisModuleKey *key = r->p->key;
    rl_log_walk(key, r->ctx, 0, RL_LOG_NEG_INF, (double)r->edge_us, 0, visit_expired, r);
    if (!r->expired_uncounted) {
        r->window_members = r->members - r->expired - r->has_lock;
        int64_t all = rl_log_extra_all(&r->newest_ours);
        r->window_extra = r->expired_extra <= all ? all - r->expired_extra : 0;
        return;
    }
    r->window_members =
        r->members - call_int(RedisModule_Call(r->ctx, "ZCOUNT", "scl", r->p->keyname, "-inf", (long long)r->edge_us));
    r->window_extra = 0;
    if (r->newest_ours.ours && r->newest_ours.time_us > r->edge_us)
        rl_log_walk(key, r->ctx, 0, (double)r->edge_us, RL_LOG_POS_INF, 1, visit_edge_up, r);
}

/* Members at ranks [from, to] from the top, by ZRANGE ... REV WITHSCORES, into out (names not held);
 * returns how many were read. */
static int64_t fetch_ranks(log_reader *r, int64_t from, int64_t to, rl_log_member *out) {
    RedisModuleCallReply *reply = RedisModule_Call(r->ctx, "ZRANGE", "sllcc", r->p->keyname, (long long)from,
                                                   (long long)to, "REV", "WITHSCORES");
    int64_t n = 0;
    if (reply && RedisModule_CallReplyType(reply) == REDISMODULE_REPLY_ARRAY) {
        size_t len = RedisModule_CallReplyLength(reply);
        for (size_t i = 0; i + 1 < len && n <= to - from; i += 2, n++) {
            size_t name_len, score_len;
            const char *name = RedisModule_CallReplyStringPtr(RedisModule_CallReplyArrayElement(reply, i), &name_len);
            const char *score =
                RedisModule_CallReplyStringPtr(RedisModule_CallReplyArrayElement(reply, i + 1), &score_len);
            char score_text[64];
            if (!name || !score || score_len >= sizeof score_text) break;
            memcpy(score_text, score, score_len);
            score_text[score_len] = '\0';
            rl_log_parse_name(name, name_len, &out[n]);
            out[n].time_us = rl_log_score_us(strtod(score_text, NULL));
            out[n].name = NULL;
        }
    }
    if (reply) RedisModule_FreeCallReply(reply);
    return n;
}

/* What a search knows for sure: E at some rank. */
typedef struct anchor {
    int64_t rank, extra;
} anchor;

/* E at rank `rank`, whose member is m: exact for a module member; for another one, E of the nearest
 * module member above it, looked for upwards down to the anchor `above` (whose E is known). */
static int64_t extra_at(log_reader *r, int64_t rank, const rl_log_member *m, anchor above) {
    if (m->ours) return rl_log_extra_through(&r->newest_ours, m);
    rl_log_member batch[SEARCH_BATCH];
    for (int64_t hi = rank - 1; hi > above.rank;) {
        int64_t lo = hi - SEARCH_BATCH + 1 > above.rank + 1 ? hi - SEARCH_BATCH + 1 : above.rank + 1;
        int64_t n = fetch_ranks(r, lo, hi, batch);
        for (int64_t k = n - 1; k >= 0; k--)
            if (batch[k].ours) return rl_log_extra_through(&r->newest_ours, &batch[k]);
        if (n < hi - lo + 1) break; /* the set ended early: not on an open key */
        hi = lo - 1;
    }
    return above.extra;
}

/* Whether the members ranked 0..rank (m at rank) hold more than i units: (rank + 1) + E(rank) > i. For a
 * member of another format the bounds E(above) <= E(rank) <= window_extra often answer without a look
 * further up. When the answer is no and E(rank) is known, rank becomes the anchor above the rest of the
 * search. */
static int holds_more(log_reader *r, int64_t rank, const rl_log_member *m, anchor *above, int64_t i) {
    if (!m->ours && rank + 1 + above->extra > i) return 1;
    if (!m->ours && rank + 1 + r->window_extra <= i) return 0;
    int64_t extra = extra_at(r, rank, m, *above);
    if (rank + 1 + extra > i) return 1;
    *above = (anchor){rank, extra};
    return 0;
}

/* The i-th newest unit among the held members, or INT64_MIN if they hold fewer units. */
static int64_t held_nth(const log_reader *r, int64_t i) {
    for (int64_t k = 0; k < r->held_count; k++) {
        if (i < r->held[k].weight) return r->held[k].time_us;
        i -= r->held[k].weight;
    }
    return INT64_MIN;
}

/* The view's accessor: the score of the i-th newest unit (0 <= i < units in the window). The held members
 * answer the first units (HELD_MAX members are walked for a unit just beyond them); further down, a
 * binary search for the smallest rank r with (r + 1) + E(r) > i, where r lies in [i - window_extra, i]
 * since 0 <= E <= window_extra in the window. */
static int64_t log_nth(void *arg, int64_t i) {
    log_reader *r = arg;
    int64_t us = held_nth(r, i);
    if (us != INT64_MIN) return us;
    if (r->held_count < HELD_MAX && r->held_count < r->members) {
        r->held_count = r->held_units = 0;
        rl_log_walk(r->p->key, r->ctx, 1, RL_LOG_NEG_INF, RL_LOG_POS_INF, 0, visit_hold, r);
        if ((us = held_nth(r, i)) != INT64_MIN) return us;
    }
    anchor above = {r->held_count - 1, r->held_units - r->held_count}; /* E at the last held member */
    int64_t lo = i - r->window_extra > r->held_count ? i - r->window_extra : r->held_count;
    int64_t hi = i < r->window_members - 1 ? i : r->window_members - 1;
    rl_log_member m = {0};
    int64_t m_rank = -1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (fetch_ranks(r, mid, mid, &m) != 1) break;
        m_rank = mid;
        if (holds_more(r, mid, &m, &above, i)) hi = mid;
        else lo = mid + 1;
    }
    if (m_rank != lo && fetch_ranks(r, lo, lo, &m) != 1) return r->now_us; /* not on an open key */
    return m.time_us;
}

/* The key's expiry: none for a key that does not exist, which a read-only open gives as no key at all. */
static int64_t key_expire(const rl_pending *p) {
    return p->key ? RedisModule_GetAbsExpire(p->key) : REDISMODULE_NO_EXPIRE;
}

/* A key's lock around the decision (algorithms/lockout.h): a lock that holds denies and nothing is written
 * (the attempt is not logged); else LOCKOUT may start one after a denial, or a record that says nothing any
 * more goes. The key lives until the later of the log's and the record's ends. */
static void prepare_lock(rl_pending *p, const log_reader *r, int64_t own_reset_us, int64_t own_reset_ms) {
    rl_log_pending *log = &p->u.log;
    int64_t now_us = p->req->now_us;
    log->lock_before = r->lock.lock;
    log->state_expire_before = r->lock.state_expire_ms;
    if (r->has_lock && rl_lock_holds(&r->lock.lock, now_us)) {
        rl_lock_deny(&r->lock.lock, now_us, &p->reply);
        p->locked = 1;
        p->changes = 0;
        return;
    }
    log->state_expire_after = own_reset_ms == 0 ? 0 : rl_clock_expire_at_ms(now_us, own_reset_us);
    rl_lock lock = r->has_lock ? r->lock.lock : (rl_lock){0, 0, 0};
    p->lock_starts = rl_lock_after(p->req, &lock, &p->reply);
    p->lock = lock;
    log->lock_after = lock;
    log->lock_alive = rl_lock_alive(&lock, now_us);
    log->lock_changes = r->has_lock != log->lock_alive ||
                        (log->lock_alive && (memcmp(&lock, &r->lock.lock, sizeof lock) != 0 ||
                                             log->state_expire_after != r->lock.state_expire_ms));
    if (p->reply.reset_after_ms > 0) log->expire_at_ms = rl_clock_expire_at_ms(now_us, p->reply.reset_after_us);
    p->changes |= log->lock_changes || log->lock_alone ||
                  (p->reply.reset_after_ms > 0 && key_expire(p) != log->expire_at_ms);
}

const char *rl_log_prepare(RedisModuleCtx *ctx, rl_pending *p, char err[RL_ERR_LEN]) {
    rl_log_pending *log = &p->u.log;
    log->newest.name = NULL; /* release frees them: set before any return, the error below's included */
    log->lock_name = NULL;
    if (rl_lockout_validate(p->req, err) != 0) return err; /* (BACKOFF ... without LOCKOUT too) */
    int dryrun = (p->req->flags & RL_F_DRYRUN) != 0;
    log->lock_alone = log->lock_alive = log->lock_changes = 0;
    p->key = RedisModule_OpenKey(ctx, p->keyname, dryrun ? rl_compat_read_mode() : REDISMODULE_READ | REDISMODULE_WRITE);
    int type = RedisModule_KeyType(p->key);
    log_reader r = {.ctx = ctx, .p = p, .now_us = p->req->now_us};
    if (type == REDISMODULE_KEYTYPE_MODULE && rl_lock_only_read(p->key, &r.lock.lock)) {
        r.has_lock = log->lock_alone = 1; /* a lock alone (lock_type.c): a new log, locked */
        type = REDISMODULE_KEYTYPE_EMPTY;
    }
    if (type != REDISMODULE_KEYTYPE_EMPTY && type != REDISMODULE_KEYTYPE_ZSET) return REDISMODULE_ERRORMSG_WRONGTYPE;

    r.edge_us = r.now_us - p->req->params[1] * 1000;
    rl_slog_view view = {0, INT64_MIN, log_nth, &r};
    int64_t units = 0;
    if (type == REDISMODULE_KEYTYPE_ZSET) {
        r.members = (long long)RedisModule_ValueLength(p->key);
        rl_log_walk(p->key, ctx, 1, RL_LOG_NEG_INF, RL_LOG_POS_INF, 0, visit_top, &r);
        count_window(&r);
        r.members -= r.has_lock; /* the lock member is no attempt */
        view.newest_us = r.held_count > 0 ? r.held[0].time_us : INT64_MIN;
        view.in_window = r.window_members + r.window_extra;
        units = r.members + rl_log_extra_all(&r.newest_ours);
    }
    log->members = r.members;
    if (r.has_lock && rl_lock_holds(&r.lock.lock, r.now_us)) { /* logs nothing: asked for its retry and reset */
        rl_request asked = *p->req, look = rl_lock_look(p->req);
        asked.flags |= RL_F_NOLOG;
        rl_reply as_is;
        rl_slog_decide_view(&asked, &view, &log->plan, &p->reply);
        rl_slog_decide_view(&look, &view, &log->plan, &as_is);
        p->reply.reset_after_us = as_is.reset_after_us;
        p->reply.reset_after_ms = as_is.reset_after_ms;
        prepare_lock(p, &r, 0, 0);
        return NULL;
    }
    rl_slog_decide_view(p->req, &view, &log->plan, &p->reply);
    /* A call that logs nothing, trims nothing, moves no member from the future to now and leaves the expiry
     * where it was changes nothing (a peek, a denied call that logs nothing). */
    int future = r.held_count > 0 && r.held[0].time_us > r.now_us;
    if (p->reply.reset_after_ms > 0) log->expire_at_ms = rl_clock_expire_at_ms(p->req->now_us, p->reply.reset_after_us);
    p->creates = log->members == 0 && log->plan.add > 0 && !r.has_lock;
    p->changes = units > log->plan.keep || log->plan.add > 0 || future ||
                 (p->reply.reset_after_ms > 0 && key_expire(p) != log->expire_at_ms);
    if (r.has_lock || (p->req->flags & RL_F_LOCKOUT))
        prepare_lock(p, &r, p->reply.reset_after_us, p->reply.reset_after_ms);
    return NULL;
}
