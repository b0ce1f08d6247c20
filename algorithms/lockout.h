/* lockout.h -- lockouts: a denial that locks the key, longer for repeat offenders (LOCKOUT ms [BACKOFF factor]
 * [MAXLOCK ms] [FORGIVE ms], on every limiter that denies), and the lock set by hand (RL.BLOCK).
 *
 * A key's lock record is three numbers beside its limiter's state (module/cell_type.c keeps them in the
 * key's value; a key may hold a lock and no state at all): when the lock ends, how many locks LOCKOUT has
 * started since the key was last forgiven (its strikes), and when those strikes are forgiven. While the lock
 * holds every request to the key is denied, whatever its limiter would say; the limiter's state is neither
 * read for a decision nor written, only for the retry the reply gives (the later of the lock's end and the
 * limiter's own retry). The record says nothing once the lock has ended and the strikes are forgiven (or
 * there are none): the key's state is then exactly its limiter's. This file decides; the module stores. */
#ifndef RL_LOCKOUT_H
#define RL_LOCKOUT_H

#include "rl_common.h"

/* The options (on every limiter command that takes LOCKOUT, and RL.ALL's clauses): LOCKOUT ms starts a lock
 * of ms at a denial; BACKOFF factor (1..16, default 1) multiplies each next lock; MAXLOCK ms caps a lock
 * (default RL_MAX_PERIOD_MS); FORGIVE ms is how long after a lock ends without a new one its strikes are
 * forgiven (default: with BACKOFF, MAXLOCK, whose own default is RL_MAX_PERIOD_MS; without, the lock's
 * length). Their values go to the
 * request's lockout_ms, lock_backoff, lock_max_ms and lock_forgive_ms. They are the module's flags (no
 * algorithm reads them: the module applies lockout.c around every algorithm). */
#define RL_F_LOCKOUT RL_F_MODULE(3)
#define RL_F_BACKOFF RL_F_MODULE(4)
#define RL_F_MAXLOCK RL_F_MODULE(5)
#define RL_F_FORGIVE RL_F_MODULE(6)
#define RL_LOCK_MAX_BACKOFF 16
/* Any of the four: a request without them has nothing for rl_lockout_validate to check. */
#define RL_LOCK_FLAGS (RL_F_LOCKOUT | RL_F_BACKOFF | RL_F_MAXLOCK | RL_F_FORGIVE)

typedef struct rl_lock {
    int64_t until_us;   /* the lock holds while now < until_us */
    int64_t forgive_us; /* strikes > 0: they are forgiven at this instant (>= until_us) */
    int64_t strikes;    /* the locks LOCKOUT started since the key was last forgiven */
} rl_lock;

/* 0, or -1 with the error: BACKOFF, MAXLOCK and FORGIVE need LOCKOUT, and MAXLOCK is at least LOCKOUT's ms. */
int rl_lockout_validate(const rl_request *req, char err[RL_ERR_LEN]);

/* The length in ms of the n-th lock (n >= 1): ms * factor^(n - 1), at most MAXLOCK. */
int64_t rl_lock_length_ms(const rl_request *req, int64_t n);

/* The lock holds at now. */
static inline int rl_lock_holds(const rl_lock *l, int64_t now_us) { return now_us < l->until_us; }

/* The record still says something at now: a lock that holds, or strikes not yet forgiven. */
static inline int rl_lock_alive(const rl_lock *l, int64_t now_us) {
    return now_us < l->until_us || (l->strikes > 0 && now_us < l->forgive_us);
}

/* The instant from which the record says nothing (the key's expiry must not come before it). */
static inline int64_t rl_lock_end_us(const rl_lock *l) {
    return l->strikes > 0 && l->forgive_us > l->until_us ? l->forgive_us : l->until_us;
}

/* The strikes that count at now (0 once forgiven). */
static inline int64_t rl_lock_strikes(const rl_lock *l, int64_t now_us) {
    return l->strikes > 0 && now_us < l->forgive_us ? l->strikes : 0;
}

/* The request a locked call asks its limiter, for the reset_after of the state as it stands (nothing of the
 * call is taken while the lock holds): a COST 0 look, writing nothing. */
static inline rl_request rl_lock_look(const rl_request *req) {
    rl_request look = *req;
    look.cost = 0;
    look.flags = (look.flags & ~(uint32_t)(RL_F_REFUND | RL_F_ATMOST)) | RL_F_DRYRUN | RL_F_NOLOG;
    return look;
}

/* A call on a key whose lock holds at now: reply, the limiter's own reply to the request (decided but not to
 * be written; its reset_after that of the state as it stands: rl_lock_look), becomes the lock's denial: allowed 0, remaining 0, granted 0, wait 0, retry_after the later of
 * the lock's end and the limiter's own retry (-1 stays -1: the request never fits), reset_after at least to
 * the end of the record. */
void rl_lock_deny(const rl_lock *l, int64_t now_us, rl_reply *reply);

/* After a decision on a key whose lock does not hold: *l is the key's record (zeros when none). When req has
 * LOCKOUT and the limiter denied a request of a cost >= 1, the next lock starts at now (its strikes counted
 * from 0 again if they were forgiven) and the reply becomes its denial; a record that says nothing any more
 * is cleared. The reply's reset_after covers what is left of the record. Returns 1 when a lock started. */
int rl_lock_after(const rl_request *req, rl_lock *l, rl_reply *reply);

/* RL.BLOCK: the lock holds from now for ms (replacing the end of any lock), strikes kept. */
void rl_lock_block(rl_lock *l, int64_t now_us, int64_t ms);

/* 1 when the record could have been written here (RDB load and RL.SETSTATE check it). */
int rl_lock_valid(const rl_lock *l);

#endif
