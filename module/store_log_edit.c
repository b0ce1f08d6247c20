/* store_log_edit.c -- one sliding-log commit's edits, applied to the open key as one batch and replicated
 * as the same ordinary sorted-set commands.
 *
 * commit (store_log_write.c) collects its edits in an rl_log_edit (store_log_parts.h): the lowest members
 * to remove by rank, members to remove by name, and members to add. They are applied removals first, so
 * that a name an add picks is free once the removals are done, and each kind is replicated (and AOF-logged)
 * as one command, which Redis wraps in MULTI/EXEC with the call's other effects: ZREMRANGEBYRANK (the exact
 * lowest ranks removed), ZREM (members a refund removes, members rewritten or merged), ZADD (the exact
 * members added or rewritten, and members moved from the future to now). A replica's set is then
 * member-for-member the primary's, whatever its clock. When nothing can receive them (no AOF, backlog or
 * replica: effects.c), the replicated commands are not built at all.
 *
 * A module member is added with ZADD NX under the first name NX accepts: seq counts up past names the set
 * holds at any score (a user's ZADD may have taken one), so no separate lookup checks that a name is free.
 * On a compact (listpack) set that one ZADD, a scan for the name and a walk to the score's place, is most
 * of a logged call's cost. */
#include "store_log_parts.h"

/* Add module member m under the first free name, from its seq up (m->seq ends as the one used): ZADD NX
 * tells, so the set is searched once per name tried. The name made, or NULL if the set refused the write
 * (not a sorted set open for writing: not reached). */
static RedisModuleString *add_ours(RedisModuleCtx *ctx, RedisModuleKey *key, rl_log_member *m) {
    for (;; m->seq++) {
        char name[RL_LOG_NAME_MAX];
        RedisModuleString *made = RedisModule_CreateString(ctx, name, rl_log_format_name(name, m));
        int flags = REDISMODULE_ZADD_NX;
        if (RedisModule_ZsetAdd(key, (double)m->time_us, made, &flags) == REDISMODULE_OK &&
            (flags & REDISMODULE_ZADD_ADDED))
            return made;
        RedisModule_FreeString(ctx, made);
        if (!(flags & REDISMODULE_ZADD_NOP)) return NULL;
    }
}

/* The ZADD of the members added, score then name for each: only those the set took. */
static void replicate_added(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_log_edit *ed, size_t added) {
    RedisModuleString **args = RedisModule_Alloc(2 * added * sizeof *args);
    size_t n = 0;
    for (size_t i = 0; i < ed->nadded; i++)
        if (ed->added[i].name) {
            args[n++] = RedisModule_CreateStringFromLongLong(ctx, ed->added[i].time_us);
            args[n++] = ed->added[i].name;
        }
    RedisModule_Replicate(ctx, "ZADD", "sv", keyname, args, n);
    for (size_t i = 0; i < n; i += 2) RedisModule_FreeString(ctx, args[i]);
    RedisModule_Free(args);
}

void rl_log_lock_write(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname,
                       RedisModuleString *old_name, const rl_lock_rec *rec, int alive) {
    const int effects = rl_effects_on(ctx);
    if (old_name) {
        RedisModule_ZsetRem(key, old_name, NULL);
        if (effects) RedisModule_Replicate(ctx, "ZREM", "ss", keyname, old_name);
    }
    if (!alive) return;
    RedisModuleString *name = rl_log_lock_name(ctx, rec);
    RedisModule_ZsetAdd(key, RL_LOG_NEG_INF, name, NULL);
    if (effects) RedisModule_Replicate(ctx, "ZADD", "scs", keyname, "-inf", name);
    RedisModule_FreeString(ctx, name);
}

void rl_log_edit_apply(RedisModuleCtx *ctx, rl_pending *p, rl_log_edit *ed) {
    ed->lowest_by_name |= p->u.log.lock_name != NULL;
    const int effects = rl_effects_on(ctx);
    if (ed->nlowest > 0) {
        for (size_t i = 0; i < ed->nlowest; i++) RedisModule_ZsetRem(p->key, ed->lowest[i].name, NULL);
        if (effects && !ed->lowest_by_name) {
            RedisModule_Replicate(ctx, "ZREMRANGEBYRANK", "sll", p->keyname, 0LL, (long long)ed->nlowest - 1);
        } else if (effects) {
            RedisModuleString **names = RedisModule_Alloc(ed->nlowest * sizeof *names);
            for (size_t i = 0; i < ed->nlowest; i++) names[i] = ed->lowest[i].name;
            RedisModule_Replicate(ctx, "ZREM", "sv", p->keyname, names, ed->nlowest);
            RedisModule_Free(names);
        }
    }
    if (ed->nremoved > 0) {
        for (size_t i = 0; i < ed->nremoved; i++) RedisModule_ZsetRem(p->key, ed->removed[i], NULL);
        if (effects) RedisModule_Replicate(ctx, "ZREM", "sv", p->keyname, ed->removed, ed->nremoved);
    }
    size_t added = 0;
    for (size_t i = 0; i < ed->nadded; i++) {
        rl_log_member *m = &ed->added[i];
        if (m->ours)
            m->name = add_ours(ctx, p->key, m);
        else
            RedisModule_ZsetAdd(p->key, (double)m->time_us, m->name, NULL);
        added += m->name != NULL;
    }
    if (effects && added > 0) replicate_added(ctx, p->keyname, ed, added);
    for (size_t i = 0; i < ed->nadded; i++)
        if (ed->added[i].ours && ed->added[i].name) RedisModule_FreeString(ctx, ed->added[i].name);
    if (ed->removed != ed->removed_inline) RedisModule_Free(ed->removed);
    if (ed->added != ed->added_inline) RedisModule_Free(ed->added);
}
