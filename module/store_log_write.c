/* store_log_write.c -- the sliding log's commit: which members the plan removes, cuts, merges and rewrites,
 * so that the set holds the plan's units and the running totals stay true.
 *
 * The plan (algorithms/slidinglog.h) says, on the log newest first (scores above now counting as now):
 * drop the newest plan.drop units (REFUND), keep the next plan.keep, remove every older one, log plan.add
 * units at now. Commit reads what it needs from the top (the members a refund removes and the one it
 * cuts, the members at or above now, the newest module member left below now) and from the bottom (the
 * members dropped whole, and the one the cap cuts), then writes it as one batch (store_log_edit.c).
 *
 * The totals' invariant (store_log.c) holds after every write:
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
 * A refund removes the newest members whole, highest scores first (those above now, which count as now,
 * come first; units of one time are interchangeable), and cuts the next one, always a module member since
 * any other weighs 1, keeping part of its weight. Then the call goes on as every call. Members above now
 * move to now: the module's are merged into its member at now, another keeps its name and gets the score
 * now. Each member a call removes is visited once, so the trim is amortised O(1) per logged call.
 *
 * The ordinary call (no refund; the newest member the module's and older than now) searches its set once:
 * commit starts from the newest member prepare read rather than reading the top again, and the new member
 * goes in by ZADD NX under the first name NX accepts (store_log_edit.c). */
#include <string.h>

#include "store_log_parts.h"

/* A growable list of members, names held (commit holds the members it removes or rewrites). */
typedef struct member_list {
    rl_log_member *at;
    size_t n, cap;
} member_list;

static rl_log_member *member_list_push(member_list *list) {
    if (list->n == list->cap) {
        list->cap = list->cap ? list->cap * 2 : 16;
        list->at = RedisModule_Realloc(list->at, list->cap * sizeof *list->at);
    }
    memset(&list->at[list->n], 0, sizeof *list->at);
    return &list->at[list->n++];
}

static void member_list_free(RedisModuleCtx *ctx, member_list *list) {
    for (size_t i = 0; i < list->n; i++)
        if (list->at[i].name) RedisModule_FreeString(ctx, list->at[i].name);
    RedisModule_Free(list->at);
    list->at = NULL;
    list->n = list->cap = 0;
}

/* What commit reads before it writes. Names held are owned, except refund_cut's. */
typedef struct log_writer {
    int64_t now_us;
    int64_t refund_left;        /* units a refund still takes off the top during the top walk */
    member_list refunded;       /* the newest members, which the refund removes whole */
    rl_log_member refund_cut;   /* the member the refund cuts (ours = 0: none), as it will be: weight and
                                   x lowered by what it gives back; name borrowed from at_or_after_now or
                                   kept_below_now */
    member_list at_or_after_now; /* members left with score >= now, newest first */
    rl_log_member newest_ours;  /* the newest module member before the refund (the totals are read against
                                   it; ours = 0: none), name not held */
    int ours_kept;              /* a module member is left after the refund (in at_or_after_now, or below) */
    rl_log_member kept_below_now; /* the newest module member left, when it is below now (ours = 0: none) */
    member_list dropped;        /* the lowest members, dropped whole */
    rl_log_member cap_cut;      /* the member the cap cuts (ours = 0: none), keeping weight - cap_cut_units */
    int64_t cap_cut_units, dropped_extra;
} log_writer;

/* Down from the top: the members a refund removes (highest scores first) and the one it cuts, every member
 * left at or above now, then on to the newest module member left if none was at or above now. */
static int visit_commit_member(log_writer *w, rl_log_member m, RedisModuleString *name, int *take) {
    if (m.ours && !w->newest_ours.ours) w->newest_ours = m;
    int refund_cuts_it = 0;
    if (w->refund_left > 0) {
        if (m.weight <= w->refund_left) {
            w->refund_left -= m.weight;
            *take = 1;
            m.name = name;
            *member_list_push(&w->refunded) = m;
            return 1;
        }
        /* A module member (any other weighs 1 <= refund_left) keeps weight - refund_left units. Its x goes
         * down as much, so that it still follows the x below it by its weight - 1. */
        m.weight -= w->refund_left;
        m.extra_upto = rl_log_mod_total(m.extra_upto - w->refund_left);
        w->refund_left = 0;
        refund_cuts_it = 1;
    }
    if (m.time_us >= w->now_us) {
        *take = 1;
        m.name = name;
        *member_list_push(&w->at_or_after_now) = m;
        if (m.ours) w->ours_kept = 1;
        if (refund_cuts_it) w->refund_cut = m;
        return 1;
    }
    if (!m.ours) return !w->ours_kept;
    if (!w->ours_kept) { /* the newest module member left is below now: keep it, it may be rewritten */
        *take = 1;
        m.name = name;
        w->kept_below_now = m;
        w->ours_kept = 1;
        if (refund_cuts_it) w->refund_cut = m;
    }
    return 0;
}

static int visit_commit_top(void *arg, RedisModuleString *name, double score, int *take) {
    rl_log_member m;
    rl_log_parse(name, score, &m);
    return visit_commit_member(arg, m, name, take);
}

/* The top walk's visit of the member prepare read, without reading or parsing it again: without a refund,
 * when the newest member of all is the module's and below now, the walk would visit just that member and
 * stop there. Takes its name. */
static void visit_read_newest(RedisModuleCtx *ctx, log_writer *w, rl_log_member *newest) {
    rl_log_member m = *newest;
    m.name = NULL;
    int take = 0;
    visit_commit_member(w, m, newest->name, &take);
    if (!take) RedisModule_FreeString(ctx, newest->name);
    newest->name = NULL;
}

static int same_member(const rl_log_member *a, const rl_log_member *b) {
    return a->name && b->name && RedisModule_StringCompare(a->name, b->name) == 0;
}

/* Up from the bottom: drop whole members while they fit in the units to drop; the next one is cut. */
typedef struct drop_walk {
    log_writer *w;
    int64_t units_to_drop;
    int64_t members_to_look_at; /* those below the refunded ones and the ones at or above now */
} drop_walk;

static int visit_drop(void *arg, RedisModuleString *name, double score, int *take) {
    drop_walk *d = arg;
    if (d->members_to_look_at == 0) return 0;
    if (score == RL_LOG_NEG_INF && rl_log_lock_parse(name, score, NULL)) return 1; /* the lock stays */
    d->members_to_look_at--;
    rl_log_member m;
    rl_log_parse(name, score, &m);
    m.name = name;
    *take = 1;
    if (same_member(&m, &d->w->refund_cut)) { /* what the refund left of it */
        m.weight = d->w->refund_cut.weight;
        m.extra_upto = d->w->refund_cut.extra_upto;
    }
    if (m.weight <= d->units_to_drop) {
        d->units_to_drop -= m.weight;
        if (m.ours) d->w->dropped_extra = rl_log_mod_total(d->w->dropped_extra + m.weight - 1);
        *member_list_push(&d->w->dropped) = m;
        return d->units_to_drop > 0;
    }
    d->w->cap_cut = m; /* a module member: any other weighs 1 <= units_to_drop */
    d->w->cap_cut_units = d->units_to_drop;
    d->units_to_drop = 0;
    return 0;
}

static int visit_take(void *arg, RedisModuleString *name, double score, int *take) {
    if (score == RL_LOG_NEG_INF && rl_log_lock_parse(name, score, NULL)) return 1; /* the lock stays */
    *take = 1;
    member_list_push(arg)->name = name;
    return 1;
}

/* Every kept unit is at now (the cap reaches into the members at or above now): the set becomes one
 * member of `units` at now, or nothing; members of another format at now are folded into it, which
 * decides the same (units of one time are interchangeable). Its name is free: every member goes first. */
static void write_collapsed(RedisModuleCtx *ctx, rl_pending *p, int64_t now_us, int64_t units) {
    member_list all = {0};
    rl_log_walk(p->key, ctx, 0, RL_LOG_NEG_INF, RL_LOG_POS_INF, 0, visit_take, &all);
    rl_log_edit ed;
    rl_log_edit_init(&ed, all.at, all.n, 1);
    if (units > 0) rl_log_edit_add_ours(&ed, now_us, 0, units, units - 1, 0);
    rl_log_edit_apply(ctx, p, &ed);
    member_list_free(ctx, &all);
}

/* The newest module member after the commit when no new member is written: the one at now, or the newest
 * below now unless the cap dropped it. NULL when none is left. */
static const rl_log_member *newest_kept(const log_writer *w, int64_t ours_from_now) {
    for (size_t i = 0; i < w->at_or_after_now.n; i++)
        if (w->at_or_after_now.at[i].ours) return &w->at_or_after_now.at[i];
    if (ours_from_now > 0 || !w->kept_below_now.ours) return NULL;
    for (size_t i = 0; i < w->dropped.n; i++)
        if (same_member(&w->dropped.at[i], &w->kept_below_now)) return NULL;
    return &w->kept_below_now;
}

/* Keep the newest units (the cap stopped below the members at or above now): remove the members a refund
 * took, rewrite the one it cut, drop the lowest, cut one, merge the module members at or above now with
 * the new units into one member at now, move the other members above now to now, and keep the floor of the
 * newest module member true. */
static void write_kept(RedisModuleCtx *ctx, rl_pending *p, log_writer *w) {
    const rl_slog_plan *plan = &p->u.log.plan;
    const member_list *from_now = &w->at_or_after_now;
    int64_t floor_after = rl_log_mod_total(w->newest_ours.extra_below + w->dropped_extra +
                                           (w->cap_cut.ours ? w->cap_cut_units : 0));
    int64_t ours_from_now = 0, merged_weight = plan->add, oldest_ours_from_now = -1; /* an index */
    for (size_t i = 0; i < from_now->n; i++)
        if (from_now->at[i].ours) {
            ours_from_now++;
            merged_weight = merged_weight + from_now->at[i].weight < RL_LOG_WEIGHT_MAX
                                ? merged_weight + from_now->at[i].weight
                                : RL_LOG_WEIGHT_MAX;
            oldest_ours_from_now = (int64_t)i;
        }
    int writes_merged = plan->add > 0 || ours_from_now > 1 ||
                        (ours_from_now == 1 && from_now->at[oldest_ours_from_now].time_us > w->now_us);

    rl_log_edit ed;
    rl_log_edit_init(&ed, w->dropped.at, w->dropped.n, w->refunded.n + from_now->n + 3);
    for (size_t i = 0; i < w->refunded.n; i++) rl_log_edit_remove(&ed, w->refunded.at[i].name);
    if (w->cap_cut.ours) {
        rl_log_edit_remove(&ed, w->cap_cut.name);
        rl_log_edit_add_ours(&ed, w->cap_cut.time_us, w->cap_cut.seq, w->cap_cut.weight - w->cap_cut_units,
                             w->cap_cut.extra_upto, floor_after);
    }
    if (writes_merged) {
        /* x continues from below the merged members (or from the newest module member below now). */
        const rl_log_member *oldest = oldest_ours_from_now >= 0 ? &from_now->at[oldest_ours_from_now] : NULL;
        int64_t extra_below_merged = oldest ? rl_log_mod_total(oldest->extra_upto - (oldest->weight - 1))
                                     : w->newest_ours.ours ? w->newest_ours.extra_upto
                                                           : floor_after;
        for (size_t i = 0; i < from_now->n; i++)
            if (from_now->at[i].ours) rl_log_edit_remove(&ed, from_now->at[i].name);
        rl_log_edit_add_ours(&ed, w->now_us, 0, merged_weight,
                             rl_log_mod_total(extra_below_merged + merged_weight - 1), floor_after);
    } else {
        /* The newest member left carries the floor; the one a refund cut also its new weight and x (unless
         * the cap cuts it too, and the cut above rewrote it). */
        const rl_log_member *newest = newest_kept(w, ours_from_now);
        if (newest && (newest->extra_below != floor_after || same_member(newest, &w->refund_cut)) &&
            !same_member(newest, &w->cap_cut)) {
            rl_log_edit_remove(&ed, newest->name);
            rl_log_edit_add_ours(&ed, newest->time_us, newest->seq, newest->weight, newest->extra_upto, floor_after);
        }
    }
    for (size_t i = 0; i < from_now->n; i++)
        if (!from_now->at[i].ours && from_now->at[i].time_us > w->now_us)
            rl_log_edit_move(&ed, from_now->at[i].name, w->now_us);
    rl_log_edit_apply(ctx, p, &ed);
}

/* Remove the newest plan.drop units (a refund), keep the newest plan.keep units of the rest (scores above
 * now counting as now), add plan.add at now, set the expiry. What is not kept is the lowest units: those
 * that left the window, and those beyond the cap. */
void rl_log_commit(RedisModuleCtx *ctx, rl_pending *p) {
    rl_log_pending *log = &p->u.log;
    if (log->lock_alone) { /* a lock alone (lock_type.c) gives way to the set, the lock its member */
        RedisModule_DeleteKey(p->key);
        if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "DEL", "s", p->keyname);
    }
    log_writer w = {.now_us = log->plan.at_us, .refund_left = log->plan.drop};
    if (log->newest.name && w.refund_left == 0)
        visit_read_newest(ctx, &w, &log->newest);
    else if (log->members > 0)
        rl_log_walk(p->key, ctx, 1, RL_LOG_NEG_INF, RL_LOG_POS_INF, 0, visit_commit_top, &w);
    /* units left after the refund */
    int64_t units = log->members + rl_log_extra_all(&w.newest_ours) - (log->plan.drop - w.refund_left);
    drop_walk d = {&w, units > log->plan.keep ? units - log->plan.keep : 0,
                   log->members - (long long)w.refunded.n - (long long)w.at_or_after_now.n};
    if (d.units_to_drop > 0) rl_log_walk(p->key, ctx, 0, RL_LOG_NEG_INF, RL_LOG_POS_INF, 0, visit_drop, &d);
    if (d.units_to_drop > 0)
        write_collapsed(ctx, p, w.now_us, log->plan.keep + log->plan.add);
    else
        write_kept(ctx, p, &w);
    if (log->lock_changes || (log->lock_alone && log->lock_alive)) {
        rl_lock_rec rec = {log->lock_after, log->state_expire_after};
        rl_log_lock_write(ctx, p->key, p->keyname, log->lock_alone ? NULL : log->lock_name, &rec, log->lock_alive);
    }
    if (p->reply.reset_after_ms > 0) {
        RedisModule_SetAbsExpire(p->key, log->expire_at_ms);
        if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "PEXPIREAT", "sl", p->keyname, (long long)log->expire_at_ms);
    } else if (RedisModule_KeyType(p->key) == REDISMODULE_KEYTYPE_ZSET && RedisModule_ValueLength(p->key) == 0) {
        RedisModule_DeleteKey(p->key); /* an empty log is no key, as Redis does for an emptied sorted set */
    }
    member_list_free(ctx, &w.refunded);
    member_list_free(ctx, &w.at_or_after_now);
    member_list_free(ctx, &w.dropped);
    if (w.kept_below_now.name) RedisModule_FreeString(ctx, w.kept_below_now.name);
    if (w.cap_cut.name) RedisModule_FreeString(ctx, w.cap_cut.name);
}
