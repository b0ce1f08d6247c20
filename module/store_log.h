/* store_log.h -- the sliding log's member record, and what its prepare hands to its commit (the log's part
 * of rl_pending, rl_module.h).
 *
 * The log is a plain Redis sorted set (store_log.c says how it works). Every member the log's files read,
 * hold, rewrite or add is one rl_log_member: its name (when held), its score, its weight, and, for a member
 * in the module's format `<time_us>-<seq>:<weight>:<x>:<floor>`, the fields its name carries. A member of
 * any other format (a user's ZADD, a member of an earlier version) weighs 1 and carries no totals. */
#ifndef RL_STORE_LOG_H
#define RL_STORE_LOG_H

#include <stdint.h>

#include "redismodule.h"

#include "limiters.h"

/* One member of the log. Its name is held (and freed) by whoever holds the record; NULL when not held. */
typedef struct rl_log_member {
    RedisModuleString *name;
    int64_t time_us; /* its score, as whole µs (store_log_name.c: rl_log_score_us) */
    int64_t weight;  /* the units it stands for: the costs logged at its time; 1 for another format */
    int ours;        /* in the module's format: the three fields below come from its name (else 0) */
    int64_t seq;     /* tells apart names of one time (a name a user's ZADD took is skipped) */
    int64_t extra_upto;  /* the name's x: the total of (weight - 1) over the module's members from the
                            oldest up to this one, modulo RL_LOG_TOTAL_MOD */
    int64_t extra_below; /* the name's floor: that total just below the oldest of them; read only in the
                            newest module member (older ones keep what they were written with) */
} rl_log_member;

/* What a sliding-log prepare decided (store_log_read.c), for commit (store_log_write.c), which reads the
 * rest of what it writes from the set. */
typedef struct rl_log_pending {
    long long members;    /* members in the set before the call */
    rl_slog_plan plan;
    int64_t expire_at_ms; /* when the log is not empty after the call */
    /* The newest member of the set, when it is the module's and below now: in the common case (no refund)
     * commit starts from it instead of reading the top of the set again. Its name is owned until commit
     * takes it or release frees it; newest.name NULL: commit reads the top itself. */
    rl_log_member newest;
    /* The key's lock (algorithms/lockout.h): its member before the call (lock_name, owned, NULL when none;
     * lock_alone: the key held a lock alone, lock_type.c's type, no set), the record after the call, alive or not,
     * and whether committing changes it. */
    RedisModuleString *lock_name;
    int lock_alone, lock_alive, lock_changes;
    rl_lock lock_before, lock_after;
    int64_t state_expire_before, state_expire_after;
} rl_log_pending;

#endif
