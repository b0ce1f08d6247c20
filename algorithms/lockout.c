/* lockout.c -- lockouts: when a denial locks a key, for how long, and when its strikes are forgiven.
 *
 * The rules (docs/commands.md, LOCKOUT):
 *   - a request that the limiter denies, of a cost of 1 or more, with LOCKOUT, starts a lock on its key at
 *     now. A look (COST 0) never does: it asks, it does not attempt. The n-th lock since the key was last
 *     forgiven lasts ms * factor^(n - 1), at most MAXLOCK (computed by repeated multiplication, stopping at the
 *     cap, so it never overflows whatever n is);
 *   - while a lock holds, every request is denied; its retry is the later of the lock's end and the
 *     limiter's own retry, so a client that waits retry_after_ms is not denied by its limiter at once;
 *   - the strikes go back to 0 FORGIVE ms after a lock ended without a new one. FORGIVE is read from the
 *     request that starts the lock (the record keeps the instant), as is everything else: a lock already
 *     started keeps its length and its forgiveness whatever later requests say;
 *   - RL.BLOCK sets the lock's end by hand: it counts no strike, and keeps the strikes and their forgiving
 *     (moved to the lock's end if that is later, so the record does not forgive during a lock).
 * Times are µs like the limiters'; a lock's end is now + ms * 1000 with ms <= RL_MAX_PERIOD_MS, far inside
 * int64 for any time the clock gives (rl_common.h). */
#include "lockout.h"

#include <stdio.h>

int rl_lockout_validate(const rl_request *req, char err[RL_ERR_LEN]) {
    uint32_t extra = req->flags & (RL_F_BACKOFF | RL_F_MAXLOCK | RL_F_FORGIVE);
    if (extra && !(req->flags & RL_F_LOCKOUT)) {
        const char *name = (extra & RL_F_BACKOFF) ? "BACKOFF" : (extra & RL_F_MAXLOCK) ? "MAXLOCK" : "FORGIVE";
        snprintf(err, RL_ERR_LEN, "ERR %s: needs LOCKOUT ms", name);
        return -1;
    }
    if ((req->flags & RL_F_MAXLOCK) && req->lock_max_ms < req->lockout_ms) {
        snprintf(err, RL_ERR_LEN, "ERR MAXLOCK: must be at least LOCKOUT's ms");
        return -1;
    }
    return 0;
}

int64_t rl_lock_length_ms(const rl_request *req, int64_t n) {
    int64_t cap = (req->flags & RL_F_MAXLOCK) ? req->lock_max_ms : RL_MAX_PERIOD_MS;
    int64_t factor = (req->flags & RL_F_BACKOFF) ? req->lock_backoff : 1;
    int64_t ms = req->lockout_ms;
    for (int64_t i = 1; i < n && factor > 1 && ms < cap; i++) {
        if (ms > cap / factor) return cap; /* ms * factor > cap */
        ms *= factor;
    }
    return ms < cap ? ms : cap;
}

/* The reply's reset_after covers the record up to its end. */
static void cover(const rl_lock *l, int64_t now_us, rl_reply *reply) {
    int64_t left_us = rl_lock_end_us(l) - now_us;
    if (left_us > reply->reset_after_us) {
        reply->reset_after_us = left_us;
        reply->reset_after_ms = rl_us_to_ms_ceil(left_us);
    }
}

void rl_lock_deny(const rl_lock *l, int64_t now_us, rl_reply *reply) {
    int64_t own_retry = reply->allowed ? 0 : reply->retry_after_ms;
    int64_t lock_ms = rl_us_to_ms_ceil((rl_i128)l->until_us - now_us);
    reply->allowed = 0;
    reply->remaining = 0;
    reply->granted = 0;
    reply->wait_ms = 0;
    reply->retry_after_ms = own_retry < 0 ? -1 : own_retry > lock_ms ? own_retry : lock_ms;
    cover(l, now_us, reply);
}

int rl_lock_after(const rl_request *req, rl_lock *l, rl_reply *reply) {
    int64_t now_us = req->now_us;
    if (!rl_lock_alive(l, now_us)) *l = (rl_lock){0, 0, 0};
    int starts = (req->flags & RL_F_LOCKOUT) && !reply->allowed && req->cost >= 1 && !(req->flags & RL_F_REFUND);
    if (starts) {
        int64_t n = rl_lock_strikes(l, now_us) + 1;
        int64_t ms = rl_lock_length_ms(req, n);
        int64_t cap = (req->flags & RL_F_MAXLOCK) ? req->lock_max_ms : RL_MAX_PERIOD_MS;
        int64_t forgive_ms = (req->flags & RL_F_FORGIVE) ? req->lock_forgive_ms
                             : (req->flags & RL_F_BACKOFF) ? cap /* escalating: MAXLOCK's */
                                                           : ms; /* the lock's length */
        l->strikes = n;
        l->until_us = now_us + ms * 1000;
        l->forgive_us = l->until_us + forgive_ms * 1000;
        rl_lock_deny(l, now_us, reply);
        return 1;
    }
    if (rl_lock_alive(l, now_us)) cover(l, now_us, reply);
    return 0;
}

void rl_lock_block(rl_lock *l, int64_t now_us, int64_t ms) {
    if (!rl_lock_alive(l, now_us)) *l = (rl_lock){0, 0, 0};
    l->until_us = now_us + ms * 1000;
    if (l->strikes == 0) l->forgive_us = l->until_us;
    else if (l->forgive_us < l->until_us) l->forgive_us = l->until_us;
}

int rl_lock_valid(const rl_lock *l) {
    const int64_t limit = RL_MAX_TIME_US + 2 * RL_MAX_PERIOD_MS * 1000LL;
    return l->until_us >= 0 && l->until_us <= limit && l->forgive_us >= l->until_us && l->forgive_us <= limit + RL_MAX_PERIOD_MS * 1000LL &&
           l->strikes >= 0 && l->strikes <= RL_MAX_COUNT;
}
