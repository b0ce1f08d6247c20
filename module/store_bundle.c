/* store_bundle.c -- the steps of a policy's limits (RL.CHECK policy key): every limit's state in one key, the
 * value of the rl-checks type (bundle_type.c).
 *
 * RL.CHECK is a call of one clause per limit of its policy (policy.c), all on the same key, decided by
 * call.c as RL.ALL's clauses are: each prepared (nothing written), then every one committed or none. The
 * clauses share the key: the first prepare opens it and reads every limit's entry (one open key per call:
 * Redis runs one command at a time, and a decision never yields), each prepare decides its limit on its
 * entry's state and keeps the entry it would leave, a commit makes that entry the limit's, and finish, once
 * per call after the commits, writes the value whole, replicates it and signals the key once; the last
 * release closes it and frees what the call made.
 *
 * Two kinds of limits. A cell limiter's entry is its cell's words, decided by its algorithm as the cell
 * storage decides (store_cell.c). A sliding log's entry is its log in an array, newest first (at_us, weight),
 * which algorithms/slidinglog.c decides over directly and whose plan this file applies: the newest `drop`
 * units go, the next `keep` stay, older ones and those out of the window go, `add` units are logged at now
 * (an attempt in the future, after the clock went back, counts as now, and is written so). A sliding log holds
 * at most limit + 1 units; a policy's log is written whole with every change, so its cost grows with the limit
 * (docs/policies.md). A concurrency limit's entry is its leases (lease_type.c's value, without its lock: the
 * entry has its own record), decided by algorithms/concurrency.c and its plan applied to a copy; a lease made
 * here has a made id, which the reply carries (call.c's lease_of reads the plan in the pending), and RL.RELEASE
 * and RL.RENEW find it by its id among the key's leases (rl_bundle_lease_edit). Around each, a lock record,
 * through algorithms/lockout.c as the storages do.
 *
 * A limit's entry is matched by its name and kind. When the policy was replaced (RL.POLICY SET) since the
 * key's last write, a limit that kept both finds its state and decides on it under its new parameters, as a
 * single command reads a state after a change of parameters; a new limit, or one whose kind changed, starts
 * fresh; an entry of a limit the policy no longer has is dropped at the key's next write. An entry is also
 * dropped once it says nothing (its state idle, its lock record over): the key expires with its last
 * entry. */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "compat.h"
#include "rl_module.h"
#include "evict.h"

/* An entry's instants are the limiters' clock's ms (the test clock's, when frozen), the key's expiry the
 * server's: rl_clock_expire_at_ms converts, when the key is written. */
static int64_t idle_at_ms(int64_t now_us, int64_t reset_after_us) { return (now_us + reset_after_us + 999) / 1000; }

/* A limit's entry in the open key: what the key held for it (in), what a prepare would leave (next), what the
 * call leaves (out). A log is the key's value's (in: borrowed) or made by this call (own: freed unless the
 * value takes it). */
typedef struct bundle_slot {
    int found, has_rec, written, own;
    unsigned words;
    rl_lock_rec rec;
    int64_t expire_ms;
    int64_t nlog;
    rl_slog_entry *log;
    rl_lease_value *leases; /* (own: a log or leases, never both) */
    rl_cell cell;           /* (last: a slot is cleared and copied up to it, and its words in use) */
} bundle_slot;

static struct {
    int refs;             /* clauses prepared and not yet released */
    RedisModuleKey *key;
    rl_bundle *stored;    /* the key's value, NULL when it had none */
    int in_at[RL_ALL_MAX_LIMITS]; /* where limit i's entry is in the stored value, -1 for none */
    int dirty;            /* a commit changed an entry: finish writes */
    int counted_create;   /* a clause's commit counted the key's creation */
    bundle_slot in[RL_ALL_MAX_LIMITS], next[RL_ALL_MAX_LIMITS], out[RL_ALL_MAX_LIMITS];
} open_key;

static const rl_policy_limit *limit_of(const rl_pending *p) { return (const rl_policy_limit *)p->lim; }
static int is_log(const rl_policy_limit *pl) { return pl->row == &rl_limiters[RL_LIM_SLIDINGLOG]; }
static int is_lease(const rl_policy_limit *pl) { return pl->row == &rl_limiters[RL_LIM_CONCURRENCY]; }

static void slot_clear(bundle_slot *s) {
    if (s->own) {
        RedisModule_Free(s->log);
        if (s->leases) rl_lease_value_free(s->leases);
    }
    memset(s, 0, offsetof(bundle_slot, cell));
}

/* A slot as another (its log or leases shared, owned by the copy when the original owned them). */
static void slot_copy(bundle_slot *to, const bundle_slot *from) {
    memcpy(to, from, offsetof(bundle_slot, cell));
    memcpy(to->cell.w, from->cell.w, 8 * (size_t)from->words);
}

/* The errors of this storage, written whole: a limit's names it by its name (call.c prefixes only the errors
 * left in the call's own buffer, with the clause's number alone), the key's is the key's. */
static char failure[RL_ERR_LEN];

static const char *limit_failed(const rl_pending *p, const char *err) {
    const rl_policy_limit *pl = limit_of(p);
    snprintf(failure, sizeof failure, "ERR LIMIT %d (%s): %s", pl->index + 1, pl->name,
             strncmp(err, "ERR ", 4) == 0 ? err + 4 : err);
    return failure;
}

/* The first prepare of a call: open the key and find each limit's entry. NULL, or the error. */
static const char *bundle_open(RedisModuleCtx *ctx, const rl_pending *p) {
    const rl_policy *policy = limit_of(p)->policy;
    /* Read-only for a call's own DRYRUN; a denied call's description (call.c: DRYRUN with NOLOG) opens the key as
     * the call did, since its limits' lock starts are written after it. */
    int dryrun = (p->req->flags & (RL_F_DRYRUN | RL_F_NOLOG)) == RL_F_DRYRUN;
    open_key.key = RedisModule_OpenKey(ctx, p->keyname, dryrun ? rl_compat_read_mode() : REDISMODULE_READ | REDISMODULE_WRITE);
    open_key.stored = NULL;
    open_key.dirty = open_key.counted_create = 0;
    for (int i = 0; i < policy->n; i++) {
        slot_clear(&open_key.in[i]);
        open_key.in_at[i] = -1;
    }
    if (RedisModule_KeyType(open_key.key) == REDISMODULE_KEYTYPE_EMPTY) return NULL;
    if (!rl_bundle_type_is(open_key.key)) return REDISMODULE_ERRORMSG_WRONGTYPE;
    rl_bundle *b = RedisModule_ModuleTypeGetValue(open_key.key);
    if (b->policy_len != policy->name_len || memcmp(b->policy, policy->name, policy->name_len) != 0) {
        snprintf(failure, sizeof failure, "ERR key was checked under policy '%.*s', not '%s'", (int)b->policy_len,
                 b->policy, policy->name);
        return failure;
    }
    open_key.stored = b;
    int64_t now_us = p->req->now_us;
    for (int i = 0; i < policy->n; i++) {
        const rl_policy_limit *pl = &policy->limit[i];
        for (int k = 0; k < b->n; k++) {
            const rl_bundle_entry *e = &b->e[k];
            if (e->tag != pl->row->tag || e->name_len != pl->name_len || memcmp(e->name, pl->name, pl->name_len) != 0)
                continue;
            if (e->expire_ms * 1000 <= now_us) break; /* it says nothing any more: the limit is new */
            bundle_slot *s = &open_key.in[i];
            open_key.in_at[i] = k;
            s->found = 1;
            s->words = e->words;
            s->has_rec = e->has_rec;
            s->rec = e->rec;
            s->expire_ms = e->expire_ms;
            if (e->words) memcpy(s->cell.w, e->w, 8 * (size_t)e->words);
            s->nlog = e->nlog;
            s->log = e->log;
            s->leases = e->leases;
            break;
        }
    }
    return NULL;
}

/* --- a limit's decision on its state -------------------------------------------------------------------- */

/* A cell limiter's decision on the state in (a copy), into *next's words. */
static void decide_cell(const rl_pending *p, const rl_request *req, const bundle_slot *in, bundle_slot *next,
                        rl_reply *reply) {
    const rl_algorithm *alg = limit_of(p)->row->alg;
    memcpy(next->cell.w, in->cell.w, 8 * (size_t)in->words);
    if (!in->words) next->cell.w[0] = next->cell.w[1] = 0;
    alg->decide(req, &next->cell, in->words > 0, reply);
    next->words = alg->words(&next->cell);
}

/* The log a sliding log's plan leaves: a new array (own), newest first. */
static void apply_log(const bundle_slot *in, const rl_slog_plan *plan, int64_t now_us, int64_t window_us,
                      bundle_slot *next) {
    rl_slog_entry *log = RedisModule_Alloc(sizeof *log * (size_t)(in->nlog + 1));
    int64_t n = 0, drop = plan->drop, keep = plan->keep, edge = now_us - window_us;
    if (plan->add > 0) log[n++] = (rl_slog_entry){plan->at_us, plan->add};
    for (int64_t i = 0; i < in->nlog && keep > 0; i++) {
        rl_slog_entry e = in->log[i];
        if (e.at_us > now_us) e.at_us = now_us; /* the future counts as now */
        if (e.at_us <= edge) break;              /* newest first: every older one is out too */
        int64_t dropped = drop < e.weight ? drop : e.weight;
        e.weight -= dropped;
        drop -= dropped;
        if (e.weight == 0) continue;
        if (e.weight > keep) e.weight = keep;
        keep -= e.weight;
        if (n > 0 && log[n - 1].at_us == e.at_us) log[n - 1].weight += e.weight;
        else log[n++] = e;
    }
    next->log = log;
    next->nlog = n;
    next->own = 1;
}

/* A sliding log's decision on the log in; with its plan applied into *next when apply. */
static void decide_log(const rl_request *req, const bundle_slot *in, bundle_slot *next, rl_reply *reply, int apply) {
    rl_slog_plan plan;
    rl_slog_decide(req, in->log, (size_t)in->nlog, &plan, reply);
    if (apply) apply_log(in, &plan, req->now_us, req->params[1] * 1000, next);
}

/* A concurrency limit's decision on the leases in, its plan kept in p (the reply's lease: call.c); applied to a
 * copy into *next when apply (in's own leases otherwise, when it writes nothing). */
static void decide_lease(rl_pending *p, const rl_request *req, const bundle_slot *in, bundle_slot *next,
                         rl_reply *reply, int apply) {
    rl_lease_plan *plan = &p->u.lease.plan;
    const rl_lease_value *held = in->leases;
    rl_lease_decide(req, held ? held->v : NULL, held ? held->n : 0, NULL, 0, rl_lease_next_id(), plan, reply);
    if (!apply) return;
    if (plan->action == RL_LEASE_KEEP) {
        next->leases = in->leases; /* borrowed: written as it is */
        return;
    }
    next->leases = rl_lease_apply(held ? rl_lease_value_copy(held) : NULL, plan, req->now_us);
    next->own = 1;
    /* A made id is never made again (a call that then denies skips a number: no harm). */
    if (plan->made && !(req->flags & RL_F_DRYRUN)) rl_lease_id_taken();
}

static void decide(rl_pending *p, const rl_request *req, const bundle_slot *in, bundle_slot *next, rl_reply *reply,
                   int apply) {
    if (is_log(limit_of(p))) decide_log(req, in, next, reply, apply);
    else if (is_lease(limit_of(p))) decide_lease(p, req, in, next, reply, apply);
    else decide_cell(p, req, in, next, reply);
}

/* The limit's lock holds: its reply is the lock's denial (the limit decides only for the retry, and the state
 * as it stands for the reset), and nothing changes. */
static void prepare_locked(rl_pending *p, const bundle_slot *in) {
    bundle_slot scratch = {0};
    rl_request asked = *p->req, look = rl_lock_look(p->req);
    asked.flags |= RL_F_NOLOG;
    rl_reply as_is;
    decide(p, &asked, in, &scratch, &p->reply, 0);
    decide(p, &look, in, &scratch, &as_is, 0);
    p->reply.reset_after_us = as_is.reset_after_us;
    p->reply.reset_after_ms = as_is.reset_after_ms;
    rl_lock_deny(&in->rec.lock, p->req->now_us, &p->reply);
    p->locked = 1;
    p->changes = 0;
}

static int same_leases(const rl_lease_value *a, const rl_lease_value *b) {
    int na = a ? a->n : 0, nb = b ? b->n : 0;
    if (na != nb) return 0;
    for (int i = 0; i < na; i++) {
        const rl_lease *x = &a->v[i], *y = &b->v[i];
        if (x->end_us != y->end_us || x->acquired_us != y->acquired_us || x->units != y->units ||
            x->id_len != y->id_len || memcmp(rl_lease_id(x), rl_lease_id(y), x->id_len) != 0)
            return 0;
    }
    return 1;
}

static int same_entry(const bundle_slot *a, const bundle_slot *b) {
    if (a->found != b->found || a->words != b->words || a->has_rec != b->has_rec || a->expire_ms != b->expire_ms ||
        a->nlog != b->nlog || !same_leases(a->leases, b->leases))
        return 0;
    if (a->has_rec && memcmp(&a->rec, &b->rec, sizeof a->rec) != 0) return 0;
    if (a->nlog && memcmp(a->log, b->log, sizeof *a->log * (size_t)a->nlog) != 0) return 0;
    return memcmp(a->cell.w, b->cell.w, 8 * (size_t)a->words) == 0;
}

static const char *bundle_prepare(RedisModuleCtx *ctx, rl_pending *p, char err[RL_ERR_LEN]) {
    const rl_policy_limit *pl = limit_of(p);
    if (open_key.refs++ == 0) {
        const char *failed = bundle_open(ctx, p);
        if (failed) return failed;
    }
    const rl_algorithm *alg = pl->row->alg;
    if (alg && alg->validate(p->req, err) != 0) return limit_failed(p, err);
    if ((p->req->flags & RL_LOCK_FLAGS) && rl_lockout_validate(p->req, err) != 0) return limit_failed(p, err);
    const bundle_slot *in = &open_key.in[pl->index];
    bundle_slot *next = &open_key.next[pl->index];
    slot_clear(next);
    int64_t now_us = p->req->now_us;
    p->creates = open_key.stored == NULL;
    if (in->has_rec && rl_lock_holds(&in->rec.lock, now_us)) {
        prepare_locked(p, in);
        return NULL;
    }
    decide(p, p->req, in, next, &p->reply, 1);
    int64_t state_expire_ms = p->reply.reset_after_ms == 0 ? 0 : idle_at_ms(now_us, p->reply.reset_after_us);
    rl_lock lock = in->has_rec ? in->rec.lock : (rl_lock){0, 0, 0};
    if (in->has_rec || (p->req->flags & RL_F_LOCKOUT)) {
        p->lock_starts = rl_lock_after(p->req, &lock, &p->reply);
        p->lock = lock;
    }
    /* The entry after the call: the state while it says something, the record while it does. */
    next->found = 1;
    next->has_rec = rl_lock_alive(&lock, now_us);
    next->rec = next->has_rec ? (rl_lock_rec){lock, state_expire_ms} : (rl_lock_rec){{0, 0, 0}, 0};
    next->expire_ms = p->reply.reset_after_ms == 0 ? 0 : idle_at_ms(now_us, p->reply.reset_after_us);
    if (!state_expire_ms) { /* the state is idle: the limit keeps at most its record */
        next->words = 0;
        next->nlog = 0;
        if (next->own) {
            RedisModule_Free(next->log);
            if (next->leases) rl_lease_value_free(next->leases);
        }
        next->log = NULL;
        next->leases = NULL;
    }
    if (next->leases && next->leases->n == 0) {
        if (next->own) rl_lease_value_free(next->leases);
        next->leases = NULL;
    }
    if (!next->words && !next->nlog && !next->leases && !next->has_rec) slot_clear(next); /* new again */
    p->changes = !same_entry(next, in);
    return NULL;
}

static bundle_slot *slot_out(const rl_pending *p) {
    bundle_slot *out = &open_key.out[limit_of(p)->index];
    slot_clear(out);
    out->written = 1;
    open_key.dirty = 1;
    return out;
}

static void bundle_commit(RedisModuleCtx *ctx, rl_pending *p) {
    (void)ctx;
    bundle_slot *next = &open_key.next[limit_of(p)->index];
    bundle_slot *out = slot_out(p);
    slot_copy(out, next); /* the log or leases, when the call made them, go with it */
    out->written = 1;
    next->own = 0;
    if (open_key.counted_create) p->creates = 0; /* one key, created once */
    open_key.counted_create |= p->creates;
}

/* A denied call's limit whose denial starts a lock (LOCKOUT): the lock into its entry, its state as it was. */
static void bundle_lock_start(RedisModuleCtx *ctx, const rl_pending *p, const rl_lock *l, int64_t now_us) {
    (void)ctx;
    (void)now_us;
    const bundle_slot *in = &open_key.in[limit_of(p)->index];
    bundle_slot *out = slot_out(p);
    slot_copy(out, in); /* (a log or leases borrowed from the value: shared by its entry) */
    out->written = 1;
    out->own = 0;
    int64_t state_expire_ms = in->has_rec ? in->rec.state_expire_ms
                              : (in->words || in->nlog || in->leases) ? in->expire_ms
                                                                     : 0;
    out->found = 1;
    out->has_rec = 1;
    out->rec = (rl_lock_rec){*l, state_expire_ms};
    int64_t lock_end_ms = (rl_lock_end_us(l) + 999) / 1000;
    out->expire_ms = state_expire_ms > lock_end_ms ? state_expire_ms : lock_end_ms;
}

/* The value's entry for limit pl from slot s. Its words go into old's buffer when old (the entry the key held
 * for it, or NULL) has one of their size, else into a new one; a log or leases the call made are taken, the
 * stored value's are shared (the caller frees what no entry shares). */
static void entry_from(rl_bundle_entry *e, const rl_policy_limit *pl, bundle_slot *s, rl_bundle_entry *old) {
    e->tag = pl->row->tag;
    e->name_len = (uint8_t)pl->name_len;
    memcpy(e->name, pl->name, pl->name_len);
    e->words = s->words;
    e->has_rec = s->has_rec;
    e->rec = s->rec;
    e->expire_ms = s->expire_ms;
    e->w = NULL;
    if (s->words && old && old->w && old->words == s->words) {
        e->w = old->w;
        old->w = NULL;
    } else if (s->words) {
        e->w = RedisModule_Alloc(8 * (size_t)s->words);
    }
    if (s->words) memcpy(e->w, s->cell.w, 8 * (size_t)s->words);
    e->nlog = s->nlog;
    e->log = s->nlog ? s->log : NULL;
    e->leases = s->leases;
    if (s->own) { /* the call's own: the entry takes them */
        s->log = NULL;
        s->leases = NULL;
        s->own = 0;
    }
}

/* What the value's old entries hold that no new entry took or shares. */
static void free_unshared(rl_bundle_entry *old, int n_old, const rl_bundle_entry *now, int n) {
    for (int k = 0; k < n_old; k++) {
        int log_kept = 0, leases_kept = 0;
        for (int j = 0; j < n; j++) {
            log_kept |= old[k].log && now[j].log == old[k].log;
            leases_kept |= old[k].leases && now[j].leases == old[k].leases;
        }
        RedisModule_Free(old[k].w);
        if (!log_kept) RedisModule_Free(old[k].log);
        if (!leases_kept && old[k].leases) rl_lease_value_free(old[k].leases);
    }
}

/* Once per call, when a commit changed an entry: the value's entries, written in place when the key holds a
 * value with room for them (no new value: Redis would delete the key and add it again), else a new value. */
static void bundle_finish(RedisModuleCtx *ctx, rl_pending *first) {
    if (!open_key.dirty) return;
    const rl_policy *policy = limit_of(first)->policy;
    rl_bundle *stored = open_key.stored;
    rl_bundle_entry now[RL_ALL_MAX_LIMITS];
    int n = 0;
    int64_t expire_at_ms = 0;
    for (int i = 0; i < policy->n; i++) {
        bundle_slot *s = open_key.out[i].written ? &open_key.out[i] : &open_key.in[i];
        if (!s->found) continue;
        int at = open_key.in_at[i];
        entry_from(&now[n++], &policy->limit[i], s, at >= 0 ? &stored->e[at] : NULL);
        if (s->expire_ms > expire_at_ms) expire_at_ms = s->expire_ms;
    }
    for (int i = 0; i < policy->n; i++) { /* (the stored value's, which change now) */
        open_key.in[i].log = NULL;
        open_key.in[i].leases = NULL;
    }
    if (stored) free_unshared(stored->e, stored->n, now, n);
    if (n == 0) { /* every limit idle: the key goes */
        if (stored) stored->n = 0; /* (its entries' parts freed above) */
        RedisModule_DeleteKey(open_key.key);
        if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "DEL", "s", first->keyname);
    } else if (stored && n <= stored->cap) {
        memcpy(stored->e, now, sizeof now[0] * (size_t)n);
        stored->n = n;
        rl_bundle_touched(ctx, open_key.key, first->keyname, stored, rl_clock_expire_at_ms(expire_at_ms * 1000, 0));
    } else {
        rl_bundle *b = rl_bundle_new(policy->n);
        b->policy_len = (uint8_t)policy->name_len;
        memcpy(b->policy, policy->name, policy->name_len);
        memcpy(b->e, now, sizeof now[0] * (size_t)n);
        b->n = n;
        if (stored) stored->n = 0; /* (its entries' parts freed above or now b's) */
        rl_bundle_put(ctx, open_key.key, first->keyname, b, rl_clock_expire_at_ms(expire_at_ms * 1000, 0));
    }
    rl_lfu_keep(open_key.key);
    RedisModule_SignalModifiedKey(ctx, first->keyname);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "rl.check", first->keyname);
}

static void bundle_release(RedisModuleCtx *ctx, rl_pending *p) {
    (void)ctx;
    slot_clear(&open_key.next[limit_of(p)->index]);
    if (--open_key.refs > 0) return;
    if (open_key.key) RedisModule_CloseKey(open_key.key);
    open_key.key = NULL;
    open_key.stored = NULL;
    for (int i = 0; i < limit_of(p)->policy->n; i++) {
        slot_clear(&open_key.out[i]);
        slot_clear(&open_key.next[i]);
    }
}

/* (flags: RL.CHECK's own are command.c's: it writes a value of up to 16 states whole) */
const rl_steps rl_bundle_steps = {"write", "readonly", bundle_prepare, bundle_commit, bundle_release,
                                  bundle_lock_start, bundle_finish};

/* --- RL.RELEASE and RL.RENEW on a policy's key -------------------------------------------------------------- */

/* Entry e after its leases changed at now: when it says nothing any more, and whether it still says anything. */
static int entry_after_leases(rl_bundle_entry *e, int64_t now_us) {
    if (e->leases && rl_lease_expired(e->leases->v, e->leases->n, now_us) == e->leases->n) {
        rl_lease_value_free(e->leases);
        e->leases = NULL;
    }
    int64_t state_expire_ms = e->leases ? (e->leases->v[e->leases->n - 1].end_us + 999) / 1000 : 0;
    int alive = e->has_rec && rl_lock_alive(&e->rec.lock, now_us);
    e->has_rec = alive;
    if (alive) e->rec.state_expire_ms = state_expire_ms;
    else e->rec = (rl_lock_rec){{0, 0, 0}, 0};
    int64_t lock_end_ms = alive ? (rl_lock_end_us(&e->rec.lock) + 999) / 1000 : 0;
    e->expire_ms = state_expire_ms > lock_end_ms ? state_expire_ms : lock_end_ms;
    return e->leases || alive;
}

int rl_bundle_lease_edit(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, const char *id,
                         size_t id_len, int64_t renew_ms, int64_t now_us) {
    rl_bundle *b = RedisModule_ModuleTypeGetValue(key);
    for (int k = 0; k < b->n; k++) {
        rl_bundle_entry *e = &b->e[k];
        int at = e->leases ? rl_lease_find(e->leases->v, e->leases->n, now_us, id, id_len) : -1;
        if (at < 0) continue;
        if (renew_ms) {
            rl_lease_plan plan = {.action = RL_LEASE_RENEW,
                                  .expired = rl_lease_expired(e->leases->v, e->leases->n, now_us),
                                  .found = at,
                                  .end_us = now_us + renew_ms * 1000};
            rl_lease_apply(e->leases, &plan, now_us);
        } else {
            rl_lease_remove(e->leases, at, now_us);
        }
        if (!entry_after_leases(e, now_us)) { /* nothing left to say: the entry goes */
            rl_bundle_entry gone = *e;
            memmove(e, e + 1, sizeof *e * (size_t)(b->n - k - 1));
            b->n--;
            RedisModule_Free(gone.w);
            RedisModule_Free(gone.log);
        }
        int64_t expire_at_ms = 0;
        for (int i = 0; i < b->n; i++)
            if (b->e[i].expire_ms > expire_at_ms) expire_at_ms = b->e[i].expire_ms;
        if (b->n == 0) {
            RedisModule_DeleteKey(key);
            if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "DEL", "s", keyname);
        } else {
            rl_bundle_touched(ctx, key, keyname, b, rl_clock_expire_at_ms(expire_at_ms * 1000, 0));
        }
        return 1;
    }
    return 0;
}
