/* store_lease.c -- the steps of RL.ACQUIRE (rl_lease_steps): a concurrency limit, whose state is the key's
 * leases, the value of a key of its own data type (lease_type.c). A key locked by RL.BLOCK (its value's lock
 * record, or a lock alone: lock_type.c) denies every acquire while the lock holds, and writes nothing.
 *
 * prepare opens the key, checks that it holds leases (WRONGTYPE otherwise), and lets the decision
 * (algorithms/concurrency.c) read the leases in place: it answers the reply and a plan (add a lease, renew
 * the one the request names, or nothing). Only an admission writes: a denial, however many come, reads the
 * key and leaves it as it is (expired leases stay until the next write, counting for nothing). commit
 * applies the plan (dropping the expired leases at the front), sets the key's expiry to the last lease's
 * end, and replicates the key's leases whole (lease_type.c). */
#include "compat.h"
#include "rl_module.h"

/* The number the next made lease id takes (rl_lease_ids_init). */
static uint64_t next_id;

void rl_lease_ids_init(int deterministic) {
    next_id = 1;
    if (!deterministic) RedisModule_GetRandomBytes((unsigned char *)&next_id, sizeof next_id);
}

uint64_t rl_lease_next_id(void) { return next_id; }
void rl_lease_id_taken(void) { next_id++; }

static const char *lease_prepare(RedisModuleCtx *ctx, rl_pending *p, char err[RL_ERR_LEN]) {
    (void)err; /* every argument was checked by the parser */
    int dryrun = (p->req->flags & RL_F_DRYRUN) != 0;
    p->key = RedisModule_OpenKey(ctx, p->keyname, dryrun ? rl_compat_read_mode() : REDISMODULE_READ | REDISMODULE_WRITE);
    rl_lease_value *stored = NULL; /* this limiter's leases, none (an empty key), or WRONGTYPE */
    rl_lock alone = {0, 0, 0};     /* the lock a key holding a lock alone has (lock_type.c) */
    if (RedisModule_ModuleTypeGetType(p->key) == p->lim->type) stored = RedisModule_ModuleTypeGetValue(p->key);
    else if (RedisModule_KeyType(p->key) != REDISMODULE_KEYTYPE_EMPTY && !rl_lock_only_read(p->key, &alone))
        return REDISMODULE_ERRORMSG_WRONGTYPE;
    size_t id_len = 0;
    const char *id = p->id ? RedisModule_StringPtrLen(p->id, &id_len) : NULL;
    p->u.lease.stored = stored;
    p->u.lease.lock = stored ? stored->lock : alone;
    rl_lease_decide(p->req, stored ? stored->v : NULL, stored ? stored->n : 0, id, id_len, next_id, &p->u.lease.plan,
                    &p->reply);
    if (rl_lock_holds(&p->u.lease.lock, p->req->now_us)) { /* RL.BLOCK: denied, nothing written or made */
        int64_t idle_us = 0; /* the leases as they stand: idle when the last ends */
        if (stored && stored->n > 0 && stored->v[stored->n - 1].end_us > p->req->now_us)
            idle_us = stored->v[stored->n - 1].end_us - p->req->now_us;
        p->reply.reset_after_us = idle_us;
        p->reply.reset_after_ms = rl_us_to_ms_ceil(idle_us);
        rl_lock_deny(&p->u.lease.lock, p->req->now_us, &p->reply);
        p->locked = 1;
        return NULL;
    }
    next_id += p->u.lease.plan.made && !dryrun; /* a made id is never made again (an RL.ALL that then denies
                                                  * skips a number: no harm) */
    p->changes = p->u.lease.plan.action != RL_LEASE_KEEP;
    p->creates = p->changes && !stored;
    return NULL;
}

static void lease_commit(RedisModuleCtx *ctx, rl_pending *p) {
    rl_lease_value *stored = p->u.lease.stored;
    rl_lease_value *value = rl_lease_apply(stored, &p->u.lease.plan, p->req->now_us);
    value->lock = rl_lock_alive(&p->u.lease.lock, p->req->now_us) ? p->u.lease.lock : (rl_lock){0, 0, 0};
    if (!stored) RedisModule_ModuleTypeSetValue(p->key, p->lim->type, value); /* (over a lock alone, if any) */
    rl_lease_store(ctx, p->key, p->keyname, value, p->req->now_us);
}

static void lease_release(RedisModuleCtx *ctx, rl_pending *p) {
    (void)ctx;
    if (p->key) RedisModule_CloseKey(p->key);
}

/* Not `fast`: a write stores and replicates the key's leases whole, O(leases). */
/* (No LOCKOUT: a concurrency denial starts no lock.) */
const rl_steps rl_lease_steps = {"write", "readonly", lease_prepare, lease_commit, lease_release, NULL, NULL};
