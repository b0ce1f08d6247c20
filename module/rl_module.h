/* rl_module.h -- declarations shared by the module's glue files (not a public API).
 *
 * Every RL.* command runs the same three steps against its key, whatever the limiter:
 *   prepare  open the key, check its type, validate the parameters, decide: fills an rl_pending (the
 *            reply, and the effect to write) and writes nothing;
 *   commit   store the effect, set the expiry, replicate it: only for a real (not DRYRUN) request whose
 *            effect changes the key;
 *   release  close the key and free what prepare took: always.
 * A limiter's storage (store_cell.c, store_log.c, store_lease.c) provides the steps; the list (limiters.h) says which
 * limiter uses which. Splitting decide from write lets one command check several limits before writing
 * any. */
#ifndef RL_MODULE_H
#define RL_MODULE_H

#include "redismodule.h"

#include "limiters.h"
#include "store_log.h"

typedef struct rl_limiter rl_limiter;
/* A key's lock record (algorithms/lockout.h) as a value keeps it: the lock, and the expiry the limiter's state
 * alone would give the key (0: the state is idle, the key lives for the lock alone). */
typedef struct rl_lock_rec {
    rl_lock lock;
    int64_t state_expire_ms;
} rl_lock_rec;
typedef struct rl_lease_value rl_lease_value;

/* A decision made and not yet written: what prepare hands to commit and release. */
typedef struct rl_pending {
    const rl_limiter *lim;
    const rl_request *req;
    RedisModuleString *keyname;
    RedisModuleString *id; /* the request's ID lease_id (RL.ACQUIRE), or NULL */
    RedisModuleKey *key; /* open from prepare to release (NULL before) */
    rl_reply reply;
    int changes; /* committing would change the key (or its expiry) */
    int locked;  /* the key's lock denied the request (its limiter was not asked to decide for real) */
    int lock_starts; /* the limiter denied, and LOCKOUT starts a lock: lock is the key's record after it */
    rl_lock lock;
    int creates; /* committing would create the key */
    union {
        struct {
            void *stored; /* the key's value (cell_type.c), NULL for a new limiter */
            unsigned stored_words, words; /* the words of the stored state, and of the next */
            int64_t expire_at_ms;
            int64_t state_expire_ms; /* the expiry the state alone gives (0: idle), kept in a lock record */
            rl_lock_rec rec;         /* the key's lock record after the call, when rec_alive */
            int rec_alive;
            rl_cell next; /* the state to store */
        } cell;
        rl_log_pending log;
        struct {
            rl_lease_value *stored; /* the key's leases (lease_type.c), NULL for a new limiter */
            rl_lock lock;           /* the key's lock record */
            rl_lease_plan plan;
            int64_t expire_at_ms;
        } lease;
    } u;
} rl_pending;

typedef struct rl_steps {
    /* The command flags of the limiters that use these steps, and of their read-only forms: `fast` only
     * where every path is. */
    const char *flags, *flags_ro;
    /* Returns NULL, or the error to reply (err, or a constant such as WRONGTYPE) when nothing was decided. */
    const char *(*prepare)(RedisModuleCtx *ctx, rl_pending *p, char err[RL_ERR_LEN]);
    void (*commit)(RedisModuleCtx *ctx, rl_pending *p);
    void (*release)(RedisModuleCtx *ctx, rl_pending *p);
    /* Write lock l alone into the key (a denied RL.ALL's clause that starts one, LOCKOUT), its state untouched:
     * rl_lock_start (lock.c) for the storages that take LOCKOUT, NULL for the others. */
    void (*lock_start)(RedisModuleCtx *ctx, const rl_pending *p, const rl_lock *l, int64_t now_us);
    /* Once per call, after every clause is committed or not and before any is released: for a storage whose
     * clauses share one key (a policy's, store_bundle.c), which writes it then, once; NULL for the others (call.c
     * calls the bundle's for a policy's call, the only one whose clauses share a key). */
    void (*finish)(RedisModuleCtx *ctx, rl_pending *first);
} rl_steps;

/* One row of the list (limiters.h), with what the module attaches to it. */
struct rl_limiter {
    const char *kind;              /* "TOKEN": RL.SETSTATE's and AOF rewrite's name for it */
    const rl_syntax *syntax;       /* its command's name and arguments */
    const rl_syntax *syntax_ro;    /* its read-only form's */
    const char *type_name;
    unsigned char tag;             /* its kind in the replicated RL.SETSTATE state */
    const rl_algorithm *alg;       /* cell limiters */
    const rl_steps *steps;
    RedisModuleType *type;         /* cell limiters: set at load */
};

/* limiters.c: the list's rows; and their kinds as a message lists them ("TOKEN, LEAKY or WINDOW": last is
 * what comes before the last), of one storage (steps) or of all (NULL). */
extern rl_limiter rl_limiters[RL_NLIMITERS];
void rl_kind_names(char *dst, size_t dstlen, const rl_steps *steps, const char *last);

/* command.c: the command table (every command of the module, its registration and COMMAND DOCS). Which
 * optional commands load: RL.CLOCK with the module argument test-clock, CL.THROTTLE unless no-cl-throttle. */
int rl_commands_register(RedisModuleCtx *ctx, int test_clock, int cl_throttle);

/* reset.c, setstate.c: commands beside the limiters (RL.CLOCK: clock.h, CL.THROTTLE: cl_throttle.h). */
int rl_reset_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rl_setstate_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* store_cell.c, store_log.c, store_lease.c */
extern const rl_steps rl_cell_steps, rl_log_steps, rl_lease_steps, rl_bundle_steps;

/* cell_type.c: the module data types of the cell limiters. A value holds a state's words (inline in the
 * pointer for a small one): rl_value_read copies them into cell and returns how many there are;
 * rl_value_holds says whether a value of stored_words words holds exactly cell's n. */
int rl_cell_types_register(RedisModuleCtx *ctx);
unsigned rl_value_read(const rl_limiter *lim, const void *value, rl_cell *cell);
int rl_value_holds(const void *value, unsigned stored_words, const rl_cell *cell, unsigned n);
/* rl_value_lock copies a value's lock record into rec and returns 1, or returns 0 when it has none;
 * rl_value_has_lock says which, in one bit test (cell_type.c: a value with a record is an allocation whose
 * pointer has bit 1 set and bit 0 clear). */
static inline int rl_value_has_lock(const void *value) { return ((uintptr_t)value & 3) == 2; }
int rl_value_lock(const rl_limiter *lim, const void *value, rl_lock_rec *rec);
/* 1 when a lock record could have been written here (RDB load and RL.SETSTATE check it). */
static inline int rl_lock_rec_valid(const rl_lock_rec *rec) {
    return rl_lock_valid(&rec->lock) && rec->state_expire_ms >= 0 && rec->state_expire_ms <= RL_MAX_TIME_MS * 4;
}
/* The limiter whose module data type an open key holds (a cell limiter's, or a concurrency limiter's leases,
 * whose type lease_type.c registers): NULL if the key is empty, RL_CELL_OTHER if it holds anything else. */
#define RL_CELL_OTHER ((const rl_limiter *)-1)
const rl_limiter *rl_cell_limiter_of(RedisModuleKey *key);
/* Store cell's n words in an open key: into the existing value (stored, of stored_words words; NULL if none)
 * when it has room, else as a new value of the limiter's type (a lock record the value had goes); with
 * rl_cell_put_locked, and the lock record rec. */
void rl_cell_put(RedisModuleKey *key, const rl_limiter *lim, void *stored, unsigned stored_words, const rl_cell *cell,
                 unsigned n);
void rl_cell_put_locked(RedisModuleKey *key, const rl_limiter *lim, void *stored, unsigned stored_words,
                        const rl_cell *cell, unsigned n, const rl_lock_rec *rec);

/* lease_type.c: the data type of a concurrency limiter's key: its leases, sorted by end (algorithms/
 * concurrency.h). rl_lease_apply writes a decision's plan into a value (NULL: a new
 * one, returned); rl_lease_remove takes out lease i and the ended ones before it. Every write of a lease key is
 * replicated whole: RL.SETSTATE key <blob> (rl_replicate_leases), or DEL when no lease is left. */
struct rl_lease_value {
    int n, cap;
    rl_lease *v; /* n leases, sorted by end_us */
    rl_lock lock; /* the key's lock record (RL.BLOCK), zeros when none */
};
int rl_lease_types_register(RedisModuleCtx *ctx);
rl_lease_value *rl_lease_apply(rl_lease_value *value, const rl_lease_plan *plan, int64_t now_us);
rl_lease_value *rl_lease_value_copy(const rl_lease_value *value);
void rl_lease_value_free(rl_lease_value *value);
/* A value's leases as blobs and a policy's key carry them: the count (4 bytes), then each lease. rl_leases_get
 * reads them from *at (up to end), checked, and moves *at past them; NULL when they are not valid ones. */
size_t rl_leases_size(const rl_lease_value *value);
unsigned char *rl_leases_put(unsigned char *p, const rl_lease_value *value);
rl_lease_value *rl_leases_get(const unsigned char **at, const unsigned char *end);
void rl_lease_remove(rl_lease_value *value, int i, int64_t now_us);
/* Store value's end (the later of its last lease's and its lock record's) as the key's expiry and replicate
 * the key's state; with no lease left, the key holds its lock alone (lock_type.c), or goes. */
void rl_lease_store(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, rl_lease_value *value,
                    int64_t now_us);
/* RL.SETSTATE key <blob> for a lease key (the blob's first byte is its limiter's tag). */
int rl_lease_setstate(RedisModuleCtx *ctx, const rl_limiter *lim, RedisModuleString **argv);
/* The lease limiter whose tag is tag, or NULL. */
const rl_limiter *rl_lease_limiter_tagged(unsigned char tag);
/* store_lease.c: where the module's counter of made lease ids starts (at load): 1 with the test clock, so tests
 * read the same ids each run, else a random number, so that a replica promoted at a failover does not make
 * the ids its old primary made in the same µs. */
void rl_lease_ids_init(int deterministic);
/* The number the next made id takes, and its use (a lease was made from it, for real). */
uint64_t rl_lease_next_id(void);
void rl_lease_id_taken(void);

/* lock_type.c: locks (algorithms/lockout.h) where no limiter state is kept (the rl-locked type: a key locked
 * by RL.BLOCK before any call, or whose state went idle under a lock). rl_lock_only_read: 1 and *l when key
 * holds a lock alone. lock.c: RL.BLOCK, RL.UNBLOCK and RL.LOCKINFO on any limiter's key. */
int rl_lock_type_register(RedisModuleCtx *ctx);
int rl_lock_only_read(RedisModuleKey *key, rl_lock *l);
void rl_lock_only_put(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, const rl_lock *l,
                      int64_t expire_at_ms);
int rl_lock_setstate(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* A denied RL.ALL's clause that starts a lock: l written into keyname's key, its state untouched. */
void rl_lock_start(RedisModuleCtx *ctx, const rl_pending *p, const rl_lock *l, int64_t now_us);
int rl_block_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* RL.UNBLOCK's work on keyname: NULL, with *held 1 when a lock held (it ends, the strikes go), else 0 (the
 * strikes go all the same); or the error. Its command (command.c) serves the clients waiting on the key. */
const char *rl_unblock(RedisModuleCtx *ctx, RedisModuleString *keyname, int *held);
int rl_lockinfo_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* leases.c: RL.RELEASE, RL.RENEW and RL.LEASES. */
int rl_release_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rl_renew_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rl_leases_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* The replicated states' blobs (setstate.c, lease_type.c, lock_type.c) write their numbers little-endian, in `bytes`
 * bytes. */
static inline void rl_put_le(unsigned char *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint64_t rl_get_le(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* setstate.c: the replicated effect of a cell write (RL.SETSTATE applies it), and of one with the key's lock
 * record rec. */
void rl_replicate_cell(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_limiter *lim, const rl_cell *cell,
                       unsigned n, int64_t expire_at_ms);
void rl_replicate_cell_locked(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_limiter *lim,
                              const rl_cell *cell, unsigned n, const rl_lock_rec *rec, int64_t expire_at_ms);

/* effects.c: 1 when something may receive replicated effects (AOF, a replication backlog, a replica): the
 * caller then builds and replicates its effect. 0 when nothing can: the caller skips it (this has counted the
 * change for save points). rl_effects_state: 1 (replicated, for good), 0 (skipped), -1 (asked at the next
 * write). rl_effects_register subscribes to the server events that may bring a consumer (OnLoad). */
int rl_effects_on(RedisModuleCtx *ctx);
/* Non-zero while wait.c decides in a timer's or a blocked client's context: effects are always built there
 * (there is no command to replicate verbatim). */
extern int rl_effects_forced;
int rl_effects_state(void);
int rl_effects_register(RedisModuleCtx *ctx);

/* stats.c: the counters of INFO ratelimit, per command: a limiter's command at 2 * its index, its
 * read-only form next, then RL.ALL, RL.ALL_RO, CL.THROTTLE, RL.RESET, RL.RELEASE and RL.RENEW. keys_deleted is
 * RL.RESET's alone, which has no verdict, units or keys created. RL.RELEASE and RL.RENEW count an answer 1 as
 * admitted, 0 as denied. */
typedef struct rl_counters {
    long long calls, admitted, denied, units_admitted, errors, keys_created, keys_deleted;
    long long locked; /* denials by a key's lock (held when the call came); denied counts them too, and INFO
                       * shows denied less locked (one subtraction there rather than a test in every call) */
} rl_counters;
#define RL_STAT_ALL (2 * RL_NLIMITERS)
#define RL_STAT_ALL_RO (RL_STAT_ALL + 1)
#define RL_STAT_CL_THROTTLE (RL_STAT_ALL + 2)
#define RL_STAT_RESET (RL_STAT_ALL + 3)
#define RL_STAT_RELEASE (RL_STAT_ALL + 4)
#define RL_STAT_RENEW (RL_STAT_ALL + 5)
#define RL_STAT_CHECK (RL_STAT_ALL + 6)
#define RL_STAT_CHECK_RO (RL_STAT_ALL + 7)
#define RL_NSTATS (RL_STAT_ALL + 8)
extern rl_counters rl_stats[RL_NSTATS];
/* CL.THROTTLE is registered (command.c): INFO shows its counters only then. */
extern int rl_cl_throttle_on;
/* Clients blocked by the module now: waiting with WAIT (wait.c) or held by BLOCK (answer.c). */
extern long long rl_clients_waiting;
int rl_stats_register(RedisModuleCtx *ctx);

/* evict.c: evictions of limiter keys. rl_evict_unlink is every limiter data type's unlink callback (it notes
 * the key, for the "evicted" notification that follows when the deletion is an eviction); rl_evict_register
 * subscribes to evictions and CONFIG SET and warns at load when the server may evict limiter keys. */
void rl_evict_unlink(RedisModuleString *key, const void *value);
long long rl_evicted_keys(void);
int rl_evict_register(RedisModuleCtx *ctx);
/* What one call adds to its command's counters, once, when it is answered: a call, and then an error; a
 * verdict with the units it took and the keys it made; the keys it deleted (RL.RESET, which has no verdict);
 * or nothing more (a waiter that left). */
typedef enum { RL_TALLY_GONE, RL_TALLY_ERROR, RL_TALLY_DECIDED, RL_TALLY_DONE } rl_tally_kind;
typedef struct rl_tally {
    rl_tally_kind kind;
    int allowed;
    long long units, keys_created, keys_deleted;
    int locked; /* a denial by a lock */
} rl_tally;
/* The one place where counters change (inline: every call passes here). */
static inline void rl_stats_count(rl_counters *stats, const rl_tally *t) {
    stats->calls++;
    if (t->kind == RL_TALLY_ERROR) {
        stats->errors++;
    } else if (t->kind == RL_TALLY_DECIDED) {
        stats->admitted += t->allowed != 0;
        stats->denied += t->allowed == 0;
        stats->locked += t->locked; /* 0 or 1 */
        stats->units_admitted += t->units;
        stats->keys_created += t->keys_created;
    } else if (t->kind == RL_TALLY_DONE) {
        stats->keys_deleted += t->keys_deleted;
    }
}

/* The call model (call.c). Every limiter command is parsed once into a call: 1 to RL_ALL_MAX_LIMITS clauses,
 * each a limiter with its key and its request. A single-key command (RL.TOKEN, RL.TOKEN_RO, ...) is a call of
 * one clause; RL.ALL is a call of n, all or nothing. One function decides a call, and its outcome is what the
 * answer (answer.c), the counters and the waiting code (wait.c) read. */
#define RL_ALL_MAX_LIMITS 16

typedef struct rl_clause {
    const rl_limiter *lim;
    RedisModuleString *key;
    RedisModuleString *id; /* ID lease_id's argument (RL_F_ID), else NULL */
    rl_request req;
} rl_clause;

typedef struct rl_policy rl_policy;

typedef struct rl_call {
    int n;                   /* clauses */
    rl_policy *policy;       /* RL.CHECK's policy (policy.c), its clauses its limits on one key; else NULL */
    int64_t cost;            /* RL.CHECK's COST: the cost of every limit whose spec has none */
    int all;                 /* RL.ALL: admitted only if every clause admits, written all or nothing */
    uint32_t flags;          /* the call's own options: DRYRUN, WAIT, BLOCK, ATMOST (one clause's, or RL.ALL's) */
    int64_t wait_timeout_ms; /* with RL_F_WAIT */
    rl_counters *stats;      /* its command's */
    rl_clause clause[RL_ALL_MAX_LIMITS];
} rl_call;

/* The lease a reply carries (RL.ACQUIRE, RL.ALL's CONCURRENCY limits): its id, or nil (len 0). */
typedef struct rl_lease_text {
    uint8_t len;
    char id[RL_LEASE_ID_MAX];
} rl_lease_text;

/* What a call answers: an error, one limiter's reply, or RL.ALL's (the verdict, retry and reset, then a
 * reply per limit); allowed and retry_after_ms are the call's either way. units and keys_created are what a
 * written call took and made, for the counters. wait_retry_ms is what waiting reads: the longest wait of the
 * denying limits that only time can end (a concurrency limit's denial counts 0: a release may end it any
 * moment), -1 if one never admits. */
typedef struct rl_outcome {
    const char *error;        /* NULL, or the error to reply: errbuf, or a constant such as WRONGTYPE */
    char errbuf[RL_ERR_LEN];
    int all;                  /* RL.ALL's shape */
    int with_granted;         /* ATMOST: `granted` seventh */
    int n;                    /* replies */
    int64_t allowed, retry_after_ms, reset_after_ms, wait_retry_ms;
    long long units, keys_created;
    int locked;      /* denied by a lock that held when the call came (a clause's, for RL.ALL) */
    int shadow_denied; /* RL.CHECK of a SHADOW policy: denied, answered allowed */
    int named;         /* RL.CHECK: each reply has its limit's name (RESP3 answers a map of them) */
    uint8_t name_len[RL_ALL_MAX_LIMITS];
    char names[RL_ALL_MAX_LIMITS][32];
    uint32_t leased; /* bit i: replies[i] is a concurrency limit's, with its lease[i] as a seventh field */
    rl_reply replies[RL_ALL_MAX_LIMITS];
    rl_lease_text lease[RL_ALL_MAX_LIMITS];
} rl_outcome;

/* Decide call at the clock's time: prepare every clause (nothing written; the first error ends it), then
 * commit (unless DRYRUN) the clauses whose effect changes their key: every one when the call is admitted,
 * none when RL.ALL is denied (each then described as it stands), and a single clause's effect whatever its
 * verdict (a denied sliding-log attempt is logged); release. look_flags are or-ed into every request for this
 * decision only (RL_F_DRYRUN to look), and cost >= 0 replaces every request's. Counts nothing. */
void rl_call_decide_any(RedisModuleCtx *ctx, rl_call *call, uint32_t look_flags, int64_t cost, rl_outcome *o);
void rl_call_decide_one(RedisModuleCtx *ctx, rl_call *call, rl_outcome *o);
static inline void rl_call_decide(RedisModuleCtx *ctx, rl_call *call, uint32_t look_flags, int64_t cost,
                                  rl_outcome *o) {
    if (!call->all && !look_flags && cost < 0) rl_call_decide_one(ctx, call, o); /* the common case, written out */
    else rl_call_decide_any(ctx, call, look_flags, cost, o);
}


/* A copy of call that outlives its command (a waiter's, a held reply's): its n clauses only (a call's
 * clause array is sized for RL.ALL's 16; no code reads past n), its keys retained; rl_call_free frees it. */
rl_call *rl_call_keep(const rl_call *call);
void rl_call_free(rl_call *call);

/* all.c: parse RL.ALL's or RL.ALL_RO's arguments (syn: rl_all_syntax or rl_all_syntax_ro) into call. 0, or -1
 * with err (empty: the wrong number of arguments). report_keys answers Redis's getkeys request. */
int rl_all_parse(const rl_syntax *syn, RedisModuleString **argv, int argc, rl_call *call, char err[RL_ERR_LEN]);
int rl_all_report_keys(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* One clause's spec at args[*at] (kind numbers [options], the word LIMIT before it already read) into
 * call->clause[i], as RL.ALL's clause i takes it with the call's own request whole; *at moves past it. 0, or -1
 * with err ("ERR LIMIT <i + 1>: ..."). RL.POLICY SET reads its limits with it. */
int rl_all_parse_spec(rl_call *call, int i, int nargs, const char **args, const size_t *lens, int *at,
                      const rl_request *whole, char err[RL_ERR_LEN]);

/* reply.c: one limiter's reply (the six fields; `granted` seventh with ATMOST, or `lease` seventh for a
 * concurrency limit: lease not NULL), RL.ALL's (the verdict, retry and reset, then a reply per limit), and an
 * outcome's, one of those or its error. */
int rl_send_reply(RedisModuleCtx *ctx, const rl_reply *reply, int with_granted, const rl_lease_text *lease);
int rl_send_all_reply(RedisModuleCtx *ctx, const rl_outcome *o);
static inline int rl_send_outcome(RedisModuleCtx *ctx, const rl_outcome *o) {
    if (o->error) return RedisModule_ReplyWithError(ctx, o->error);
    if (o->all) return rl_send_all_reply(ctx, o);
    return rl_send_reply(ctx, &o->replies[0], o->with_granted, (o->leased & 1) ? &o->lease[0] : NULL);
}

/* wait.c: server-side waiting (WAIT). */
/* Clients waiting with WAIT: while there are none, calls skip every waiting check. */
extern long long rl_waiters;
/* A call with WAIT, or any call while clients wait: serve the waiters on its keys first (in arrival order),
 * then decide it, and block it when it should wait; else answer it (rl_answer). */
int rl_wait_run(RedisModuleCtx *ctx, rl_call *call);
/* In a command on keys[0..nkeys) of the selected database: admit, in order, the waiters on them that fit
 * (after budget came back: RL.RESET). */
void rl_wait_serve_keys(RedisModuleCtx *ctx, RedisModuleString *const *keys, int nkeys);
/* At load: waiting learns from the clock (clock.c's hook) when the test clock moves. */
void rl_wait_init(void);

/* policy.c: policies kept in Redis (RL.POLICY), and RL.CHECK's calls of them. A policy is 1 to
 * RL_ALL_MAX_LIMITS named limits, each a cell limiter's clause as RL.ALL takes one; RL.CHECK policy key applies
 * them all to one key, whose value holds every limit's state (bundle_type.c, store_bundle.c). Each limit has
 * its own rl_limiter: its row's, with the bundle's steps, so that a clause of the call names it as a clause of
 * RL.ALL names its row. A policy is replaced whole (RL.POLICY SET): a call kept by a waiter holds a reference
 * and takes the new one when it is decided (rl_policy_refresh). */
#define RL_POLICY_NAME_MAX 64
#define RL_POLICY_LIMIT_NAME_MAX 32

typedef struct rl_policy_limit {
    rl_limiter lim;          /* the row's limiter with rl_bundle_steps: what RL.CHECK's clause names */
    const rl_limiter *row;   /* the list's row */
    const rl_policy *policy;
    int index;
    size_t name_len;
    char name[RL_POLICY_LIMIT_NAME_MAX + 1];
    rl_request req;          /* the spec; RL_F_COST set when it fixes its cost */
} rl_policy_limit;

typedef struct rl_policy_counters {
    long long calls, admitted, denied, shadow_denied;
} rl_policy_counters;

struct rl_policy {
    size_t name_len;
    char name[RL_POLICY_NAME_MAX + 1];
    int shadow;
    int n;
    rl_policy_limit limit[RL_ALL_MAX_LIMITS];
    int argc;                   /* the arguments after the name, as set: RL.POLICY GET, the RDB */
    RedisModuleString **argv;
    int refs;                   /* the registry's (until replaced or deleted) and each kept call's */
    int current;                /* still the registry's */
    rl_policy_counters *stats;  /* the name's: kept across replacements */
};

int rl_policy_register(RedisModuleCtx *ctx);
/* The policies in the RDB (module aux data, before the keys), and the emptying of the registry when a load
 * starts (policy.c subscribes to it): an RDB without them loads none. */
int rl_policy_aux_load(RedisModuleIO *io, int encver, int when);
void rl_policy_aux_save(RedisModuleIO *io, int when);
/* RL.CHECK's or RL.CHECK_RO's arguments (syn: its own options) into call. 0, or -1 with err (empty: the wrong
 * number of arguments). */
int rl_check_parse(const rl_syntax *syn, RedisModuleString **argv, int argc, rl_call *call, char err[RL_ERR_LEN]);
/* A kept call of a policy that was replaced or deleted since: its clauses are the current policy's. NULL, or the
 * error (the policy is gone). */
const char *rl_policy_refresh(rl_call *call, char err[RL_ERR_LEN]);
void rl_policy_hold(rl_policy *policy);
void rl_policy_drop(rl_policy *policy);
/* An RL.CHECK's outcome, decided as RL.ALL's: its replies named by its limits, and, for a SHADOW policy, a
 * denial answered allowed (shadow_denied; retry -1), the state left as the denial left it. */
void rl_policy_name_replies(const rl_policy *policy, rl_outcome *o);
/* What an answered RL.CHECK adds to its policy's counters (out of line: every other call passes by). */
void rl_policy_count(const rl_policy *policy, const rl_outcome *o);
/* INFO ratelimit's lines of the policies (stats.c). */
void rl_policy_info(RedisModuleInfoCtx *ctx);

/* bundle_type.c: the data type of a key RL.CHECK checks, "rl-checks": the name of its policy, then for each of
 * its limits with something to keep, the limit's name and kind, its state's words, its lock record and the
 * instant it all goes idle. store_bundle.c reads and writes it; its effect travels as RL.SETSTATE key <blob>
 * (tag 'P'). */
#define RL_BUNDLE_TAG 'P'
typedef struct rl_bundle_entry {
    unsigned char tag;      /* the limiter's (limiters.h) */
    uint8_t name_len;
    char name[RL_POLICY_LIMIT_NAME_MAX];
    unsigned words;         /* 0: no state (a lock record alone) */
    int has_rec;
    rl_lock_rec rec;
    int64_t expire_ms;      /* when the entry says nothing any more (its state idle, its record over) */
    uint64_t *w;
    int64_t nlog;           /* a sliding log's (tag 'S', words 0): its entries, newest first */
    rl_slog_entry *log;
    rl_lease_value *leases; /* a concurrency limit's (tag 'C', words 0): its leases (lease_type.c), or NULL */
} rl_bundle_entry;
typedef struct rl_bundle {
    uint8_t policy_len;
    char policy[RL_POLICY_NAME_MAX];
    int n, cap;              /* entries, and room for (the policy's limits when it was made) */
    rl_bundle_entry e[];
} rl_bundle;
/* Registers the type, with the module's aux data callbacks (policy.c's: the policies in the RDB). */
int rl_bundle_type_register(RedisModuleCtx *ctx, int (*aux_load)(RedisModuleIO *, int, int),
                            void (*aux_save)(RedisModuleIO *, int));
/* 1 when an open key holds a value of the rl-checks type. */
int rl_bundle_type_is(RedisModuleKey *key);
/* The row of the list a policy's limit of this tag has (every kind may be one), or NULL for no row's tag. */
static inline const rl_limiter *rl_bundle_limiter_tagged(unsigned char tag) {
    for (int i = 0; i < RL_NLIMITERS; i++)
        if (rl_limiters[i].tag == tag) return &rl_limiters[i];
    return NULL;
}
/* A bundle with room for cap entries (1 to RL_ALL_MAX_LIMITS), none yet. */
rl_bundle *rl_bundle_new(int cap);
void rl_bundle_free(rl_bundle *b);
/* Store b (taken) in an open key with its expiry, and replicate it (RL.SETSTATE key <'P' blob>). */
void rl_bundle_put(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, rl_bundle *b,
                   int64_t expire_at_ms);
/* RL.SETSTATE key <'P' blob>: returns 0 when argv is not one (the caller goes on), else 1 having replied. */
int rl_bundle_setstate(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* b, the value of an open key, changed in place: its expiry set and its state replicated. */
void rl_bundle_touched(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, rl_bundle *b,
                       int64_t expire_at_ms);
/* store_bundle.c: RL.RELEASE (renew_ms 0) and RL.RENEW of the lease named id among the leases of a key RL.CHECK
 * checks (its policy's CONCURRENCY limits): 1 when there was one (written), else 0 (nothing written). */
int rl_bundle_lease_edit(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *keyname, const char *id,
                         size_t id_len, int64_t renew_ms, int64_t now_us);

#endif
