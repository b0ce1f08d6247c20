/* store_cell.c -- the steps of a cell limiter (RL.TOKEN, RL.LEAKY, RL.WINDOW, RL.SMOOTH): its state is one
 * cell (two words for most, more for RL.SMOOTH and RL.WINDOW SUBWINDOWS), the value of a key of the
 * limiter's own data type (cell_type.c).
 *
 * prepare opens the key, checks that it holds this limiter (WRONGTYPE otherwise), lets the algorithm
 * decide on a copy of the cell, and works out whether the result changes anything: a limiter that is idle
 * after the call holds no key (idle is the same as new), and a call that leaves the cell and its expiry as
 * they were (a denied request, typically, as a flood of them is) has nothing to write. commit stores the
 * cell with its absolute expiry and replicates that effect (setstate.c), or deletes the key.
 *
 * Locks (algorithms/lockout.h). A key may hold a lock record beside its state, or a lock alone (lock_type.c's
 * rl-locked type, which every cell limiter reads as its own new state). While the lock holds, the algorithm
 * decides only to tell the reply its own retry, and nothing is written: a flood at a locked key costs no write
 * and no replication. Otherwise the decision goes as always, then lockout.c may start a lock (LOCKOUT) or drop
 * a record that says nothing any more; the key then lives until the later of its state's idle instant and the
 * record's end, holding a lock alone when its state is idle. A key that never had a lock pays one test. */
#include <string.h>

#include "clock.h"
#include "compat.h"
#include "rl_module.h"

/* (The lock's paths below are kept out of line: inlined, they would make every call's prepare and commit save
 * more registers, for paths that only keys with a lock take.) */

/* The key's lock holds: the algorithm's reply, for its retry, becomes the lock's denial, its reset that of the
 * state as it stands (a look); nothing changes. */
static __attribute__((noinline)) const char *prepare_locked(rl_pending *p, const rl_lock_rec *rec) {
    int exists = p->u.cell.stored != NULL;
    rl_cell copy = p->u.cell.next;
    p->lim->alg->decide(p->req, &copy, exists, &p->reply);
    rl_request look = rl_lock_look(p->req);
    rl_reply as_is;
    p->lim->alg->decide(&look, &p->u.cell.next, exists, &as_is);
    p->reply.reset_after_us = as_is.reset_after_us;
    p->reply.reset_after_ms = as_is.reset_after_ms;
    rl_lock_deny(&rec->lock, p->req->now_us, &p->reply);
    p->locked = 1;
    return NULL;
}

/* After the decision on a key that has a lock record, or a request with LOCKOUT: the record after the call, and
 * whether committing changes the key. */
static __attribute__((noinline)) const char *prepare_record(rl_pending *p, int had_rec, const rl_lock_rec *before,
                                                             int lock_only) {
    int64_t now_us = p->req->now_us;
    int own_idle = p->reply.reset_after_ms == 0;
    p->u.cell.state_expire_ms = own_idle ? 0 : rl_clock_expire_at_ms(now_us, p->reply.reset_after_us);
    rl_lock lock = had_rec ? before->lock : (rl_lock){0, 0, 0};
    p->lock_starts = rl_lock_after(p->req, &lock, &p->reply);
    p->lock = lock;
    p->u.cell.rec_alive = rl_lock_alive(&lock, now_us);
    p->u.cell.rec = (rl_lock_rec){lock, p->u.cell.state_expire_ms};
    void *stored = p->u.cell.stored;
    if (p->reply.reset_after_ms == 0) { /* no state and no record: the key goes */
        p->changes = stored != NULL || lock_only;
        return NULL;
    }
    p->u.cell.expire_at_ms = rl_clock_expire_at_ms(now_us, p->reply.reset_after_us);
    int64_t expire = p->u.cell.expire_at_ms;
    if (own_idle) { /* a lock alone stays */
        p->creates = !stored && !lock_only;
        p->changes = !lock_only || memcmp(&before->lock, &lock, sizeof lock) != 0 ||
                     RedisModule_GetAbsExpire(p->key) != expire;
        return NULL;
    }
    p->creates = !stored && !lock_only;
    p->changes = !stored || had_rec != p->u.cell.rec_alive ||
                 (had_rec && memcmp(before, &p->u.cell.rec, sizeof *before) != 0) ||
                 !rl_value_holds(stored, p->u.cell.stored_words, &p->u.cell.next, p->u.cell.words) ||
                 RedisModule_GetAbsExpire(p->key) != expire;
    return NULL;
}

/* The decision on a key that has a lock record (in its value, or alone), or for a request with a lockout
 * option: the lock's denial while it holds, otherwise the algorithm's decision and the record after it.
 * lock_only: the key holds the lock alone (its state is this limiter's new one). */
static __attribute__((noinline)) const char *prepare_with_lock(rl_pending *p, int lock_only) {
    const rl_limiter *lim = p->lim;
    void *stored = p->u.cell.stored;
    rl_lock_rec rec;
    int had_rec = 1;
    if (lock_only) {
        if (!rl_lock_only_read(p->key, &rec.lock)) return REDISMODULE_ERRORMSG_WRONGTYPE;
        rec.state_expire_ms = 0;
    } else {
        had_rec = stored && rl_value_has_lock(stored) && rl_value_lock(lim, stored, &rec);
    }
    if (had_rec && rl_lock_holds(&rec.lock, p->req->now_us)) return prepare_locked(p, &rec);
    lim->alg->decide(p->req, &p->u.cell.next, stored != NULL, &p->reply);
    p->u.cell.words = lim->alg->words(&p->u.cell.next);
    return prepare_record(p, had_rec, &rec, lock_only);
}

static const char *cell_prepare(RedisModuleCtx *ctx, rl_pending *p, char err[RL_ERR_LEN]) {
    const rl_limiter *lim = p->lim;
    if (lim->alg->validate(p->req, err) != 0) return err;
    /* Not only with LOCKOUT: BACKOFF, MAXLOCK or FORGIVE without it is the error to answer. */
    if ((p->req->flags & RL_LOCK_FLAGS) && rl_lockout_validate(p->req, err) != 0) return err;
    int dryrun = (p->req->flags & RL_F_DRYRUN) != 0;
    p->key = RedisModule_OpenKey(ctx, p->keyname, dryrun ? rl_compat_read_mode() : REDISMODULE_READ | REDISMODULE_WRITE);
    p->u.cell.rec_alive = 0; /* (locked and lock_starts: the caller's, as changes and creates) */
    const rl_limiter *found = rl_cell_limiter_of(p->key);
    rl_cell *next = &p->u.cell.next;
    p->u.cell.stored_words = 0;
    if (found != lim && found != NULL) {
        /* Anything else is the wrong type, but for a lock alone (rl-locked): this limiter's new state, locked. */
        if (found != RL_CELL_OTHER) return REDISMODULE_ERRORMSG_WRONGTYPE;
        p->u.cell.stored = NULL;
        next->w[0] = next->w[1] = 0;
        return prepare_with_lock(p, 1);
    }

    void *stored = found ? RedisModule_ModuleTypeGetValue(p->key) : NULL;
    p->u.cell.stored = stored;
    if (stored)
        p->u.cell.stored_words = rl_value_read(lim, stored, next);
    else
        next->w[0] = next->w[1] = 0;
    /* A key that never had a lock, asked without a lockout option, pays these two tests and no more. */
    if (__builtin_expect((p->req->flags & RL_LOCK_FLAGS) || rl_value_has_lock(stored), 0))
        return prepare_with_lock(p, 0);
    lim->alg->decide(p->req, next, stored != NULL, &p->reply);
    p->u.cell.words = lim->alg->words(next);

    if (p->reply.reset_after_ms == 0) {
        p->changes = stored != NULL; /* idle: the key goes */
        return NULL;
    }
    p->creates = stored == NULL;
    /* The idle instant, hence the expiry, is absolute: an unchanged cell has an unchanged expiry. */
    p->u.cell.expire_at_ms = rl_clock_expire_at_ms(p->req->now_us, p->reply.reset_after_us);
    p->changes = !stored || !rl_value_holds(stored, p->u.cell.stored_words, next, p->u.cell.words) ||
                 RedisModule_GetAbsExpire(p->key) != p->u.cell.expire_at_ms;
    return NULL;
}

/* A commit whose key keeps a lock record: the state with it, or the lock alone when the state is idle. */
static __attribute__((noinline)) void commit_locked(RedisModuleCtx *ctx, rl_pending *p) {
    const rl_lock_rec *rec = &p->u.cell.rec;
    if (rec->state_expire_ms == 0) {
        rl_lock_only_put(ctx, p->key, p->keyname, &rec->lock, p->u.cell.expire_at_ms);
        return;
    }
    rl_cell_put_locked(p->key, p->lim, p->u.cell.stored, p->u.cell.stored_words, &p->u.cell.next, p->u.cell.words,
                       rec);
    RedisModule_SetAbsExpire(p->key, p->u.cell.expire_at_ms);
    rl_replicate_cell_locked(ctx, p->keyname, p->lim, &p->u.cell.next, p->u.cell.words, rec, p->u.cell.expire_at_ms);
}

static void cell_commit(RedisModuleCtx *ctx, rl_pending *p) {
    if (p->reply.reset_after_ms == 0) {
        RedisModule_DeleteKey(p->key);
        if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "DEL", "s", p->keyname);
        return;
    }
    if (p->u.cell.rec_alive) {
        commit_locked(ctx, p);
        return;
    }
    rl_cell_put(p->key, p->lim, p->u.cell.stored, p->u.cell.stored_words, &p->u.cell.next, p->u.cell.words);
    RedisModule_SetAbsExpire(p->key, p->u.cell.expire_at_ms);
    rl_replicate_cell(ctx, p->keyname, p->lim, &p->u.cell.next, p->u.cell.words, p->u.cell.expire_at_ms);
}

static void cell_release(RedisModuleCtx *ctx, rl_pending *p) {
    (void)ctx;
    if (p->key) RedisModule_CloseKey(p->key);
}

const rl_steps rl_cell_steps = {"write fast", "readonly fast", cell_prepare, cell_commit, cell_release,
                                rl_lock_start, NULL};
