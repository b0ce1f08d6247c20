/* rl_module.h -- declarations shared by the module's glue files (not a public API).
 *
 * Every RL.* command runs the same three steps against its key, whatever the limiter:
 *   prepare  open the key, check its type, validate the parameters, decide: fills an rl_pending (the
 *            reply, and the effect to write) and writes nothing;
 *   commit   store the effect, set the expiry, replicate it: only for a real (not DRYRUN) request whose
 *            effect changes the key;
 *   release  close the key and free what prepare took: always.
 * A limiter's storage (store_cell.c, store_log.c) provides the steps; the list (limiters.h) says which
 * limiter uses which. Splitting decide from write lets one command check several limits before writing
 * any. */
#ifndef RL_MODULE_H
#define RL_MODULE_H

#include "redismodule.h"

#include "limiters.h"
#include "store_log.h"

typedef struct rl_limiter rl_limiter;

/* A decision made and not yet written: what prepare hands to commit and release. */
typedef struct rl_pending {
    const rl_limiter *lim;
    const rl_request *req;
    RedisModuleString *keyname;
    RedisModuleKey *key; /* open from prepare to release (NULL before) */
    rl_reply reply;
    int changes; /* committing would change the key (or its expiry) */
    int creates; /* committing would create the key */
    union {
        struct {
            void *stored; /* the key's value (cell_type.c), NULL for a new limiter */
            unsigned stored_words, words; /* the words of the stored state, and of the next */
            int64_t expire_at_ms;
            rl_cell next; /* the state to store */
        } cell;
        rl_log_pending log;
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
    RedisModuleCmdFunc command, command_ro;
    RedisModuleType *type;         /* cell limiters: set at load */
};

extern rl_limiter rl_limiters[RL_NLIMITERS];

/* command.c */
int rl_commands_register(RedisModuleCtx *ctx);
/* Commit a prepared effect: the storage's commit, then signal the key and fire "<command>". */
void rl_commit(RedisModuleCtx *ctx, rl_pending *p);

/* all.c, reset.c */
int rl_all_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rl_all_ro_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rl_reset_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* store_cell.c, store_log.c */
extern const rl_steps rl_cell_steps, rl_log_steps;

/* cell_type.c: the module data types of the cell limiters. A value holds a state's words (inline in the
 * pointer for a small one): rl_value_read copies them into cell and returns how many there are;
 * rl_value_holds says whether a value of stored_words words holds exactly cell's n. */
int rl_cell_types_register(RedisModuleCtx *ctx);
unsigned rl_value_read(const rl_limiter *lim, const void *value, rl_cell *cell);
int rl_value_holds(const void *value, unsigned stored_words, const rl_cell *cell, unsigned n);
/* The cell limiter whose data type an open key holds: NULL if the key is empty, RL_CELL_OTHER if it holds
 * anything else. */
#define RL_CELL_OTHER ((const rl_limiter *)-1)
const rl_limiter *rl_cell_limiter_of(RedisModuleKey *key);
/* Store cell's n words in an open key: into the existing value (stored, of stored_words words; NULL if
 * none) when it has room, else as a new value of the limiter's type. */
void rl_cell_put(RedisModuleKey *key, const rl_limiter *lim, void *stored, unsigned stored_words, const rl_cell *cell,
                 unsigned n);

/* setstate.c: the replicated effect of a cell write, and RL.SETSTATE which applies it. */
void rl_replicate_cell(RedisModuleCtx *ctx, RedisModuleString *keyname, const rl_limiter *lim, const rl_cell *cell,
                       unsigned n, int64_t expire_at_ms);
int rl_setstate_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

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
 * read-only form next, then RL.ALL, RL.ALL_RO, CL.THROTTLE and RL.RESET. keys_deleted is RL.RESET's alone,
 * which has no verdict, units or keys created. */
typedef struct rl_counters {
    long long calls, admitted, denied, units_admitted, errors, keys_created, keys_deleted;
} rl_counters;
#define RL_STAT_ALL (2 * RL_NLIMITERS)
#define RL_STAT_ALL_RO (RL_STAT_ALL + 1)
#define RL_STAT_CL_THROTTLE (RL_STAT_ALL + 2)
#define RL_STAT_RESET (RL_STAT_ALL + 3)
#define RL_NSTATS (RL_STAT_ALL + 4)
extern rl_counters rl_stats[RL_NSTATS];
/* CL.THROTTLE is registered (cl_throttle.c): INFO shows its counters only then. */
extern int rl_cl_throttle_on;
extern long long rl_clients_waiting;
int rl_stats_register(RedisModuleCtx *ctx);
/* Count a call that was decided (and committed when it changed its key); command.c. */
void rl_count(rl_counters *stats, const rl_pending *p);

/* reply.c */
/* The six fields, and `granted` seventh when with_granted (ATMOST). */
int rl_send_reply(RedisModuleCtx *ctx, const rl_reply *reply, int with_granted);
/* RL.ALL's reply: allowed, retry_after_ms, reset_after_ms, then the per-limit replies (RESP3: a map with
 * them under "limits"). */
int rl_send_all_reply(RedisModuleCtx *ctx, int64_t allowed, int64_t retry_after_ms, int64_t reset_after_ms,
                      const rl_reply *limits, int n);
/* What one call answers: an error, one limiter's reply, or RL.ALL's (the verdict, retry and reset, then a
 * reply per limit). allowed and retry_after_ms are the call's either way. */
#define RL_ALL_MAX_LIMITS 16
typedef struct rl_outcome {
    const char *error;        /* NULL, or the error to reply: errbuf, or a constant such as WRONGTYPE */
    char errbuf[RL_ERR_LEN];
    int all;                  /* RL.ALL's shape */
    int with_granted;         /* ATMOST: `granted` seventh */
    int n;                    /* replies */
    int64_t allowed, retry_after_ms, reset_after_ms;
    rl_reply replies[RL_ALL_MAX_LIMITS];
} rl_outcome;
int rl_send_outcome(RedisModuleCtx *ctx, const rl_outcome *o);

/* Decide a call again from its arguments (command, key or numkeys, ...) at the clock's time, as the command
 * would, committing what it admits: a limiter's (command.c; cost >= 0 replaces the request's) or RL.ALL's
 * (all.c). add_flags are or-ed into the request (RL_F_DRYRUN to look). Counts the verdict in stats (NULL:
 * not). */
void rl_limiter_decide(RedisModuleCtx *ctx, const rl_limiter *lim, RedisModuleString **argv, int argc,
                       uint32_t add_flags, int64_t cost, rl_counters *stats, rl_outcome *o);
void rl_all_decide(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, uint32_t add_flags, rl_counters *stats,
                   rl_outcome *o);

/* wait.c: server-side waiting. */
/* Clients waiting with WAIT: while there are none, commands skip every waiting check. */
extern long long rl_waiters;
/* 1 when this call may block its client (not in MULTI, a script, a replicated or loading stream). */
int rl_can_block(RedisModuleCtx *ctx);
/* A call with WAIT timeout_ms (> 0; 0: a call that does not wait), or any call while clients wait: serve
 * the waiters on its keys first (in arrival order), then decide it, and block it when it should wait. lim
 * NULL: RL.ALL, whose keys are keys[0..nkeys). flags: the parsed request's (BLOCK is held as usual).
 * stats: the command's counters (its call is counted). */
int rl_wait_call(RedisModuleCtx *ctx, const rl_limiter *lim, RedisModuleString **argv, int argc, int64_t timeout_ms,
                 uint32_t flags, RedisModuleString **keys, int nkeys, rl_counters *stats);
/* In a command on keys[0..nkeys) of the selected database: admit, in order, the waiters on them that fit
 * (before a call on them is decided, and after budget came back: a refund, RL.RESET). */
void rl_wait_serve_keys(RedisModuleCtx *ctx, RedisModuleString **keys, int nkeys);
/* The module's clock was set or moved (RL.CLOCK): serve every waiter that may now fit. */
void rl_wait_clock_moved(RedisModuleCtx *ctx);
/* BLOCK: block the client and send reply (admitted with wait_ms) after reply->wait_ms, its fields made true
 * at that moment by the call's arguments. */
int rl_hold_reply(RedisModuleCtx *ctx, const rl_limiter *lim, RedisModuleString **argv, int argc,
                  const rl_reply *reply);

#endif
