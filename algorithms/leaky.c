/* leaky.c -- the leaky bucket, in exact integer arithmetic.
 *
 * A bucket holds up to C units (capacity) and drains continuously, R units every P microseconds
 * (R = leak_tokens, P = leak_ms in µs), so one unit drains in T = P/R µs, an exact rational. A request of
 * n units is admitted when the bucket, drained up to now, has room for it: L + n <= C, L being the level
 * now. A denied request adds nothing.
 *
 * Shaping and policing. By default the bucket is a queue: an admitted request is to be served once the
 * L units ahead of it have drained, so wait_ms = ceil(L * T) in ms. A burst of C unit requests on an idle
 * key thus gets waits 0, T, 2T, ..., (C-1)T. With NODELAY the same requests are admitted but served at
 * once (wait_ms 0): that is GCRA policing, C being the burst.
 *
 * REFUND n takes n units out of the bucket now, not below empty: the level drops to max(0, L - n), so
 * the exact empty instant moves back by n*T, but never before now (units that have drained already cannot
 * be given back). It is always allowed, and waits for nothing (wait_ms 0); a refund that empties the
 * bucket leaves it idle. On a new bucket (empty) it changes nothing. The leaky bucket has no ATMOST: the
 * flag is ignored (granted is the cost when allowed, 0 when denied, 0 for a refund).
 *
 * Representation. Instead of "level at the last call" we keep the instant the bucket will be empty, the
 * theoretical arrival time of GCRA. Measured in "scaled units" (units * P), the level is
 *     scaled(t) = max(0, Q - t*R)
 * with Q = empty_at * R, an integer: Q is the empty instant in units of 1/R µs, so no rate is ever
 * rounded. Adding n units moves Q to max(Q, t*R) + n*P, refunding n moves it to max(t*R, Q - n*P). Q is
 * stored as (tat_us, rem) with Q = tat_us*R + rem and 0 <= rem < R (see leaky.h).
 *   - The time until empty is scaled / R µs, so wait, retry and reset are exact rationals, rounded up
 *     once, at the end.
 *   - A change of parameters takes effect at once: the stored empty instant is kept and the level is
 *     whatever the new rate says lies ahead of it (the stored Q does not know the old rate); rem is clamped
 *     below the new R, which moves the empty instant by less than 1 µs. The level can then exceed a new,
 *     smaller capacity: everything is denied until it drains, and remaining is 0.
 *   - A clock that runs backwards makes scaled(t) larger: a fuller bucket, never room that was not
 *     there. The state is only rewritten from scaled(t), so Q keeps every unit admitted.
 *
 * FORCE (with NODELAY; COST n, FORCE) adds the n units whatever the room: the level may pass the capacity,
 * which is the debt, and the reply is allowed (retry -1, wait 0, granted n) even for n above C. remaining is
 * 0 while the level is above C - 1; reset_after is the time to drain everything, the debt first; a later
 * request without FORCE is denied until the level is down to C - n, with the exact retry. Nothing new is
 * stored: the empty instant is simply further ahead. Saturation: the level recorded is at most the one that
 * drains to empty within RL_MAX_IDLE_MS of now (the bound every bucket without debt keeps: so the empty
 * instant stays inside what cell_valid accepts), and at most C + RL_MAX_DEBT units; a FORCE beyond it is
 * still allowed and the level stays there (never lower than it was). Without NODELAY FORCE is refused
 * (validate): a shaping bucket is a queue, each request waits its turn, so "past the capacity" would only
 * be a longer queue than the capacity allows, not a debt; `BLOCK` (shaping) conflicts with FORCE anyway.
 *
 * Bounds: C, R <= 10^12, P <= 10^15 µs and C*P/R <= 10^15 µs (validate), times <= 7.1*10^16 µs. So
 * t*R < 10^29 and C*P <= 10^27: every product below fits easily in 128 bits, and every duration derived
 * from a valid cell fits in 64 (a debt's level drains within 10^15 µs too: the saturation above). */
#include "leaky.h"

#include <stdio.h>

#define LEAKY_TIME_LIMIT (RL_MAX_TIME_US + RL_MAX_IDLE_MS * 1000LL)

typedef rl_rate leaky_params; /* tokens = leak_tokens */

static leaky_params leaky_params_of(const rl_request *req) { return rl_rate_of(req); }

static int leaky_validate(const rl_request *req, char err[RL_ERR_LEN]) {
    leaky_params p = leaky_params_of(req);
    if (rl_rate_too_slow(&p)) return rl_rate_error(err, "leak_tokens", "leak_ms", "draining from full to empty");
    if ((req->flags & RL_F_FORCE) && !(req->flags & RL_F_NODELAY)) {
        snprintf(err, RL_ERR_LEN,
                 "ERR FORCE: needs NODELAY (a shaping bucket queues requests: it has no debt, a policing one does)");
        return -1;
    }
    return 0;
}

/* Scaled level (units * P) in the bucket at now_us: what lies between now and the empty instant. */
static rl_i128 leaky_scaled_level(const leaky_params *p, const rl_cell *cell, int64_t now_us) {
    rl_i128 scaled = rl_instant_read(cell, UINT64_MAX, p->tokens) - (rl_i128)now_us * p->tokens;
    return scaled > 0 ? scaled : 0;
}

/* Store the empty instant that leaves `scaled` in the bucket at now_us. */
static void leaky_store(const leaky_params *p, rl_cell *cell, int64_t now_us, rl_i128 scaled) {
    rl_instant_write(cell, (rl_i128)now_us * p->tokens + scaled, p->tokens);
}

/* Microseconds until a bucket holding `scaled` has drained down to `target` (0 if already there). The
 * level falls by R scaled units per µs. */
static rl_i128 leaky_time_to_drain(const leaky_params *p, rl_i128 scaled, rl_i128 target) {
    return scaled > target ? rl_ceil_div(scaled - target, p->tokens) : 0;
}

/* FORCE: add need scaled units whatever the room, up to the highest level recorded (the opening comment):
 * the one that drains to empty RL_MAX_IDLE_MS from now, and no more than RL_MAX_DEBT units above the
 * capacity. Never less than was there. */
static rl_i128 leaky_forced(const leaky_params *p, rl_i128 scaled, rl_i128 need) {
    rl_i128 highest = (rl_i128)RL_MAX_IDLE_MS * 1000 * p->tokens; /* >= C*P: validate */
    rl_i128 most_debt = (rl_i128)p->capacity * p->period_us + (rl_i128)RL_MAX_DEBT * p->period_us;
    if (highest > most_debt) highest = most_debt;
    rl_i128 level = scaled + need;
    if (level <= highest) return level;
    return scaled > highest ? scaled : highest;
}

static void leaky_decide(const rl_request *req, rl_cell *cell, int exists, rl_reply *reply) {
    leaky_params p = leaky_params_of(req);
    int64_t now = req->now_us, cost = req->cost;
    int refund = (req->flags & RL_F_REFUND) != 0;
    rl_i128 full = (rl_i128)p.capacity * p.period_us;
    rl_i128 need = (rl_i128)cost * p.period_us; /* <= 10^12 * 10^15 (a little more for crafted costs) */
    rl_i128 scaled = exists ? leaky_scaled_level(&p, cell, now) : 0; /* a new key is an empty bucket */

    reply->limit = p.capacity;
    reply->wait_ms = 0;
    if (refund) {
        /* n units out of the bucket at once, not below empty: served at once, nothing to wait for. */
        reply->allowed = 1;
        scaled = scaled > need ? scaled - need : 0;
    } else if (req->flags & RL_F_FORCE) { /* NODELAY (validate): no wait, the level may pass the capacity */
        reply->allowed = 1;
        scaled = leaky_forced(&p, scaled, need);
    } else {
        reply->allowed = cost <= p.capacity && scaled + need <= full;
        /* The units already in the bucket drain before this request's do: that is the shaping delay. It
         * is the exact rational scaled / R µs, rounded up to whole ms in one step. */
        if (reply->allowed && !(req->flags & RL_F_NODELAY))
            reply->wait_ms = rl_sat64(rl_ceil_div(scaled, (rl_i128)p.tokens * 1000));
        if (reply->allowed) scaled += need;
    }
    reply->granted = reply->allowed && !refund ? cost : 0;
    reply->remaining = scaled < full ? rl_sat64(rl_floor_div(full - scaled, p.period_us)) : 0;
    leaky_store(&p, cell, now, scaled);

    /* Denied: room for n units opens when the level is down to C - n. */
    /* (an admitted request has no retry: rl_reply_times answers -1 without reading it) */
    rl_i128 retry_us = !reply->allowed && cost <= p.capacity ? leaky_time_to_drain(&p, scaled, full - need) : -1;
    rl_reply_times(reply, retry_us, leaky_time_to_drain(&p, scaled, 0));
}

static int leaky_cell_valid(const rl_cell *cell) {
    /* The empty instant is never before the call that wrote it (times are >= 0) and never more than
     * RL_MAX_IDLE_MS after it; the remainder is below R <= RL_MAX_COUNT. */
    return cell->w[0] <= (uint64_t)LEAKY_TIME_LIMIT && cell->w[1] < (uint64_t)RL_MAX_COUNT;
}

const rl_algorithm rl_leaky_algorithm = {
    .validate = leaky_validate,
    .decide = leaky_decide,
    .cell_valid = leaky_cell_valid,
    .words = rl_two_words,
};
