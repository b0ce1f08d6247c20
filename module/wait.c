/* wait.c -- server-side waiting: WAIT timeout_ms (RL.TOKEN, RL.WINDOW, RL.ACQUIRE, RL.ALL), with no polling.
 *
 * A request that is denied, but would fit within timeout_ms if nothing else happened (its
 * retry_after_ms is at most the timeout), blocks its client as BLPOP does. A concurrency limit's denial
 * waits whatever its retry (the time its leases expire): a release can end it any moment, and RL.RELEASE
 * serves the key's queue at once (rl_outcome's wait_retry_ms says so). The waiters on one key form a
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
 * A waiter holds its parsed call (rl_module.h), never its arguments: it is decided again by rl_call_decide as
 * any call, and answered through answer.c, which counts it once, when it is answered. BLOCK's held replies
 * are answer.c's. The clock tells this file that it moved through a hook (rl_clock_on_move), so nothing
 * below the commands calls back up into them. */
#include <string.h>

#include "clock.h"
#include "answer.h"
#include "rl_module.h"
#include "evict.h"

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

/* A client waiting with WAIT, in the queue of each of its call's keys. */
struct waiter {
    RedisModuleBlockedClient *bc;
    int db;
    rl_call *call; /* kept: its keys retained */
    int nq;
    queue *q[RL_ALL_MAX_LIMITS];
    place at[RL_ALL_MAX_LIMITS];
    int64_t deadline_ms;  /* real ms */
    int64_t retry_at_us;  /* module clock: when the last decision as head said it fits; -1 unknown */
};

static RedisModuleDict *queues;  /* name -> queue */
static RedisModuleDict *blocked; /* the RedisModuleBlockedClient pointer's bytes -> waiter */
static queue *dirty_list;
static RedisModuleTimerID hold_timer;
static int hold_timer_on;

#define HOLD_POLL_MS 10
#define UNBLOCKED_REPLICA "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"
#define UNBLOCKED_PAUSED "UNBLOCKED writes are paused: the request was neither admitted nor denied"

static int64_t real_ms(void) { return (int64_t)RedisModule_Milliseconds(); }

/* --- waiters and queues --------------------------------------------------------------------------------- */

static waiter *waiter_new(RedisModuleCtx *ctx, const rl_call *call) {
    waiter *w = RedisModule_Calloc(1, sizeof *w);
    w->db = RedisModule_GetSelectedDb(ctx);
    w->call = rl_call_keep(call);
    w->retry_at_us = -1;
    return w;
}

static void waiter_free(waiter *w) {
    rl_call_free(w->call);
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

/* Decide w's call now; look_flags RL_F_DRYRUN to look only. */
static void decide(RedisModuleCtx *ctx, waiter *w, uint32_t look_flags, rl_outcome *o) {
    rl_call_decide(ctx, w->call, look_flags, -1, o);
}

/* Leave the module's books: no longer waiting. */
static void forget(waiter *w) {
    RedisModule_DictDelC(blocked, &w->bc, sizeof w->bc, NULL);
    unlink_waiter(w);
    rl_waiters--;
}

/* Unblock w with o as its reply (answer.c counts and sends it). */
static void answer(waiter *w, const rl_outcome *o) {
    forget(w);
    rl_answer_blocked(w->bc, w->call, o);
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
static int decide_final(RedisModuleCtx *ctx, waiter *w, enum write_state writes, rl_outcome *o) {
    if (writes == WRITES_OK) {
        decide(ctx, w, 0, o);
        return 1;
    }
    decide(ctx, w, RL_F_DRYRUN, o); /* answered as the call it stands for: a denial writes nothing */
    if (!o->error && o->allowed) {
        if (writes != WRITES_OOM) return 0;
        o->error = RL_OOM_ERROR;
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
        decide(ctx, w, RL_F_DRYRUN, &o);
        if (!o.error && !o.allowed) {
            w->retry_at_us = o.retry_after_ms >= 0 ? rl_clock_now_us() + o.retry_after_ms * 1000 : -1;
            return;
        }
        if (!o.error) decide(ctx, w, 0, &o); /* the same decision, written */
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

/* CLIENT UNBLOCK (TIMEOUT): a waiter's final answer. Redis then unblocks the client, and the handle is ours
 * to release (UnblockClient: no reply callback then, the client is gone from it). */
static int timeout_cb(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModuleBlockedClient *bc = RedisModule_GetBlockedClientHandle(ctx);
    waiter *w = waiter_of(bc);
    if (!w) return RedisModule_ReplyWithNull(ctx);
    rl_outcome o;
    rl_effects_forced++;
    enum write_state writes = write_state(ctx);
    if (writes == WRITES_REPLICA) o = (rl_outcome){.error = UNBLOCKED_REPLICA};
    else if (!decide_final(ctx, w, writes, &o)) o = (rl_outcome){.error = UNBLOCKED_PAUSED};
    rl_effects_forced--;
    forget(w);
    rl_answer_unblocked(ctx, w->call, &o);
    waiter_free(w);
    settle(ctx);
    RedisModule_UnblockClient(bc, NULL);
    return REDISMODULE_OK;
}

/* A disconnect, or CLIENT UNBLOCK ... ERROR: the wait ends with nothing decided; the queues it leaves are
 * served by a timer (a client going away is no context to write in). */
static void disconnect_cb(RedisModuleCtx *ctx, RedisModuleBlockedClient *bc) {
    waiter *w = waiter_of(bc);
    if (!w) return;
    forget(w);
    rl_answer_gone(w->call);
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
    w->bc = rl_answer_block(ctx, timeout_cb);
    RedisModule_SetDisconnectCallback(w->bc, disconnect_cb);
    if (!blocked) blocked = RedisModule_CreateDict(NULL);
    RedisModule_DictSetC(blocked, &w->bc, sizeof w->bc, w);
}

/* --- WAIT ----------------------------------------------------------------------------------------------- */

static int fits_in(const rl_outcome *o, int64_t timeout_ms) {
    return !o->error && !o->allowed && o->wait_retry_ms >= 0 && o->wait_retry_ms <= timeout_ms;
}

static int enqueue(RedisModuleCtx *ctx, const rl_call *call, int64_t timeout_ms, int64_t retry_after_ms) {
    waiter *w = waiter_new(ctx, call);
    track(ctx, w);
    w->deadline_ms = real_ms() + timeout_ms;
    /* One place per queue: an RL.CHECK's clauses (its policy's limits) share one key. */
    for (int i = 0; i < call->n; i++) {
        queue *q = queue_find(w->db, call->clause[i].key, 1);
        int held = 0;
        for (int k = 0; k < w->nq; k++) held |= w->q[k] == q;
        if (!held) push(w, q);
    }
    if (head_everywhere(w) && retry_after_ms >= 0) w->retry_at_us = rl_clock_now_us() + retry_after_ms * 1000;
    rl_waiters++;
    for (int i = 0; i < w->nq; i++) schedule(ctx, w->q[i]);
    return REDISMODULE_OK;
}

/* 1 when a queue stands on one of call's keys (in the selected database). */
static int has_queue(RedisModuleCtx *ctx, const rl_call *call) {
    int db = RedisModule_GetSelectedDb(ctx);
    for (int i = 0; i < call->n; i++)
        if (queue_find(db, call->clause[i].key, 0)) return 1;
    return 0;
}

static void serve_keys_of(RedisModuleCtx *ctx, const rl_call *call) {
    RedisModuleString *keys[RL_ALL_MAX_LIMITS];
    for (int i = 0; i < call->n; i++) keys[i] = call->clause[i].key;
    rl_wait_serve_keys(ctx, keys, call->policy ? 1 : call->n); /* (a policy's clauses: one key) */
}

/* 1 when a clause of call has LOCKOUT: its denial writes a lock. */
static int calls_lockout(const rl_call *call) {
    for (int i = 0; i < call->n; i++)
        if (call->clause[i].req.flags & RL_F_LOCKOUT) return 1;
    return 0;
}

int rl_wait_run(RedisModuleCtx *ctx, rl_call *call) {
    int dryrun = (call->flags & RL_F_DRYRUN) != 0; /* DRYRUN, or a read-only form: writes nothing, serves no one */
    int queued = 0;
    if (rl_waiters && !dryrun) { /* the waiters that fit go first */
        serve_keys_of(ctx, call);
        queued = has_queue(ctx, call);
    }
    int64_t timeout_ms = (call->flags & (RL_F_WAIT | RL_F_DRYRUN)) == RL_F_WAIT ? call->wait_timeout_ms : 0;
    int can_wait = timeout_ms > 0 && rl_can_block(ctx);
    rl_outcome o;
    if (can_wait && queued) { /* behind the waiters, if it can fit within its timeout at all */
        rl_call_decide(ctx, call, RL_F_DRYRUN, -1, &o);
        if (!o.error && (o.allowed || fits_in(&o, timeout_ms))) return enqueue(ctx, call, timeout_ms, -1);
        /* A denial writes nothing, so its DRYRUN is the call; but the lock a LOCKOUT denial starts, which the
         * real decision writes (the same denial: nothing changed in between). */
        if (!o.error && calls_lockout(call)) rl_call_decide(ctx, call, 0, -1, &o);
        return rl_answer(ctx, call, &o);
    }
    rl_call_decide(ctx, call, 0, -1, &o);
    if (queued && (call->flags & RL_F_REFUND) && !o.error) serve_keys_of(ctx, call); /* budget came back */
    if (can_wait && fits_in(&o, timeout_ms)) return enqueue(ctx, call, timeout_ms, o.retry_after_ms);
    return rl_answer(ctx, call, &o);
}

void rl_wait_serve_keys(RedisModuleCtx *ctx, RedisModuleString *const *keys, int nkeys) {
    if (!rl_waiters) return;
    int db = RedisModule_GetSelectedDb(ctx);
    for (int i = 0; i < nkeys; i++) {
        queue *q = queue_find(db, keys[i], 0);
        if (q) mark_dirty(q);
    }
    settle(ctx);
}

/* The module's clock was set or moved (RL.CLOCK): every waiter may fit now. */
static void clock_moved(RedisModuleCtx *ctx) {
    if (!queues) return;
    RedisModuleDictIter *it = RedisModule_DictIteratorStartC(queues, "^", NULL, 0);
    queue *q;
    while (RedisModule_DictNextC(it, NULL, (void **)&q)) serve_soon(ctx, q);
    RedisModule_DictIteratorStop(it);
}

void rl_wait_init(void) { rl_clock_on_move(clock_moved); }
