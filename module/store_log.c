/* store_log.c -- the steps of RL.SLIDINGLOG: its state is a plain Redis sorted set, scores = attempt times
 * in Unix µs, one member per attempt that carries its cost (its weight) in its name.
 *
 * The key stays an ordinary sorted set (ZRANGE key 0 -1 WITHSCORES shows the log; DEL clears it). The
 * module writes members named
 *
 *     <t_us>-<seq>:<weight>:<x>:<floor>
 *
 * weight = the units (cost) the member stands for, >= 1; x = the running total of (weight - 1) over the
 * module's members from the oldest up to this one, modulo 10^12; floor = the running total just below the
 * oldest of them (meaningful in the newest member). Any other member (the user's own ZADD, or the
 * "<t_us>-<seq>" members of earlier versions, one per unit) weighs 1. There is at most one module member
 * per score: a call at the time of an existing one rewrites it with the sum.
 *
 * Why the totals. A call must count the units in its window, and, when it blocks, find the time of the
 * k-th newest unit. Summing weights member by member would cost one step per member in the window (up to
 * limit + 1 of them). With x, the units of the members ranked 0..r from the top are
 *     (r + 1) + E(r),  E(r) = x_newest - x_m + (weight_m - 1)   for a module member m at rank r,
 * so the count is the number of members in the window plus E at its oldest one, and the k-th unit is a
 * binary search over ranks (ZRANGE by rank is O(log N)). floor, kept in the newest member, gives the
 * total E of the whole set, so members that left the window can be counted off from the bottom without
 * walking the window. A member of another format, met by a search, is resolved by looking at the
 * nearest module member above it (one step per such member).
 *
 * The invariant of the totals, which every write keeps. Let m_1 (oldest) .. m_k (newest) be the module's
 * members in score order; then, modulo 10^12,
 *     x(m_j) = x(m_(j-1)) + weight(m_j) - 1   for 1 < j <= k,    floor(m_k) = x(m_1) - (weight(m_1) - 1):
 * each x follows the one below it by its own weight - 1, and the newest member's floor is the total just
 * below the oldest (the floors of the other members are left as they were written, and never read). Then
 * E(r) above and x_newest - floor_newest (the total of the set) are exact. How each write keeps it:
 *   - dropping the lowest members, and cutting the oldest one kept to weight - d (the cap, and what left
 *     the window): no x changes; the floor rises by the (weight - 1) of the members dropped, plus d;
 *   - a refund removing the newest members, and cutting the newest one kept to weight - d: no x below
 *     it changes, the cut member's x goes down by d (so it still follows the one below it), and the floor
 *     does not move (nothing below the oldest changed);
 *   - merging the module members at or above now (and the units added) into one member at now: its x
 *     is the x just below the merged members plus its weight - 1;
 *   - then whichever module member is the newest after the call is rewritten with the new floor, unless it
 *     holds it already (a member a refund cut is rewritten anyway, for its weight and x).
 * A member is "rewritten" by a ZREM of its old name and a ZADD of the new one at the same score.
 *
 * Cost of one call: O(log N) sorted-set operations (N = members), plus the members that left the window
 * or fell out of the newest limit + 1 units, which the call removes (each member is removed once, so this
 * is amortised O(1) per logged call, though one call may remove many), plus members of another format
 * where a read lands on them: above the newest module member, and between a searched rank and the
 * module member above it. A blocked call does a binary search of at most log2(N) ZRANGE reads.
 *
 * REFUND n takes up to n units off the newest end (slidinglog.c decides how many: plan.drop): commit
 * removes the newest members whole, highest scores first (those above now, which count as now, come
 * first; units of one time are interchangeable), and cuts the next one, always a module member since any
 * other weighs 1, keeping part of its weight. Then the call goes on as every call: what left the window
 * or lies beyond the newest limit + 1 units goes, members above now move to now. A refund visits the
 * members it removes, each once, as the trim does.
 *
 * prepare reads, decides (algorithms/slidinglog.c) and writes nothing. commit writes straight to the open
 * key and replicates (and AOF-logs) the same effect as ordinary sorted-set commands, which Redis wraps in
 * MULTI/EXEC: ZREMRANGEBYRANK (the exact lowest ranks dropped), ZREM (members a refund removes, members
 * rewritten or merged), ZADD (the exact members added or rewritten, and members moved from the future to
 * now), PEXPIREAT. A replica's set is then member-for-member the primary's, whatever its clock. When
 * nothing can receive them (no AOF, backlog or replica: effects.c), they are not built at all.
 *
 * The ordinary call (no refund; the newest member the module's and older than now) searches its set once:
 * commit starts from the newest member prepare read rather than reading the top again, and a new member
 * goes in by ZADD NX under the first name NX accepts, so no separate lookup checks that the name is free.
 * On a listpack set that one ZADD, a scan for the name and a walk to the newest score, is most of a call.
 *
 * Scores are doubles: exact to the µs up to 2^53 µs (the year 2255). A score above now counts as now
 * (slidinglog.c), and commit moves such members to now: a module member is merged into the one at now,
 * another keeps its name and gets the score now. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "compat.h"
#include "rl_module.h"

#define X_MOD 1000000000000LL   /* x and floor wrap here; true differences stay below 10^6 */
#define WEIGHT_MAX RL_MAX_COUNT /* the largest weight a name may carry (the module's stay near the limit) */
#define HOLD 32                 /* members held from the top walk */
#define OUT_WALK 64             /* members that left the window counted one by one, before asking ZCOUNT */
#define BATCH 64                /* members fetched per ZRANGE when a search meets another format */

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

static int64_t xmod(int64_t v) {
    v %= X_MOD;
    return v < 0 ? v + X_MOD : v;
}

/* --- members ----------------------------------------------------------------------------------------- */

/* One member as read: its score, and its weight and totals if it is in the module's format. */
typedef struct entry {
    int64_t us, weight;
    int own; /* in the module's format */
    int64_t seq, x, floor;
    RedisModuleString *name; /* when the caller keeps it (owned) */
} entry;

/* 1..max_digits decimal digits at s[*i], then `stop` (or the end of the name when stop is 0). */
static int read_num(const char *s, size_t len, size_t *i, int max_digits, char stop, int64_t *out) {
    size_t start = *i;
    int64_t v = 0;
    while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
        if (*i - start == (size_t)max_digits) return 0;
        v = v * 10 + (s[*i] - '0');
        (*i)++;
    }
    if (*i == start) return 0;
    if (stop) {
        if (*i >= len || s[*i] != stop) return 0;
        (*i)++;
    } else if (*i != len) {
        return 0;
    }
    *out = v;
    return 1;
}

/* Fill e's format fields from a member name: "<t>-<seq>:<weight>:<x>:<floor>", or weight 1. */
static void parse_name(const char *s, size_t len, entry *e) {
    size_t i = 0;
    int64_t t;
    e->own = read_num(s, len, &i, 18, '-', &t) && read_num(s, len, &i, 15, ':', &e->seq) &&
             read_num(s, len, &i, 13, ':', &e->weight) && e->weight >= 1 && e->weight <= WEIGHT_MAX &&
             read_num(s, len, &i, 12, ':', &e->x) && read_num(s, len, &i, 12, 0, &e->floor);
    if (!e->own) e->weight = 1, e->seq = e->x = e->floor = 0;
}

static void parse_member(RedisModuleString *name, double score, entry *e) {
    size_t len;
    const char *s = RedisModule_StringPtrLen(name, &len);
    parse_name(s, len, e);
    e->us = score_us(score);
    e->name = NULL;
}

/* A growable array of entries (commit holds the members it removes or rewrites). */
typedef struct entries {
    entry *e;
    size_t n, cap;
} entries;

static entry *entries_push(entries *a) {
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->e = RedisModule_Realloc(a->e, a->cap * sizeof *a->e);
    }
    memset(&a->e[a->n], 0, sizeof *a->e);
    return &a->e[a->n++];
}

static void entries_free(RedisModuleCtx *ctx, entries *a) {
    for (size_t i = 0; i < a->n; i++)
        if (a->e[i].name) RedisModule_FreeString(ctx, a->e[i].name);
    RedisModule_Free(a->e);
    a->e = NULL;
    a->n = a->cap = 0;
}

/* --- walking the set -------------------------------------------------------------------------------- */

/* Visit members in score order (from the top: newest first; else oldest first) within [min, max], until
 * visit returns 0. The member handed to visit is freed after it unless visit took it (set *take). */
typedef int (*visit_fn)(void *arg, RedisModuleString *name, double score, int *take);

static void walk(RedisModuleKey *key, RedisModuleCtx *ctx, int from_top, double min, double max, int minex,
                 visit_fn visit, void *arg) {
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

#define NEG_INF REDISMODULE_NEGATIVE_INFINITE
#define POS_INF REDISMODULE_POSITIVE_INFINITE

/* The newest module member: what every total is read against. */
typedef struct newest_own {
    int found;
    int64_t rank, x, floor, weight, us;
} newest_own;

/* Total (weight - 1) of the module's members in the set: x of the newest minus the floor it records. */
static int64_t total_extra(const newest_own *b) { return b->found ? xmod(b->x - b->floor) : 0; }

/* E of a module member: the total (weight - 1) of the module's members from it up to the newest. */
static int64_t extra_through(const newest_own *b, const entry *m) { return xmod(b->x - m->x) + m->weight - 1; }

/* --- prepare: reading what the decision needs ------------------------------------------------------- */

typedef struct log_reader {
    RedisModuleCtx *ctx;
    rl_pending *p;
    int64_t now, edge; /* a member is in the window iff its score > edge = now - W */
    long long card;
    newest_own b;
    int64_t walked;    /* members the top walk passed */
    entry held[HOLD];  /* the newest members: down to b, or HOLD of them once a search wants more */
    int64_t nheld, held_units;
    int64_t n_w, e_last; /* members in the window, and E at the oldest of them */
    int64_t out, out_extra;
    int out_more; /* the out walk stopped at OUT_WALK */
} log_reader;

static void hold(log_reader *r, const entry *e) {
    r->held[r->nheld++] = *e;
    r->held_units += e->weight;
}

/* From the top down to the newest module member, holding the first HOLD members. When the newest member
 * of all is the module's and below now, its name is kept for commit, which would read just that member
 * (log_commit). */
static int visit_top(void *arg, RedisModuleString *name, double score, int *take) {
    log_reader *r = arg;
    entry e;
    parse_member(name, score, &e);
    if (r->nheld < HOLD) hold(r, &e);
    r->walked++;
    if (!e.own) return 1;
    r->b = (newest_own){1, r->walked - 1, e.x, e.floor, e.weight, e.us};
    if (r->walked == 1 && e.us < r->now) {
        *take = 1;
        r->p->u.log.top = (rl_log_top){name, e.us, e.seq, e.weight, e.x, e.floor};
    }
    return 0;
}

/* The first HOLD members, for a decision that asks for a unit just beyond the ones held. */
static int visit_hold(void *arg, RedisModuleString *name, double score, int *take) {
    (void)take;
    log_reader *r = arg;
    entry e;
    parse_member(name, score, &e);
    hold(r, &e);
    return r->nheld < HOLD;
}

/* Count the members that left the window, and their (weight - 1), from the bottom: few, since every call
 * that writes removes them. */
static int visit_out(void *arg, RedisModuleString *name, double score, int *take) {
    (void)take;
    log_reader *r = arg;
    if (r->out == OUT_WALK) {
        r->out_more = 1;
        return 0;
    }
    entry e;
    parse_member(name, score, &e);
    r->out++;
    if (e.own) r->out_extra = xmod(r->out_extra + e.weight - 1);
    return 1;
}

/* E at the oldest member in the window: E of the nearest module member at or above it. */
static int visit_edge_up(void *arg, RedisModuleString *name, double score, int *take) {
    (void)take;
    log_reader *r = arg;
    entry e;
    parse_member(name, score, &e);
    if (!e.own) return 1;
    r->e_last = extra_through(&r->b, &e);
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
 * when many have (only DRYRUN calls came since), ZCOUNT and the nearest module member above the edge. */
static void count_window(log_reader *r) {
    RedisModuleKey *key = r->p->key;
    walk(key, r->ctx, 0, NEG_INF, (double)r->edge, 0, visit_out, r);
    if (!r->out_more) {
        r->n_w = r->card - r->out;
        int64_t all = total_extra(&r->b);
        r->e_last = r->out_extra <= all ? all - r->out_extra : 0;
        return;
    }
    r->n_w = r->card - call_int(RedisModule_Call(r->ctx, "ZCOUNT", "scl", r->p->keyname, "-inf", (long long)r->edge));
    r->e_last = 0;
    if (r->b.found && r->b.us > r->edge) walk(key, r->ctx, 0, (double)r->edge, POS_INF, 1, visit_edge_up, r);
}

/* Members at ranks [from, to] from the top, by ZRANGE ... REV WITHSCORES; returns how many were read. */
static int64_t fetch_ranks(log_reader *r, int64_t from, int64_t to, entry *out) {
    RedisModuleCallReply *reply = RedisModule_Call(r->ctx, "ZRANGE", "sllcc", r->p->keyname, (long long)from,
                                                   (long long)to, "REV", "WITHSCORES");
    int64_t n = 0;
    if (reply && RedisModule_CallReplyType(reply) == REDISMODULE_REPLY_ARRAY) {
        size_t len = RedisModule_CallReplyLength(reply);
        for (size_t i = 0; i + 1 < len && n <= to - from; i += 2, n++) {
            size_t nlen, slen;
            const char *name = RedisModule_CallReplyStringPtr(RedisModule_CallReplyArrayElement(reply, i), &nlen);
            const char *sc = RedisModule_CallReplyStringPtr(RedisModule_CallReplyArrayElement(reply, i + 1), &slen);
            char buf[64];
            if (!name || !sc || slen >= sizeof buf) break;
            memcpy(buf, sc, slen);
            buf[slen] = '\0';
            parse_name(name, nlen, &out[n]);
            out[n].us = score_us(strtod(buf, NULL));
            out[n].name = NULL;
        }
    }
    if (reply) RedisModule_FreeCallReply(reply);
    return n;
}

/* What a search knows for sure: E at some rank. */
typedef struct anchor {
    int64_t rank, e;
} anchor;

/* E at rank `rank`, whose member is m: exact for a module member; for another one, E of the nearest
 * module member above it, looked for upwards down to the anchor `above` (whose E is known). */
static int64_t extra_at(log_reader *r, int64_t rank, const entry *m, anchor above) {
    if (m->own) return extra_through(&r->b, m);
    entry batch[BATCH];
    for (int64_t hi = rank - 1; hi > above.rank;) {
        int64_t lo = hi - BATCH + 1 > above.rank + 1 ? hi - BATCH + 1 : above.rank + 1;
        int64_t n = fetch_ranks(r, lo, hi, batch);
        for (int64_t k = n - 1; k >= 0; k--)
            if (batch[k].own) return extra_through(&r->b, &batch[k]);
        if (n < hi - lo + 1) break; /* the set ended early: not on an open key */
        hi = lo - 1;
    }
    return above.e;
}

/* Whether the members ranked 0..rank (m at rank) hold more than i units: (rank + 1) + E(rank) > i. For a
 * member of another format the bounds E(above) <= E(rank) <= E_last often answer without a look further
 * up. When the answer is no and E(rank) is known, rank becomes the anchor above the rest of the search. */
static int holds_more(log_reader *r, int64_t rank, const entry *m, anchor *above, int64_t i) {
    if (!m->own && rank + 1 + above->e > i) return 1;
    if (!m->own && rank + 1 + r->e_last <= i) return 0;
    int64_t e = extra_at(r, rank, m, *above);
    if (rank + 1 + e > i) return 1;
    *above = (anchor){rank, e};
    return 0;
}

/* The i-th newest unit among the held members, or INT64_MIN if they hold fewer units. */
static int64_t held_nth(const log_reader *r, int64_t i) {
    for (int64_t k = 0; k < r->nheld; k++) {
        if (i < r->held[k].weight) return r->held[k].us;
        i -= r->held[k].weight;
    }
    return INT64_MIN;
}

/* The view's accessor: the score of the i-th newest unit (0 <= i < units in the window). The held members
 * answer the first units (HOLD members are walked for a unit just beyond them); further down, a binary
 * search for the smallest rank r with (r + 1) + E(r) > i, where r lies in [i - E_last, i] since
 * 0 <= E <= E_last in the window. */
static int64_t log_nth(void *arg, int64_t i) {
    log_reader *r = arg;
    int64_t us = held_nth(r, i);
    if (us != INT64_MIN) return us;
    if (r->nheld < HOLD && r->nheld < r->card) {
        r->nheld = r->held_units = 0;
        walk(r->p->key, r->ctx, 1, NEG_INF, POS_INF, 0, visit_hold, r);
        if ((us = held_nth(r, i)) != INT64_MIN) return us;
    }
    anchor above = {r->nheld - 1, r->held_units - r->nheld}; /* E at the last held member */
    int64_t lo = i - r->e_last > r->nheld ? i - r->e_last : r->nheld;
    int64_t hi = i < r->n_w - 1 ? i : r->n_w - 1;
    entry m = {0};
    int64_t m_rank = -1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (fetch_ranks(r, mid, mid, &m) != 1) break;
        m_rank = mid;
        if (holds_more(r, mid, &m, &above, i)) hi = mid;
        else lo = mid + 1;
    }
    if (m_rank != lo && fetch_ranks(r, lo, lo, &m) != 1) return r->now; /* not on an open key */
    return m.us;
}

static const char *log_prepare(RedisModuleCtx *ctx, rl_pending *p, char err[RL_ERR_LEN]) {
    (void)err;
    int dryrun = (p->req->flags & RL_F_DRYRUN) != 0;
    p->u.log.top.name = NULL; /* release frees it: set before any return */
    p->key = RedisModule_OpenKey(ctx, p->keyname, dryrun ? rl_compat_read_mode() : REDISMODULE_READ | REDISMODULE_WRITE);
    rl_log_pending *log = &p->u.log;
    int type = RedisModule_KeyType(p->key);
    if (type != REDISMODULE_KEYTYPE_EMPTY && type != REDISMODULE_KEYTYPE_ZSET) return REDISMODULE_ERRORMSG_WRONGTYPE;

    log_reader r = {.ctx = ctx, .p = p, .now = p->req->now_us};
    r.edge = r.now - p->req->params[1] * 1000;
    rl_slog_view view = {0, INT64_MIN, log_nth, &r};
    int64_t units = 0;
    if (type == REDISMODULE_KEYTYPE_ZSET) {
        r.card = (long long)RedisModule_ValueLength(p->key);
        walk(p->key, ctx, 1, NEG_INF, POS_INF, 0, visit_top, &r);
        count_window(&r);
        view.newest_us = r.nheld > 0 ? r.held[0].us : INT64_MIN;
        view.in_window = r.n_w + r.e_last;
        units = r.card + total_extra(&r.b);
    }
    log->card = r.card;
    rl_slog_decide_view(p->req, &view, &log->plan, &p->reply);
    /* A call that logs nothing, trims nothing, moves no member from the future to now and leaves the expiry
     * where it was changes nothing (a peek, a denied call that logs nothing). */
    int future = r.nheld > 0 && r.held[0].us > r.now;
    if (p->reply.reset_after_ms > 0) log->expire_at_ms = rl_clock_expire_at_ms(p->req->now_us, p->reply.reset_after_us);
    p->creates = log->card == 0 && log->plan.add > 0;
    p->changes = units > log->plan.keep || log->plan.add > 0 || future ||
                 (p->reply.reset_after_ms > 0 && RedisModule_GetAbsExpire(p->key) != log->expire_at_ms);
    return NULL;
}

/* --- commit: writing the plan ------------------------------------------------------------------------ */

/* What commit reads before it writes: the members a refund removes from the top, the members at or above
 * now (merged or moved to now), the newest module member, the newest one left below now, and the lowest
 * members to drop. Names held are owned. */
typedef struct log_writer {
    int64_t now;
    int64_t drop;      /* units a refund still takes off the top during the top walk */
    entries refunded;  /* the newest members, which the refund removes whole */
    entry rcut;        /* the member the refund cuts (rcut.own = 0: none), as it will be: weight and x
                          lowered by what it gives back; name borrowed from top or below */
    entries top;       /* members left with score >= now, newest first */
    newest_own b;      /* the newest module member (before the refund: the totals are read against it) */
    int left;          /* a module member is left after the refund (in top, or below) */
    entry below;       /* the newest module member left, when it is below now (below.own = 0: none) */
    int64_t walked;    /* members the top walk passed */
    entries dropped;   /* the lowest members, dropped whole */
    entry cut;         /* the member the cap cuts (cut.own = 0: none), keeping weight - cut_by units */
    int64_t cut_by, dropped_extra;
} log_writer;

/* Down from the top: the members a refund removes (highest scores first) and the one it cuts, every member
 * left at or above now, then on to the newest module member left if none was at or above now. */
static int visit_commit_entry(log_writer *w, entry e, RedisModuleString *name, int *take) {
    w->walked++;
    if (e.own && !w->b.found) w->b = (newest_own){1, w->walked - 1, e.x, e.floor, e.weight, e.us};
    int refund_cut = 0;
    if (w->drop > 0) {
        if (e.weight <= w->drop) {
            w->drop -= e.weight;
            *take = 1;
            e.name = name;
            *entries_push(&w->refunded) = e;
            return 1;
        }
        /* A module member (any other weighs 1 <= drop) keeps weight - drop units. Its x goes down as much,
         * so that it still follows the x below it by its weight - 1. */
        e.weight -= w->drop;
        e.x = xmod(e.x - w->drop);
        w->drop = 0;
        refund_cut = 1;
    }
    if (e.us >= w->now) {
        *take = 1;
        e.name = name;
        *entries_push(&w->top) = e;
        if (e.own) w->left = 1;
        if (refund_cut) w->rcut = e;
        return 1;
    }
    if (!e.own) return !w->left;
    if (!w->left) { /* the newest module member left is below now: keep it, it may be rewritten */
        *take = 1;
        e.name = name;
        w->below = e;
        w->left = 1;
        if (refund_cut) w->rcut = e;
    }
    return 0;
}

static int visit_commit_top(void *arg, RedisModuleString *name, double score, int *take) {
    entry e;
    parse_member(name, score, &e);
    return visit_commit_entry(arg, e, name, take);
}

/* The top walk's visit of the member prepare read, without reading or parsing it again: without a refund,
 * when the newest member of all is the module's and below now, the walk would visit just that member and
 * stop there. Takes its name. */
static void visit_read_top(RedisModuleCtx *ctx, log_writer *w, rl_log_top *top) {
    entry e = {.us = top->us, .weight = top->weight, .own = 1, .seq = top->seq, .x = top->x, .floor = top->floor};
    int take = 0;
    visit_commit_entry(w, e, top->name, &take);
    if (!take) RedisModule_FreeString(ctx, top->name);
    top->name = NULL;
}

static int same_member(const entry *a, const entry *b) {
    return a->name && b->name && RedisModule_StringCompare(a->name, b->name) == 0;
}

/* Up from the bottom: drop whole members while they fit in the units to drop; the next one is cut. */
typedef struct drop_walk {
    log_writer *w;
    int64_t rem, limit; /* units still to drop; members it may look at (those below the refunded ones and
                           the top group) */
} drop_walk;

static int visit_drop(void *arg, RedisModuleString *name, double score, int *take) {
    drop_walk *d = arg;
    if (d->limit == 0) return 0;
    d->limit--;
    entry e;
    parse_member(name, score, &e);
    e.name = name;
    *take = 1;
    if (same_member(&e, &d->w->rcut)) { /* what the refund left of it */
        e.weight = d->w->rcut.weight;
        e.x = d->w->rcut.x;
    }
    if (e.weight <= d->rem) {
        d->rem -= e.weight;
        if (e.own) d->w->dropped_extra = xmod(d->w->dropped_extra + e.weight - 1);
        *entries_push(&d->w->dropped) = e;
        return d->rem > 0;
    }
    d->w->cut = e; /* a module member: any other weighs 1 <= rem */
    d->w->cut_by = d->rem;
    d->rem = 0;
    return 0;
}

static int visit_take(void *arg, RedisModuleString *name, double score, int *take) {
    (void)score;
    *take = 1;
    entries_push(arg)->name = name;
    return 1;
}

/* Append v in decimal at p; returns the end. (printf's machinery was a sixth of a call's instructions.) */
static char *put_decimal(char *p, int64_t v) {
    char digits[20];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    if (v < 0) *p++ = '-';
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n) *p++ = digits[--n];
    return p;
}

/* A member one commit adds: an existing one moved to now (name set), or a module member
 * "<us>-<seq>:<weight>:<x>:<floor>" named when it is added (name NULL until then). */
typedef struct log_add {
    RedisModuleString *name;
    int owned; /* name was made here */
    int64_t us, seq, weight, x, floor;
} log_add;

/* Add a module member under the first free name, seq counting up past names the set holds at any score (a
 * user's ZADD may have taken one): ZADD NX tells, so the set is searched once per name tried. The name
 * made, or NULL if the set refused the write (not a sorted set open for writing: not reached). */
static RedisModuleString *add_own(RedisModuleCtx *ctx, RedisModuleKey *key, const log_add *a) {
    for (int64_t seq = a->seq;; seq++) {
        char name[5 * 21], *end = name; /* five numbers of at most 20 characters, four separators */
        end = put_decimal(end, a->us);
        *end++ = '-';
        end = put_decimal(end, seq);
        *end++ = ':';
        end = put_decimal(end, a->weight);
        *end++ = ':';
        end = put_decimal(end, a->x);
        *end++ = ':';
        end = put_decimal(end, a->floor);
        RedisModuleString *m = RedisModule_CreateString(ctx, name, (size_t)(end - name));
        int flags = REDISMODULE_ZADD_NX;
        if (RedisModule_ZsetAdd(key, (double)a->us, m, &flags) == REDISMODULE_OK && (flags & REDISMODULE_ZADD_ADDED))
            return m;
        RedisModule_FreeString(ctx, m);
        if (!(flags & REDISMODULE_ZADD_NOP)) return NULL;
    }
}

/* The writes of one commit, applied in this order and replicated as the same commands: ZREMRANGEBYRANK
 * of the lowest ranks, ZREM of members rewritten or merged, ZADD of members added or moved to now. Up to
 * EDIT_INLINE of each without an allocation. */
#define EDIT_INLINE 8
typedef struct log_edit {
    const entries *lowest;   /* removed from the bottom (names borrowed) */
    RedisModuleString **rem; /* borrowed */
    log_add *add;
    size_t nrem, nadd;
    RedisModuleString *rem_inline[EDIT_INLINE];
    log_add add_inline[EDIT_INLINE];
} log_edit;

static void edit_init(log_edit *ed, const entries *lowest, size_t max) {
    ed->lowest = lowest;
    ed->nrem = ed->nadd = 0;
    int inline_fits = max <= EDIT_INLINE;
    ed->rem = inline_fits ? ed->rem_inline : RedisModule_Alloc(max * sizeof *ed->rem);
    ed->add = inline_fits ? ed->add_inline : RedisModule_Alloc(max * sizeof *ed->add);
}

/* A module member to add at us, named at apply time from seq up. */
static void edit_add_own(log_edit *ed, int64_t us, int64_t seq, int64_t weight, int64_t x, int64_t floor) {
    ed->add[ed->nadd++] = (log_add){NULL, 0, us, seq, weight, x, floor};
}

/* An existing member moved to us (name borrowed). */
static void edit_move(log_edit *ed, RedisModuleString *name, int64_t us) {
    ed->add[ed->nadd++] = (log_add){name, 0, us, 0, 0, 0, 0};
}

/* Removals first, then the adds (a name picked by an add is free once the removals are done). The
 * replicated commands are built only when something can receive them (effects.c). */
static void edit_apply(RedisModuleCtx *ctx, rl_pending *p, log_edit *ed) {
    const int effects = rl_effects_on(ctx);
    if (ed->lowest && ed->lowest->n > 0) {
        for (size_t i = 0; i < ed->lowest->n; i++) RedisModule_ZsetRem(p->key, ed->lowest->e[i].name, NULL);
        if (effects) RedisModule_Replicate(ctx, "ZREMRANGEBYRANK", "sll", p->keyname, 0LL, (long long)ed->lowest->n - 1);
    }
    if (ed->nrem > 0) {
        for (size_t i = 0; i < ed->nrem; i++) RedisModule_ZsetRem(p->key, ed->rem[i], NULL);
        if (effects) RedisModule_Replicate(ctx, "ZREM", "sv", p->keyname, ed->rem, ed->nrem);
    }
    size_t added = 0;
    for (size_t i = 0; i < ed->nadd; i++) {
        log_add *a = &ed->add[i];
        if (a->name) {
            RedisModule_ZsetAdd(p->key, (double)a->us, a->name, NULL);
        } else {
            a->name = add_own(ctx, p->key, a);
            a->owned = 1;
        }
        added += a->name != NULL;
    }
    if (effects && added > 0) {
        RedisModuleString **args = RedisModule_Alloc(2 * added * sizeof *args);
        size_t n = 0;
        for (size_t i = 0; i < ed->nadd; i++)
            if (ed->add[i].name) {
                args[n++] = RedisModule_CreateStringFromLongLong(ctx, ed->add[i].us);
                args[n++] = ed->add[i].name;
            }
        RedisModule_Replicate(ctx, "ZADD", "sv", p->keyname, args, n);
        for (size_t i = 0; i < n; i += 2) RedisModule_FreeString(ctx, args[i]);
        RedisModule_Free(args);
    }
    for (size_t i = 0; i < ed->nadd; i++)
        if (ed->add[i].owned && ed->add[i].name) RedisModule_FreeString(ctx, ed->add[i].name);
    if (ed->rem != ed->rem_inline) RedisModule_Free(ed->rem);
    if (ed->add != ed->add_inline) RedisModule_Free(ed->add);
}

/* Every kept unit is at now (the cap reaches into the members at or above now): the set becomes one
 * member of `units` at now, or nothing; members of another format at now are folded into it, which
 * decides the same (units of one time are interchangeable). Its name is free: every member goes first. */
static void write_collapsed(RedisModuleCtx *ctx, rl_pending *p, int64_t now, int64_t units) {
    entries all = {0};
    walk(p->key, ctx, 0, NEG_INF, POS_INF, 0, visit_take, &all);
    log_edit ed;
    edit_init(&ed, &all, 1);
    if (units > 0) edit_add_own(&ed, now, 0, units, units - 1, 0);
    edit_apply(ctx, p, &ed);
    entries_free(ctx, &all);
}

/* The newest module member after the commit when no new member is written: the one at now, or the newest
 * below now unless the cap dropped it. NULL when none is left. */
static const entry *newest_kept(const log_writer *w, int64_t n_own_top) {
    for (size_t i = 0; i < w->top.n; i++)
        if (w->top.e[i].own) return &w->top.e[i];
    if (n_own_top > 0 || !w->below.own) return NULL;
    for (size_t i = 0; i < w->dropped.n; i++)
        if (same_member(&w->dropped.e[i], &w->below)) return NULL;
    return &w->below;
}

/* Keep the newest units (the cap stopped below the members at or above now): remove the members a refund
 * took, rewrite the one it cut, drop the lowest, cut one, merge the module members at or above now with
 * the new units into one member at now, move the other members above now to now, and keep the floor of the
 * newest module member true. */
static void write_kept(RedisModuleCtx *ctx, rl_pending *p, log_writer *w) {
    const rl_slog_plan *plan = &p->u.log.plan;
    int64_t floor1 = xmod(w->b.floor + w->dropped_extra + (w->cut.own ? w->cut_by : 0));
    int64_t n_own = 0, merged = plan->add, last_own = -1;
    for (size_t i = 0; i < w->top.n; i++)
        if (w->top.e[i].own) {
            n_own++;
            merged = merged + w->top.e[i].weight < WEIGHT_MAX ? merged + w->top.e[i].weight : WEIGHT_MAX;
            last_own = (int64_t)i;
        }
    int new_member = plan->add > 0 || n_own > 1 || (n_own == 1 && w->top.e[last_own].us > w->now);

    log_edit ed;
    edit_init(&ed, &w->dropped, w->refunded.n + w->top.n + 3);
    for (size_t i = 0; i < w->refunded.n; i++) ed.rem[ed.nrem++] = w->refunded.e[i].name;
    if (w->cut.own) {
        ed.rem[ed.nrem++] = w->cut.name;
        edit_add_own(&ed, w->cut.us, w->cut.seq, w->cut.weight - w->cut_by, w->cut.x, floor1);
    }
    if (new_member) {
        /* x continues from below the merged members (or from the newest module member below now). */
        const entry *lowest = last_own >= 0 ? &w->top.e[last_own] : NULL;
        int64_t base = lowest ? xmod(lowest->x - (lowest->weight - 1)) : w->b.found ? w->b.x : floor1;
        for (size_t i = 0; i < w->top.n; i++)
            if (w->top.e[i].own) ed.rem[ed.nrem++] = w->top.e[i].name;
        edit_add_own(&ed, w->now, 0, merged, xmod(base + merged - 1), floor1);
    } else {
        /* The newest member left carries the floor; the one a refund cut also its new weight and x (unless
         * the cap cuts it too, and the cut above rewrote it). */
        const entry *t = newest_kept(w, n_own);
        if (t && (t->floor != floor1 || same_member(t, &w->rcut)) && !same_member(t, &w->cut)) {
            ed.rem[ed.nrem++] = t->name;
            edit_add_own(&ed, t->us, t->seq, t->weight, t->x, floor1);
        }
    }
    for (size_t i = 0; i < w->top.n; i++)
        if (!w->top.e[i].own && w->top.e[i].us > w->now) edit_move(&ed, w->top.e[i].name, w->now);
    edit_apply(ctx, p, &ed);
}

/* Remove the newest plan.drop units (a refund), keep the newest plan.keep units of the rest (scores above
 * now counting as now), add plan.add at now, set the expiry. What is not kept is the lowest units: those
 * that left the window, and those beyond the cap. */
static void log_commit(RedisModuleCtx *ctx, rl_pending *p) {
    rl_log_pending *log = &p->u.log;
    log_writer w = {.now = log->plan.at_us, .drop = log->plan.drop};
    if (log->top.name && w.drop == 0)
        visit_read_top(ctx, &w, &log->top);
    else if (log->card > 0)
        walk(p->key, ctx, 1, NEG_INF, POS_INF, 0, visit_commit_top, &w);
    int64_t units = log->card + total_extra(&w.b) - (log->plan.drop - w.drop); /* left after the refund */
    drop_walk d = {&w, units > log->plan.keep ? units - log->plan.keep : 0,
                   log->card - (long long)w.refunded.n - (long long)w.top.n};
    if (d.rem > 0) walk(p->key, ctx, 0, NEG_INF, POS_INF, 0, visit_drop, &d);
    if (d.rem > 0)
        write_collapsed(ctx, p, w.now, log->plan.keep + log->plan.add);
    else
        write_kept(ctx, p, &w);
    if (p->reply.reset_after_ms > 0) {
        RedisModule_SetAbsExpire(p->key, log->expire_at_ms);
        if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "PEXPIREAT", "sl", p->keyname, (long long)log->expire_at_ms);
    } else if (RedisModule_KeyType(p->key) == REDISMODULE_KEYTYPE_ZSET && RedisModule_ValueLength(p->key) == 0) {
        RedisModule_DeleteKey(p->key); /* an empty log is no key, as Redis does for an emptied sorted set */
    }
    entries_free(ctx, &w.refunded);
    entries_free(ctx, &w.top);
    entries_free(ctx, &w.dropped);
    if (w.below.name) RedisModule_FreeString(ctx, w.below.name);
    if (w.cut.name) RedisModule_FreeString(ctx, w.cut.name);
}

static void log_release(RedisModuleCtx *ctx, rl_pending *p) {
    if (p->u.log.top.name) RedisModule_FreeString(ctx, p->u.log.top.name);
    if (p->key) RedisModule_CloseKey(p->key);
}

/* Not `fast`: one call removes every entry that has left the window, however many (amortised O(1) per
 * logged call, but a single call may remove up to limit + 1 entries). */
const rl_steps rl_log_steps = {"write deny-oom", "readonly", log_prepare, log_commit, log_release};
