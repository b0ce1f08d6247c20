/* call.c -- the one decision of every limiter command: a call of 1 to RL_ALL_MAX_LIMITS clauses, each a
 * limiter with its key and request (rl_module.h), decided as one step.
 *
 * Splitting deciding from writing is what makes a call of several limits all or nothing: every clause is
 * prepared (its key read and its request decided, nothing written), then the effects are committed, or none
 * is, and every key is released. A single-key command is a call of one clause, so the same few lines decide
 * RL.TOKEN, RL.TOKEN_RO, RL.ALL and RL.ALL_RO, now or later for a client that waits (wait.c). The outcome is
 * what everything after the decision reads: the reply, the counters (units taken, keys made) and the waiting
 * code (the verdict and the retry).
 *
 * RL.ALL denied: nothing is written but the locks its denying clauses start (LOCKOUT), a sliding log does not log the attempt, and each clause is prepared
 * again as a DRYRUN that logs nothing, so that its reply describes it as it stands: whether it alone would
 * admit (its COST 0 reply), what remains, and when it alone would admit. The call's retry_after_ms is then
 * the largest of the denying clauses' (each only relaxes as time passes), or -1 if one never can.
 *
 * Only a commit touches a key, so only a commit signals it (WATCH, client-side caching) and fires the
 * keyspace event "<command>" in the module class (`d`): the module loads with implicit signalling off,
 * since Redis would otherwise signal every key opened for writing, denied requests included. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "rl_module.h"
#include "evict.h"

static void commit(RedisModuleCtx *ctx, rl_pending *p) {
    p->lim->steps->commit(ctx, p);
    if (p->lim->steps == &rl_bundle_steps) return; /* a policy's limits share a key: signalled once, by finish */
    rl_lfu_keep(p->key); /* (the policy's key: by finish) */
    RedisModule_SignalModifiedKey(ctx, p->keyname);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, p->lim->syntax->name, p->keyname);
}

/* A denied RL.ALL's description of clause p: released, then prepared again as a DRYRUN that logs nothing; a
 * clause that alone would admit is shown with nothing consumed (its reply to COST 0), one that denies with
 * its retry for this request. */
static void describe_unwritten(RedisModuleCtx *ctx, rl_pending *p, rl_request *req) {
    int alone = (int)p->reply.allowed;
    p->lim->steps->release(ctx, p);
    req->flags |= RL_F_DRYRUN | RL_F_NOLOG;
    if (alone) req->cost = 0;
    *p = (rl_pending){.lim = p->lim, .req = req, .keyname = p->keyname, .id = p->id};
    char err[RL_ERR_LEN];
    p->lim->steps->prepare(ctx, p, err); /* it succeeded on this key a moment ago */
    p->reply.wait_ms = 0;                 /* nothing was admitted, so nothing waits */
    if (alone) {
        p->reply.allowed = 1;
        p->reply.retry_after_ms = -1;
    }
}

/* The lease a concurrency limit's reply carries: the id of the lease it took or renewed, nil when it wrote
 * nothing (a denial, DRYRUN, a look). Sets bit i of o->leased; other limits carry none. */
static void lease_of(rl_outcome *o, int i, const rl_pending *p, int written) {
    o->leased |= 1u << i;
    const rl_lease_plan *plan = &p->u.lease.plan;
    o->lease[i].len = written && plan->action != RL_LEASE_KEEP ? plan->id_len : 0;
    if (o->lease[i].len) memcpy(o->lease[i].id, plan->id, plan->id_len);
}

/* How long a denied clause's wait may last before only time ends it (rl_outcome's wait_retry_ms): its retry,
 * but 0 for a concurrency limit whose request can fit (a release may come any moment), unless its key's lock
 * denied it (only time ends a lock, or RL.UNBLOCK, which serves the waiters itself). */
static int is_lease_limit(const rl_limiter *lim) { return lim->tag == RL_TAG_CONCURRENCY; }

static int64_t wait_retry(const rl_pending *p) {
    if (is_lease_limit(p->lim) && p->reply.retry_after_ms >= 0 && !p->locked) return 0;
    return p->reply.retry_after_ms;
}

/* RL.ALL's answer: the verdict, the largest retry of the denying clauses (-1 if one never admits), the
 * largest reset, and every clause's reply. */
static void fill_all(rl_outcome *o, const rl_pending *p, int n) {
    o->retry_after_ms = o->wait_retry_ms = -1;
    o->reset_after_ms = 0;
    int never = 0;
    for (int i = 0; i < n; i++) {
        const rl_reply *r = &p[i].reply;
        o->replies[i] = *r;
        if (r->reset_after_ms > o->reset_after_ms) o->reset_after_ms = r->reset_after_ms;
        if (o->allowed || r->allowed) continue;
        if (r->retry_after_ms < 0) never = 1;
        else if (r->retry_after_ms > o->retry_after_ms) o->retry_after_ms = r->retry_after_ms;
        int64_t wait = wait_retry(&p[i]);
        if (wait > o->wait_retry_ms) o->wait_retry_ms = wait;
    }
    if (never) o->retry_after_ms = o->wait_retry_ms = -1;
}

/* Whether committing the prepared clauses writes anything: an admitted call's clauses that change their
 * key, a denied RL.ALL's locks that start (a LOCKOUT denial), nothing for a DRYRUN. Past maxmemory such a
 * call is refused whole (rl_write_refused), before any clause is committed. */
static int would_write(const rl_call *call, const rl_pending *p, int n, int allowed) {
    for (int i = 0; i < n; i++) {
        if (p[i].req->flags & RL_F_DRYRUN) continue;
        if (call->all && !allowed ? p[i].lock_starts : p[i].changes) return 1;
    }
    return 0;
}

/* Past maxmemory, a call of one clause that would write: a denial is decided again as one that logs nothing
 * (a sliding log logs a denied attempt, and its value would grow), and is answered so when that writes
 * nothing; anything else (an admission, a denial that starts a lock or trims a log) is refused whole.
 * Returns 1 when p now holds that denial, decided on the same key at the same instant, which writes nothing;
 * 0 for the OOM error. req is p's request (the call's own). Off the hot path: only a write past maxmemory comes here. */
static __attribute__((noinline)) int quiet_denial(RedisModuleCtx *ctx, rl_pending *p, rl_request *req) {
    if (p->reply.allowed) return 0;
    uint32_t flags = req->flags; /* the call's own, restored: a waiter decides again later */
    p->lim->steps->release(ctx, p);
    *p = (rl_pending){.lim = p->lim, .req = req, .keyname = p->keyname, .id = p->id};
    req->flags |= RL_F_NOLOG;
    char err[RL_ERR_LEN];
    const char *failed = p->lim->steps->prepare(ctx, p, err);
    req->flags = flags;
    return !failed && !p->changes && !p->reply.allowed;
}

/* A call of one clause as it came (no look, no cost of its own): the same steps, with nothing to copy or
 * describe; most calls are this one, so it is written out (rl_call_decide, rl_module.h, picks it). */
void rl_call_decide_one(RedisModuleCtx *ctx, rl_call *call, rl_outcome *o) {
    rl_clause *c = &call->clause[0];
    rl_pending p;
    c->req.now_us = rl_clock_now_us();
    p.lim = c->lim;
    p.req = &c->req;
    p.keyname = c->key;
    p.id = c->id;
    p.key = NULL;
    p.changes = p.creates = 0;
    p.locked = p.lock_starts = 0;
    o->error = c->lim->steps->prepare(ctx, &p, o->errbuf);
    int real = !(c->req.flags & RL_F_DRYRUN), written = !o->error && p.changes && real;
    if (written && __builtin_expect(rl_write_refused(ctx), 0)) { /* past maxmemory */
        written = 0;
        if (!quiet_denial(ctx, &p, &c->req)) o->error = RL_OOM_ERROR;
    }
    if (written) commit(ctx, &p);
    c->lim->steps->release(ctx, &p);
    if (o->error) return;
    o->all = 0;
    o->with_granted = (call->flags & RL_F_ATMOST) != 0;
    o->n = 1;
    o->allowed = p.reply.allowed;
    o->retry_after_ms = p.reply.retry_after_ms; /* (reset_after_ms is RL.ALL's: one reply has its own) */
    o->units = real ? p.reply.granted : 0;      /* a denial grants none, nor does a refund */
    o->keys_created = written & p.creates;
    o->replies[0] = p.reply;
    o->leased = 0;
    o->locked = p.locked;
    o->wait_retry_ms = p.reply.retry_after_ms;
    if (c->lim->steps == &rl_lease_steps) {
        lease_of(o, 0, &p, written);
        o->wait_retry_ms = wait_retry(&p);
    }
}

void rl_call_decide_any(RedisModuleCtx *ctx, rl_call *call, uint32_t look_flags, int64_t cost, rl_outcome *o) {
    /* Only what prepare does not always set: the effect is filled by prepare (no memset on the hot path). */
    rl_pending p[RL_ALL_MAX_LIMITS];
    rl_request looked[RL_ALL_MAX_LIMITS]; /* the requests as this decision sees them, when it changes them */
    int64_t now_us = rl_clock_now_us();
    const char *failed = NULL;
    if (__builtin_expect(call->policy != NULL, 0) && !call->policy->current) { /* a waiter's, replaced since */
        failed = rl_policy_refresh(call, o->errbuf);
        if (failed) {
            o->error = failed;
            return;
        }
    }
    int n = call->n, prepared = 0, allowed = 1;
    for (; prepared < n && !failed; prepared++) {
        rl_clause *c = &call->clause[prepared];
        rl_request *req = &c->req;
        req->now_us = now_us;
        if (look_flags || cost >= 0 || call->all) { /* a copy to change (RL.ALL may describe it) */
            looked[prepared] = *req;
            req = &looked[prepared];
            req->flags |= look_flags;
            if (cost >= 0) req->cost = cost;
        }
        rl_pending *q = &p[prepared];
        q->lim = c->lim;
        q->req = req;
        q->keyname = c->key;
        q->id = c->id;
        q->key = NULL;
        q->changes = q->creates = 0;
        q->locked = q->lock_starts = 0;
        failed = c->lim->steps->prepare(ctx, q, o->errbuf);
        if (failed == o->errbuf && call->all) rl_name_clause(o->errbuf, prepared);
        allowed &= (int)q->reply.allowed;
    }
    o->units = o->keys_created = 0;
    o->leased = 0;
    o->locked = 0;
    if (!failed && would_write(call, p, n, allowed) && rl_write_refused(ctx)) failed = RL_OOM_ERROR;
    if (!failed) {
        for (int i = 0; i < n; i++) {
            int written = 0;
            o->locked |= p[i].locked;
            if (call->all && !allowed) {
                int starts = p[i].lock_starts && !(p[i].req->flags & RL_F_DRYRUN);
                rl_lock lock = p[i].lock;
                describe_unwritten(ctx, &p[i], &looked[i]);
                if (starts) p[i].lim->steps->lock_start(ctx, &p[i], &lock, now_us); /* the lock alone */
            } else if (p[i].changes && !(p[i].req->flags & RL_F_DRYRUN)) {
                commit(ctx, &p[i]);
                o->keys_created += p[i].creates;
                written = 1;
            }
            if (allowed && !(p[i].req->flags & RL_F_DRYRUN)) o->units += p[i].reply.granted; /* a refund: none */
            if (is_lease_limit(p[i].lim)) lease_of(o, i, &p[i], written); /* (a policy's too: same tag) */
        }
        if (__builtin_expect(call->policy != NULL, 0)) rl_bundle_steps.finish(ctx, &p[0]); /* its one write */
    }
    for (int i = 0; i < prepared; i++) p[i].lim->steps->release(ctx, &p[i]);
    o->error = failed;
    if (failed) return;
    o->all = call->all;
    o->with_granted = (call->flags & RL_F_ATMOST) != 0;
    o->n = n;
    o->allowed = allowed;
    if (call->all) {
        fill_all(o, p, n);
        o->named = 0;
        if (__builtin_expect(call->policy != NULL, 0)) rl_policy_name_replies(call->policy, o);
    } else {
        o->replies[0] = p[0].reply;
        o->retry_after_ms = p[0].reply.retry_after_ms;
        o->reset_after_ms = p[0].reply.reset_after_ms;
        o->wait_retry_ms = wait_retry(&p[0]);
    }
}

rl_call *rl_call_keep(const rl_call *call) {
    /* A policy's call has room for every clause: its policy may be replaced by one of more limits meanwhile. */
    size_t room = offsetof(rl_call, clause) + (size_t)(call->policy ? RL_ALL_MAX_LIMITS : call->n) * sizeof call->clause[0];
    size_t size = offsetof(rl_call, clause) + (size_t)call->n * sizeof call->clause[0];
    rl_call *kept = RedisModule_Alloc(room);
    memcpy(kept, call, size);
    if (kept->policy) rl_policy_hold(kept->policy);
    for (int i = 0; i < call->n; i++) {
        RedisModule_RetainString(NULL, kept->clause[i].key);
        if (kept->clause[i].id) RedisModule_RetainString(NULL, kept->clause[i].id);
    }
    return kept;
}

void rl_call_free(rl_call *call) {
    if (call->policy) rl_policy_drop(call->policy);
    for (int i = 0; i < call->n; i++) {
        RedisModule_FreeString(NULL, call->clause[i].key);
        if (call->clause[i].id) RedisModule_FreeString(NULL, call->clause[i].id);
    }
    RedisModule_Free(call);
}
