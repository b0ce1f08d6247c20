/* store_cell.c -- the steps of a cell limiter (RL.TOKEN, RL.LEAKY, RL.WINDOW, RL.SMOOTH): its state is one
 * cell (two words for most, more for RL.SMOOTH and RL.WINDOW SUBWINDOWS), the value of a key of the
 * limiter's own data type (cell_type.c).
 *
 * prepare opens the key, checks that it holds this limiter (WRONGTYPE otherwise), lets the algorithm
 * decide on a copy of the cell, and works out whether the result changes anything: a limiter that is idle
 * after the call holds no key (idle is the same as new), and a call that leaves the cell and its expiry as
 * they were (a denied request, typically, as a flood of them is) has nothing to write. commit stores the
 * cell with its absolute expiry and replicates that effect (setstate.c), or deletes the key. */
#include <string.h>

#include "clock.h"
#include "compat.h"
#include "rl_module.h"

static const char *cell_prepare(RedisModuleCtx *ctx, rl_pending *p, char err[RL_ERR_LEN]) {
    const rl_limiter *lim = p->lim;
    if (lim->alg->validate(p->req, err) != 0) return err;
    int dryrun = (p->req->flags & RL_F_DRYRUN) != 0;
    p->key = RedisModule_OpenKey(ctx, p->keyname, dryrun ? rl_compat_read_mode() : REDISMODULE_READ | REDISMODULE_WRITE);
    const rl_limiter *found = rl_cell_limiter_of(p->key);
    if (found != NULL && found != lim) return REDISMODULE_ERRORMSG_WRONGTYPE;

    void *stored = found ? RedisModule_ModuleTypeGetValue(p->key) : NULL;
    rl_cell *next = &p->u.cell.next;
    p->u.cell.stored = stored;
    p->u.cell.stored_words = 0;
    if (stored)
        p->u.cell.stored_words = rl_value_read(lim, stored, next);
    else
        next->w[0] = next->w[1] = 0;
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

static void cell_commit(RedisModuleCtx *ctx, rl_pending *p) {
    if (p->reply.reset_after_ms == 0) {
        RedisModule_DeleteKey(p->key);
        if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "DEL", "s", p->keyname);
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

const rl_steps rl_cell_steps = {"write deny-oom fast", "readonly fast", cell_prepare, cell_commit, cell_release};
