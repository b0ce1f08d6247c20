/* store_bundle.c -- the steps of a policy's limits (RL.CHECK policy key): every limit's state in one key, the
 * value of the rl-checks type (bundle_type.c).
 *
 * RL.CHECK is a call of one clause per limit of its policy (policy.c), all on the same key, decided by
 * call.c as RL.ALL's clauses are: each prepared (nothing written), then every one committed or none. The
 * clauses share the key: the first prepare opens it and reads every limit's entry (one open key per call:
 * Redis runs one command at a time, and a decision never yields), each prepare decides its limit on its
 * entry's state as the cell storage does (store_cell.c: the algorithm, then the lock record), a commit only
 * records the limit's new entry, and finish, once per call after the commits, writes the value whole,
 * replicates it and signals the key once; the last release closes it.
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

/* An entry's instants are the limiters' clock's ms (the test clock's, when frozen), the key's expiry the
 * server's: rl_clock_expire_at_ms converts, when the key is written. */
static int64_t idle_at_ms(int64_t now_us, int64_t reset_after_us) { return (now_us + reset_after_us + 999) / 1000; }

/* Limit i of the policy in the open key: what the key held (found), and what it holds after the call. */
typedef struct bundle_slot {
    int found, has_rec, written;
    unsigned words;
    rl_lock_rec rec;
    int64_t expire_ms;
    rl_cell cell;
} bundle_slot;

static struct {
    int refs;             /* clauses prepared and not yet released */
    RedisModuleKey *key;
    rl_bundle *stored;    /* the key's value, NULL when it had none */
    int dirty;            /* a commit changed an entry: finish writes */
    int counted_create;   /* a clause's commit counted the key's creation */
    bundle_slot in[RL_ALL_MAX_LIMITS], out[RL_ALL_MAX_LIMITS];
} open_key;

static const rl_policy_limit *limit_of(const rl_pending *p) { return (const rl_policy_limit *)p->lim; }

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
    memset(open_key.in, 0, sizeof open_key.in[0] * (size_t)policy->n);
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
            s->found = 1;
            s->words = e->words;
            s->has_rec = e->has_rec;
            s->rec = e->rec;
            s->expire_ms = e->expire_ms;
            if (e->words) memcpy(s->cell.w, e->w, 8 * (size_t)e->words);
            break;
        }
    }
    return NULL;
}

/* The limit's lock holds: its reply is the lock's denial (the algorithm decides only for the retry, and the
 * state as it stands for the reset), and nothing changes. */
static void prepare_locked(rl_pending *p, const bundle_slot *in) {
    const rl_algorithm *alg = limit_of(p)->row->alg;
    rl_cell copy = in->cell;
    alg->decide(p->req, &copy, in->words > 0, &p->reply);
    rl_request look = rl_lock_look(p->req);
    rl_reply as_is;
    copy = in->cell;
    alg->decide(&look, &copy, in->words > 0, &as_is);
    p->reply.reset_after_us = as_is.reset_after_us;
    p->reply.reset_after_ms = as_is.reset_after_ms;
    rl_lock_deny(&in->rec.lock, p->req->now_us, &p->reply);
    p->locked = 1;
    p->changes = 0;
}

static int same_entry(const bundle_slot *a, const bundle_slot *b) {
    if (a->found != b->found || a->words != b->words || a->has_rec != b->has_rec || a->expire_ms != b->expire_ms)
        return 0;
    if (a->has_rec && memcmp(&a->rec, &b->rec, sizeof a->rec) != 0) return 0;
    return memcmp(a->cell.w, b->cell.w, 8 * (size_t)a->words) == 0;
}

static const char *bundle_prepare(RedisModuleCtx *ctx, rl_pending *p, char err[RL_ERR_LEN]) {
    const rl_policy_limit *pl = limit_of(p);
    if (open_key.refs++ == 0) {
        const char *failed = bundle_open(ctx, p);
        if (failed) return failed;
    }
    const rl_algorithm *alg = pl->row->alg;
    if (alg->validate(p->req, err) != 0) return limit_failed(p, err);
    if ((p->req->flags & RL_LOCK_FLAGS) && rl_lockout_validate(p->req, err) != 0) return limit_failed(p, err);
    const bundle_slot *in = &open_key.in[pl->index];
    int64_t now_us = p->req->now_us;
    p->creates = open_key.stored == NULL;
    if (in->has_rec && rl_lock_holds(&in->rec.lock, now_us)) {
        prepare_locked(p, in);
        return NULL;
    }
    /* The entry after the call, as a slot: kept in the pending until commit. */
    rl_cell *next = &p->u.cell.next;
    *next = in->cell;
    if (!in->words) next->w[0] = next->w[1] = 0;
    alg->decide(p->req, next, in->words > 0, &p->reply);
    unsigned words = alg->words(next);
    int64_t state_expire_ms = p->reply.reset_after_ms == 0 ? 0 : idle_at_ms(now_us, p->reply.reset_after_us);
    rl_lock lock = in->has_rec ? in->rec.lock : (rl_lock){0, 0, 0};
    if (in->has_rec || (p->req->flags & RL_F_LOCKOUT)) {
        p->lock_starts = rl_lock_after(p->req, &lock, &p->reply);
        p->lock = lock;
    }
    bundle_slot after = {.found = 1, .words = state_expire_ms ? words : 0, .has_rec = rl_lock_alive(&lock, now_us)};
    after.rec = after.has_rec ? (rl_lock_rec){lock, state_expire_ms} : (rl_lock_rec){{0, 0, 0}, 0};
    after.expire_ms = p->reply.reset_after_ms == 0 ? 0 : idle_at_ms(now_us, p->reply.reset_after_us);
    if (!after.words && !after.has_rec) after = (bundle_slot){0}; /* nothing to keep: the limit is new again */
    memcpy(after.cell.w, next->w, 8 * (size_t)after.words);
    p->changes = !same_entry(&after, in);
    p->u.cell.words = after.words;
    p->u.cell.rec = after.rec;
    p->u.cell.rec_alive = after.has_rec;
    p->u.cell.expire_at_ms = after.expire_ms;
    return NULL;
}

static bundle_slot *slot_out(const rl_pending *p) {
    bundle_slot *out = &open_key.out[limit_of(p)->index];
    out->written = 1;
    open_key.dirty = 1;
    return out;
}

static void bundle_commit(RedisModuleCtx *ctx, rl_pending *p) {
    (void)ctx;
    bundle_slot *out = slot_out(p);
    out->found = p->u.cell.words || p->u.cell.rec_alive;
    out->words = p->u.cell.words;
    out->has_rec = p->u.cell.rec_alive;
    out->rec = p->u.cell.rec;
    out->expire_ms = p->u.cell.expire_at_ms;
    memcpy(out->cell.w, p->u.cell.next.w, 8 * (size_t)out->words);
    if (open_key.counted_create) p->creates = 0; /* one key, created once */
    open_key.counted_create |= p->creates;
}

/* A denied call's limit whose denial starts a lock (LOCKOUT): the lock into its entry, its state as it was. */
static void bundle_lock_start(RedisModuleCtx *ctx, const rl_pending *p, const rl_lock *l, int64_t now_us) {
    (void)ctx;
    (void)now_us;
    const bundle_slot *in = &open_key.in[limit_of(p)->index];
    bundle_slot *out = slot_out(p);
    *out = *in;
    out->written = 1;
    int64_t state_expire_ms = in->has_rec ? in->rec.state_expire_ms : in->words ? in->expire_ms : 0;
    out->found = 1;
    out->has_rec = 1;
    out->rec = (rl_lock_rec){*l, state_expire_ms};
    int64_t lock_end_ms = (rl_lock_end_us(l) + 999) / 1000;
    out->expire_ms = state_expire_ms > lock_end_ms ? state_expire_ms : lock_end_ms;
}

/* Once per call: the value whole, when a commit changed an entry. */
static void bundle_finish(RedisModuleCtx *ctx, rl_pending *first) {
    if (!open_key.dirty) return;
    const rl_policy *policy = limit_of(first)->policy;
    rl_bundle *b = rl_bundle_new();
    b->policy_len = (uint8_t)policy->name_len;
    memcpy(b->policy, policy->name, policy->name_len);
    int64_t expire_at_ms = 0;
    for (int i = 0; i < policy->n; i++) {
        const bundle_slot *s = open_key.out[i].written ? &open_key.out[i] : &open_key.in[i];
        if (!s->found) continue;
        const rl_policy_limit *pl = &policy->limit[i];
        rl_bundle_entry *e = &b->e[b->n++];
        e->tag = pl->row->tag;
        e->name_len = (uint8_t)pl->name_len;
        memcpy(e->name, pl->name, pl->name_len);
        e->words = s->words;
        e->has_rec = s->has_rec;
        e->rec = s->rec;
        e->expire_ms = s->expire_ms;
        e->w = NULL;
        if (s->words) {
            e->w = RedisModule_Alloc(8 * (size_t)s->words);
            memcpy(e->w, s->cell.w, 8 * (size_t)s->words);
        }
        if (s->expire_ms > expire_at_ms) expire_at_ms = s->expire_ms;
    }
    if (b->n == 0) { /* every limit idle: the key goes */
        rl_bundle_free(b);
        RedisModule_DeleteKey(open_key.key);
        if (rl_effects_on(ctx)) RedisModule_Replicate(ctx, "DEL", "s", first->keyname);
    } else {
        rl_bundle_put(ctx, open_key.key, first->keyname, b, rl_clock_expire_at_ms(expire_at_ms * 1000, 0));
    }
    RedisModule_SignalModifiedKey(ctx, first->keyname);
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_MODULE, "rl.check", first->keyname);
}

static void bundle_release(RedisModuleCtx *ctx, rl_pending *p) {
    (void)ctx;
    (void)p;
    if (--open_key.refs > 0) return;
    if (open_key.key) RedisModule_CloseKey(open_key.key);
    open_key.key = NULL;
    open_key.stored = NULL;
    for (int i = 0; i < RL_ALL_MAX_LIMITS; i++) open_key.out[i].written = 0;
}

/* (flags: RL.CHECK's own are command.c's; a policy's limits are cell limiters, whose every path is fast, but
 * RL.CHECK writes a value of up to 16 states whole) */
const rl_steps rl_bundle_steps = {"write deny-oom", "readonly", bundle_prepare, bundle_commit, bundle_release,
                                  bundle_lock_start, bundle_finish};
