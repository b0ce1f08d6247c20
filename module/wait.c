/* wait.c -- server-side waiting: WAIT timeout_ms (RL.TOKEN, RL.WINDOW, RL.ALL) and BLOCK's held replies
 * (RL.LEAKY, RL.SMOOTH), with no polling.
 *
 * WAIT. A request that is denied, but would fit within timeout_ms if nothing else happened (its
 * retry_after_ms is at most the timeout), blocks its client as BLPOP does. The waiters on one key form a
 * queue in arrival order (an RL.ALL waiter stands in the queue of each of its keys), and the rule is strict
 * first-in first-out per key:
 *   - only a waiter at the head of every queue it stands in is decided; it is decided exactly as a fresh
 *     call at that moment (committed and replicated when admitted, nothing written when denied), and the
 *     client gets that reply, with every field as of that moment;
 *   - a head that is denied keeps waiting, and is decided again at its retry_after_ms; the ones behind it
 *     wait for it, even one that would fit now, so a later waiter is never admitted while an earlier one on
 *     its keys that fits is still waiting (at its own timeout it is answered as a fresh call, below);
 *   - every call on a key with waiters (waiting or not) first lets the heads that fit be admitted; then a
 *     call without WAIT is decided as usual, and a call with WAIT joins the back of the queue (if it could
 *     fit within its timeout at all) rather than pass the waiters;
 *   - at its timeout (real time), or on CLIENT UNBLOCK, a waiter gets the answer of a fresh call at that
 *     moment (the denial, unless the request happens to fit then); CLIENT UNBLOCK ... ERROR answers
 *     -UNBLOCKED and a disconnect ends the wait; either way nothing is left behind.
 * Time costs nothing while clients wait: each queue has at most one module timer, due at the earlier of its
 * head's retry instant and the nearest timeout in it, and nothing runs between. While the test clock is
 * frozen only timeouts are timed; RL.CLOCK SET, ADVANCE and REAL serve every queue. Decisions run in a
 * command's context (a call on the key) or in a timer's or a timeout's, where Redis propagates what they
 * replicate when the callback returns: those always build their effects (effects.c cannot skip them there).
 * Inside MULTI, a script, or from the replication stream, WAIT does not block: the call answers at once.
 *
 * Writes held. A timer or a blocked client's callback is no command, so Redis checks nothing for it: the
 * module must hold its writes where Redis would refuse or postpone a write command. While clients are
 * paused (CLIENT PAUSE WRITE or ALL, FAILOVER, CLUSTER FAILOVER: a write then would abort the server, which
 * keeps expired keys in place and asserts that nothing is propagated), while loading, and past maxmemory,
 * nothing is admitted: every queue is held as it stands and one module-wide timer looks again every
 * HOLD_POLL_MS until writes resume, then serves the queues as usual. A held waiter's timeout is answered on
 * time when the fresh call it gets would be a denial (which writes nothing); a waiter that would be admitted
 * at its timeout waits on until writes resume (they are paused for a bounded time) or, past maxmemory, gets
 * the OOM error a fresh call would. A server that became a replica answers its waiters -UNBLOCKED, as Redis
 * answers its own blocked clients then.
 *
 * BLOCK. The decision (and its replication) happens at admission; only the reply waits for wait_ms, under
 * one timer. When it is sent, limit, remaining and reset_after_ms are read again (the same request as a
 * DRYRUN of COST 0), so they are true at that moment; wait_ms stays the wait the request was admitted
 * with. CLIENT UNBLOCK sends it at once (the request was admitted: its reply is the admission), ERROR
 * answers -UNBLOCKED; a disconnect ends it. */
#include <string.h>

#include "clock.h"
#include "rl_module.h"

long long rl_waiters;
int rl_effects_forced;

typedef struct waiter waiter;

/* The waiters on one key of one database, in arrival order. */
typedef struct queue {
    int db;
    char *name; /* its dictionary key: db, then the key's bytes */
    size_t name_len;
    waiter *head, *tail;
    long long count;
    RedisModuleTimerID timer;
    int has_timer;
    int64_t timer_at_ms; /* real ms */
    int dirty;           /* to be served by settle() */
    int held;            /* writes were held when last settled: the hold timer settles it again */
    struct queue *next_dirty;
} queue;

typedef struct place {
    waiter *prev, *next;
} place;

/* A blocked client: a WAIT waiter (in queues) or a held BLOCK reply (under its own timer). */
struct waiter {
    RedisModuleBlockedClient *bc;
    int held;
    int db;
    const rl_limiter *lim; /* NULL: RL.ALL */
    rl_counters *stats;
    int argc;
    RedisModuleString **argv; /* the call's arguments, held */
    /* WAIT */
    int nq;
    queue *q[RL_ALL_MAX_LIMITS];
    place at[RL_ALL_MAX_LIMITS];
    int64_t deadline_ms;  /* real ms */
    int64_t retry_at_us;  /* module clock: when the last decision as head said it fits; -1 unknown */
    /* BLOCK */
    rl_reply reply;
    RedisModuleTimerID timer;
};

static RedisModuleDict *queues;  /* name -> queue */
static RedisModuleDict *blocked; /* the RedisModuleBlockedClient pointer's bytes -> waiter */
static queue *dirty_list;
static RedisModuleTimerID hold_timer;
static int hold_timer_on;

#define HOLD_POLL_MS 10
#define UNBLOCKED_REPLICA "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"
#define UNBLOCKED_PAUSED "UNBLOCKED writes are paused: the request was neither admitted nor denied"
#define OOM_ERROR "OOM command not allowed when used memory > 'maxmemory'."

static int64_t real_ms(void) { return (int64_t)RedisModule_Milliseconds(); }

/* --- waiters and queues --------------------------------------------------------------------------------- */

static waiter *waiter_new(RedisModuleCtx *ctx, const rl_limiter *lim, RedisModuleString **argv, int argc,
                          rl_counters *stats) {
    waiter *w = RedisModule_Calloc(1, sizeof *w);
    w->db = RedisModule_GetSelectedDb(ctx);
    w->lim = lim;
    w->stats = stats;
    w->argc = argc;
    w->argv = RedisModule_Alloc(sizeof *w->argv * (size_t)argc);
    for (int i = 0; i < argc; i++) w->argv[i] = RedisModule_CreateStringFromString(NULL, argv[i]);
    w->retry_at_us = -1;
    return w;
}

static void waiter_free(waiter *w) {
    for (int i = 0; i < w->argc; i++) RedisModule_FreeString(NULL, w->argv[i]);
    RedisModule_Free(w->argv);
    RedisModule_Free(w);
}

static waiter *waiter_of(RedisModuleBlockedClient *bc) {
    return blocked ? RedisModule_DictGetC(blocked, &bc, sizeof bc, NULL) : NULL;
}

static queue *queue_find(int db, RedisModuleString *key, int create) {
    size_t klen;
    const char *k = RedisModule_StringPtrLen(key, &klen);
    size_t len = sizeof db + klen;
    char stack[256], *name = len <= sizeof stack ? stack : RedisModule_Alloc(len);
    memcpy(name, &db, sizeof db);
    memcpy(name + sizeof db, k, klen);
    queue *q = queues ? RedisModule_DictGetC(queues, name, len, NULL) : NULL;
    if (!q && create) {
        if (!queues) queues = RedisModule_CreateDict(NULL);
        q = RedisModule_Calloc(1, sizeof *q);
        q->db = db;
        q->name = RedisModule_Alloc(len);
        memcpy(q->name, name, len);
        q->name_len = len;
        RedisModule_DictSetC(queues, q->name, len, q);
    }
    if (name != stack) RedisModule_Free(name);
    return q;
}

static void mark_dirty(queue *q) {
    if (q->dirty) return;
    q->dirty = 1;
    q->next_dirty = dirty_list;
    dirty_list = q;
}

static void push(waiter *w, queue *q) {
    int i = w->nq++;
    w->q[i] = q;
    w->at[i] = (place){q->tail, NULL};
    if (q->tail) {
        for (int j = 0; j < q->tail->nq; j++)
            if (q->tail->q[j] == q) q->tail->at[j].next = w;
    } else {
        q->head = w;
    }
    q->tail = w;
    q->count++;
}

static place *place_in(waiter *w, queue *q) {
    for (int i = 0; i < w->nq; i++)
        if (w->q[i] == q) return &w->at[i];
    return NULL;
}

/* Take w out of every queue it stands in; a queue whose head it was is served again. */
static void unlink_waiter(waiter *w) {
    for (int i = 0; i < w->nq; i++) {
        queue *q = w->q[i];
        place *at = &w->at[i];
        if (at->prev) place_in(at->prev, q)->next = at->next;
        else q->head = at->next;
        if (at->next) place_in(at->next, q)->prev = at->prev;
        else q->tail = at->prev;
        q->count--;
        mark_dirty(q);
    }
    w->nq = 0;
}

static int head_everywhere(const waiter *w) {
    for (int i = 0; i < w->nq; i++)
        if (w->q[i]->head != w) return 0;
    return 1;
}

static void queue_free(RedisModuleCtx *ctx, queue *q) {
    if (q->has_timer) RedisModule_StopTimer(ctx, q->timer, NULL);
    RedisModule_DictDelC(queues, q->name, q->name_len, NULL);
    RedisModule_Free(q->name);
    RedisModule_Free(q);
}

/* --- deciding and answering ------------------------------------------------------------------------------ */

static void decide(RedisModuleCtx *ctx, const waiter *w, uint32_t add_flags, int64_t cost, rl_counters *stats,
                   rl_outcome *o) {
    if (w->lim)
        rl_limiter_decide(ctx, w->lim, w->argv, w->argc, add_flags, cost, stats, o);
    else
        rl_all_decide(ctx, w->argv, w->argc, add_flags, stats, o);
}

/* Leave the module's books: no longer waiting. */
static void forget(waiter *w) {
    RedisModule_DictDelC(blocked, &w->bc, sizeof w->bc, NULL);
    if (!w->held) {
        unlink_waiter(w);
        rl_waiters--;
    }
    rl_clients_waiting--;
}

/* Unblock w with o as its reply (reply_cb sends it, free_cb frees it). */
static void answer(waiter *w, const rl_outcome *o) {
    rl_outcome *copy = RedisModule_Alloc(sizeof *copy);
    *copy = *o;
    if (copy->error == o->errbuf) copy->error = copy->errbuf;
    forget(w);
    RedisModule_UnblockClient(w->bc, copy);
    waiter_free(w);
}

/* Whether a write may be made now, outside a command (a timer, a blocked client's callback), as Redis would
 * judge a write command: see "Writes held" above. */
enum write_state { WRITES_OK, WRITES_PAUSED, WRITES_OOM, WRITES_REPLICA };

static enum write_state write_state(RedisModuleCtx *ctx) {
    int flags = RedisModule_GetContextFlags(ctx);
    if (flags & REDISMODULE_CTX_FLAGS_SLAVE) return WRITES_REPLICA;
    if (RedisModule_AvoidReplicaTraffic() || (flags & REDISMODULE_CTX_FLAGS_LOADING)) return WRITES_PAUSED;
    if (flags & REDISMODULE_CTX_FLAGS_OOM) return WRITES_OOM;
    return WRITES_OK;
}

/* The final decision of a waiter (at its timeout, or on CLIENT UNBLOCK): a fresh call at this moment. While
 * writes are held only a decision that writes nothing is made: a denial (or an error) is answered, an
 * admission is the OOM error past maxmemory; otherwise 0 says the request would be admitted and nothing
 * was decided. */
static int decide_final(RedisModuleCtx *ctx, const waiter *w, enum write_state writes, rl_outcome *o) {
    if (writes == WRITES_OK) {
        decide(ctx, w, 0, -1, w->stats, o);
        return 1;
    }
    decide(ctx, w, RL_F_DRYRUN, -1, NULL, o); /* counted below as the call it stands for */
    if (!o->error && o->allowed) {
        if (writes != WRITES_OOM) return 0;
        o->error = OOM_ERROR;
    }
    if (w->stats) {
        if (o->error) w->stats->errors++;
        else w->stats->denied++;
    }
    return 1;
}

/* Admit the heads that fit, in order; a head that does not fit keeps waiting until its retry instant. */
static void serve(RedisModuleCtx *ctx, queue *q) {
    waiter *w;
    while ((w = q->head) != NULL) {
        if (!head_everywhere(w)) { /* an earlier waiter on another of its keys goes first */
            w->retry_at_us = -1;
            return;
        }
        rl_outcome o;
        decide(ctx, w, RL_F_DRYRUN, -1, NULL, &o);
        if (!o.error && !o.allowed) {
            w->retry_at_us = o.retry_after_ms >= 0 ? rl_clock_now_us() + o.retry_after_ms * 1000 : -1;
            return;
        }
        if (!o.error) decide(ctx, w, 0, -1, w->stats, &o); /* the same decision, written and counted */
        else if (w->stats) w->stats->errors++;
        answer(w, &o);
    }
}

/* Waiters whose timeout has come get their final answer (unless writes are paused and it would admit). */
static void expire(RedisModuleCtx *ctx, queue *q, enum write_state writes) {
    int64_t now = real_ms();
    for (waiter *w = q->head; w;) {
        waiter *next = place_in(w, q)->next;
        rl_outcome o;
        if (w->deadline_ms <= now && decide_final(ctx, w, writes, &o)) answer(w, &o);
        w = next;
    }
}

static void on_timer(RedisModuleCtx *ctx, void *data);

/* Serve q right after the current command or callback, from its timer (a context that may write). */
static void serve_soon(RedisModuleCtx *ctx, queue *q) {
    if (q->has_timer) RedisModule_StopTimer(ctx, q->timer, NULL);
    q->timer = RedisModule_CreateTimer(ctx, 0, on_timer, q);
    q->has_timer = 1;
    q->timer_at_ms = real_ms();
}

/* One timer for the queue, due at the earlier of its head's retry instant (on the real clock) and its
 * nearest timeout; none when it is empty. */
static void schedule(RedisModuleCtx *ctx, queue *q) {
    int64_t due = INT64_MAX;
    for (waiter *w = q->head; w; w = place_in(w, q)->next)
        if (w->deadline_ms < due) due = w->deadline_ms;
    if (q->head && q->head->retry_at_us >= 0 && !rl_clock_frozen()) {
        int64_t at = (q->head->retry_at_us + 999) / 1000;
        if (at < due) due = at;
    }
    if (q->has_timer && q->timer_at_ms == due) return;
    if (q->has_timer) RedisModule_StopTimer(ctx, q->timer, NULL);
    q->has_timer = 0;
    if (due == INT64_MAX) return;
    int64_t now = real_ms();
    q->timer = RedisModule_CreateTimer(ctx, due > now ? due - now : 0, on_timer, q);
    q->has_timer = 1;
    q->timer_at_ms = due;
}

static void on_hold_timer(RedisModuleCtx *ctx, void *data);

/* Writes are held: q waits as it stands, under the hold timer instead of its own (whose due time may have
 * passed already, and would fire again and again). */
static void hold(RedisModuleCtx *ctx, queue *q) {
    q->held = 1;
    if (q->has_timer) RedisModule_StopTimer(ctx, q->timer, NULL);
    q->has_timer = 0;
    if (!hold_timer_on) hold_timer = RedisModule_CreateTimer(ctx, HOLD_POLL_MS, on_hold_timer, NULL);
    hold_timer_on = 1;
}

/* Serve, expire and schedule every dirty queue, in the queue's database (the caller's is restored), until
 * nothing changes; free the queues left empty. */
static void settle(RedisModuleCtx *ctx) {
    if (!dirty_list) return;
    int db = RedisModule_GetSelectedDb(ctx), selected = db;
    rl_effects_forced++;
    while (dirty_list) {
        queue *q = dirty_list;
        dirty_list = q->next_dirty;
        q->dirty = 0;
        q->held = 0;
        if (q->count > 0) {
            if (q->db != selected) RedisModule_SelectDb(ctx, selected = q->db);
            enum write_state writes = write_state(ctx);
            if (writes == WRITES_REPLICA) {
                rl_outcome o = {.error = UNBLOCKED_REPLICA};
                while (q->head) answer(q->head, &o); /* nothing to wait for on a replica */
            } else if (writes != WRITES_OK) {
                hold(ctx, q);
            } else {
                serve(ctx, q);
            }
            expire(ctx, q, writes);
        }
        if (q->dirty) continue; /* served again below */
        if (q->count == 0)
            queue_free(ctx, q);
        else if (!q->held)
            schedule(ctx, q);
    }
    rl_effects_forced--;
    if (selected != db) RedisModule_SelectDb(ctx, db);
}

static void on_timer(RedisModuleCtx *ctx, void *data) {
    queue *q = data;
    q->has_timer = 0;
    mark_dirty(q);
    settle(ctx);
}

/* Look again at every held queue: served if writes resumed, held again (and this timer restarted) if not. */
static void on_hold_timer(RedisModuleCtx *ctx, void *data) {
    (void)data;
    hold_timer_on = 0;
    RedisModuleDictIter *it = RedisModule_DictIteratorStartC(queues, "^", NULL, 0);
    queue *q;
    while (RedisModule_DictNextC(it, NULL, (void **)&q))
        if (q->held) mark_dirty(q);
    RedisModule_DictIteratorStop(it);
    settle(ctx);
}

/* --- the blocked client's callbacks ---------------------------------------------------------------------- */

static int reply_cb(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return rl_send_outcome(ctx, RedisModule_GetBlockedClientPrivateData(ctx));
}

static void free_cb(RedisModuleCtx *ctx, void *privdata) {
    (void)ctx;
    if (privdata) RedisModule_Free(privdata);
}

/* The reply of a held request, its fields read again now. */
static void held_outcome(RedisModuleCtx *ctx, const waiter *w, rl_outcome *o) {
    rl_outcome now;
    decide(ctx, w, RL_F_DRYRUN, 0, NULL, &now);
    memset(o, 0, sizeof *o);
    o->n = 1;
    o->replies[0] = w->reply;
    if (!now.error) {
        o->replies[0].limit = now.replies[0].limit;
        o->replies[0].remaining = now.replies[0].remaining;
        o->replies[0].reset_after_ms = now.replies[0].reset_after_ms;
    }
}

/* CLIENT UNBLOCK (TIMEOUT): a waiter's final answer, a held reply at once. Redis then unblocks the client,
 * and the handle is ours to release (UnblockClient: no reply callback then, the client is gone from it). */
static int timeout_cb(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModuleBlockedClient *bc = RedisModule_GetBlockedClientHandle(ctx);
    waiter *w = waiter_of(bc);
    if (!w) return RedisModule_ReplyWithNull(ctx);
    rl_outcome o;
    rl_effects_forced++;
    if (w->held) {
        RedisModule_StopTimer(ctx, w->timer, NULL);
        held_outcome(ctx, w, &o);
    } else {
        enum write_state writes = write_state(ctx);
        if (writes == WRITES_REPLICA) o = (rl_outcome){.error = UNBLOCKED_REPLICA};
        else if (!decide_final(ctx, w, writes, &o)) o = (rl_outcome){.error = UNBLOCKED_PAUSED};
    }
    rl_effects_forced--;
    forget(w);
    waiter_free(w);
    settle(ctx);
    rl_send_outcome(ctx, &o);
    RedisModule_UnblockClient(bc, NULL);
    return REDISMODULE_OK;
}

/* A disconnect, or CLIENT UNBLOCK ... ERROR: the wait ends with nothing decided; the queues it leaves are
 * served by a timer (a client going away is no context to write in). */
static void disconnect_cb(RedisModuleCtx *ctx, RedisModuleBlockedClient *bc) {
    waiter *w = waiter_of(bc);
    if (!w) return;
    if (w->held) RedisModule_StopTimer(ctx, w->timer, NULL);
    forget(w);
    while (dirty_list) { /* each queue it left is served by an immediate timer */
        queue *q = dirty_list;
        dirty_list = q->next_dirty;
        q->dirty = 0;
        serve_soon(ctx, q);
    }
    waiter_free(w);
    RedisModule_UnblockClient(bc, NULL);
}

static void track(RedisModuleCtx *ctx, waiter *w) {
    w->bc = RedisModule_BlockClient(ctx, reply_cb, timeout_cb, free_cb, 0);
    RedisModule_SetDisconnectCallback(w->bc, disconnect_cb);
    if (!blocked) blocked = RedisModule_CreateDict(NULL);
    RedisModule_DictSetC(blocked, &w->bc, sizeof w->bc, w);
    rl_clients_waiting++;
}

/* --- WAIT ----------------------------------------------------------------------------------------------- */

int rl_can_block(RedisModuleCtx *ctx) {
    int flags = RedisModule_GetContextFlags(ctx);
    return !(flags & (REDISMODULE_CTX_FLAGS_MULTI | REDISMODULE_CTX_FLAGS_LUA | REDISMODULE_CTX_FLAGS_DENY_BLOCKING |
                      REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING));
}

static int fits_in(const rl_outcome *o, int64_t timeout_ms) {
    return !o->error && !o->allowed && o->retry_after_ms >= 0 && o->retry_after_ms <= timeout_ms;
}

static int enqueue(RedisModuleCtx *ctx, const rl_limiter *lim, RedisModuleString **argv, int argc, int64_t timeout_ms,
                   RedisModuleString **keys, int nkeys, rl_counters *stats, int64_t retry_after_ms) {
    waiter *w = waiter_new(ctx, lim, argv, argc, stats);
    track(ctx, w);
    w->deadline_ms = real_ms() + timeout_ms;
    for (int i = 0; i < nkeys; i++) push(w, queue_find(w->db, keys[i], 1));
    if (head_everywhere(w) && retry_after_ms >= 0) w->retry_at_us = rl_clock_now_us() + retry_after_ms * 1000;
    rl_waiters++;
    for (int i = 0; i < w->nq; i++) schedule(ctx, w->q[i]);
    return REDISMODULE_OK;
}

int rl_wait_call(RedisModuleCtx *ctx, const rl_limiter *lim, RedisModuleString **argv, int argc, int64_t timeout_ms,
                 uint32_t flags, RedisModuleString **keys, int nkeys, rl_counters *stats) {
    int db = RedisModule_GetSelectedDb(ctx), queued = 0;
    uint32_t dryrun = flags & RL_F_DRYRUN; /* DRYRUN, or a read-only form: it writes nothing, serves no one */
    if (rl_waiters && !dryrun) { /* the waiters that fit go first */
        rl_wait_serve_keys(ctx, keys, nkeys);
        for (int i = 0; i < nkeys && !queued; i++) queued = queue_find(db, keys[i], 0) != NULL;
    }
    int can_wait = timeout_ms > 0 && rl_can_block(ctx);
    rl_outcome o;
    if (can_wait && queued) { /* behind the waiters, if it can fit within its timeout at all */
        decide(ctx, &(waiter){.lim = lim, .argv = argv, .argc = argc}, RL_F_DRYRUN, -1, NULL, &o);
        if (!o.error && (o.allowed || fits_in(&o, timeout_ms)))
            return enqueue(ctx, lim, argv, argc, timeout_ms, keys, nkeys, stats, -1);
        if (o.error) stats->errors++;
        else stats->denied++; /* a denial writes nothing: its DRYRUN is the call */
        return rl_send_outcome(ctx, &o);
    }
    decide(ctx, &(waiter){.lim = lim, .argv = argv, .argc = argc}, dryrun, -1, stats, &o);
    if (queued && (flags & RL_F_REFUND) && !dryrun && !o.error) rl_wait_serve_keys(ctx, keys, nkeys); /* budget came back */
    if (can_wait && fits_in(&o, timeout_ms)) {
        stats->denied--; /* counted when it is answered */
        return enqueue(ctx, lim, argv, argc, timeout_ms, keys, nkeys, stats, o.retry_after_ms);
    }
    if (lim && !o.error && (flags & (RL_F_BLOCK | RL_F_DRYRUN)) == RL_F_BLOCK && o.allowed && o.replies[0].wait_ms > 0 &&
        rl_can_block(ctx))
        return rl_hold_reply(ctx, lim, argv, argc, &o.replies[0]);
    return rl_send_outcome(ctx, &o);
}

void rl_wait_serve_keys(RedisModuleCtx *ctx, RedisModuleString **keys, int nkeys) {
    if (!rl_waiters) return;
    int db = RedisModule_GetSelectedDb(ctx);
    for (int i = 0; i < nkeys; i++) {
        queue *q = queue_find(db, keys[i], 0);
        if (q) mark_dirty(q);
    }
    settle(ctx);
}

void rl_wait_clock_moved(RedisModuleCtx *ctx) {
    if (!queues) return;
    RedisModuleDictIter *it = RedisModule_DictIteratorStartC(queues, "^", NULL, 0);
    queue *q;
    while (RedisModule_DictNextC(it, NULL, (void **)&q)) serve_soon(ctx, q);
    RedisModule_DictIteratorStop(it);
}

/* --- BLOCK ---------------------------------------------------------------------------------------------- */

static void on_held_timer(RedisModuleCtx *ctx, void *data) {
    waiter *w = data;
    rl_outcome o;
    RedisModule_SelectDb(ctx, w->db);
    held_outcome(ctx, w, &o);
    answer(w, &o);
}

int rl_hold_reply(RedisModuleCtx *ctx, const rl_limiter *lim, RedisModuleString **argv, int argc,
                  const rl_reply *reply) {
    waiter *w = waiter_new(ctx, lim, argv, argc, NULL);
    w->held = 1;
    w->reply = *reply;
    track(ctx, w);
    w->timer = RedisModule_CreateTimer(ctx, reply->wait_ms, on_held_timer, w);
    return REDISMODULE_OK;
}
