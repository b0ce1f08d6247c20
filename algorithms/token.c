/* token.c -- the token bucket, in exact integer arithmetic.
 *
 * Continuous refill. The bucket gains R tokens every P microseconds (R = refill_tokens, P = refill_ms in
 * µs), capped at C (capacity). Instead of "tokens at the last call" we keep the instant the bucket would
 * have been empty had it never been capped: tokens(t) = min(C, (t - empty_at) * R / P). Measured in
 * "scaled tokens" (tokens * P), that is  scaled(t) = t*R - E  with E = empty_at * R, an integer: E is the
 * empty instant in units of 1/R µs, so no rate is ever rounded. Taking n tokens moves E forward by n*P.
 * The state is E, stored as (e_us, e_rem) with E = e_us*R + e_rem and 0 <= e_rem < R.
 *   - The cap is applied when reading, so changing the capacity takes effect at once and a bucket never
 *     holds more than the capacity of the request that reads it. The time since the last call refills at
 *     the rate of the request that reads it (the stored E does not know the old rate); e_rem is clamped
 *     below the new R, which moves the empty instant by less than 1 µs.
 *   - A clock that runs backwards makes scaled(t) smaller (even negative): fewer tokens, never more. The
 *     state is only rewritten from scaled(t), so when time comes forward again nothing was gained.
 *
 * Interval refill (INTERVAL, Smyte-style). Tokens are a whole count and arrive R at a time at each full P
 * elapsed since the anchor. The anchor is set by the request that takes tokens from a full bucket, and
 * moves forward by whole periods as chunks are added; a bucket found full starts over as a new one.
 * State: (anchor_us, tokens), with RL_TOKEN_INTERVAL_BIT set in the second word.
 *
 * Switching a key between the modes keeps the whole tokens it holds at that moment.
 *
 * REFUND n gives n tokens back now, capped at the capacity: continuous, scaled(now) + n*P capped at C*P
 * (exact: E moves back by n*P, a fraction of a token held is kept); INTERVAL, the whole count + n capped
 * at C, the anchor kept (the chunks in progress still arrive on schedule). A refund that fills the
 * bucket leaves it full, that is idle, as usual. Nothing is taken, so it is always allowed; it is applied
 * after the refill up to now and after a mode switch, like any request. On a new bucket (full) it
 * changes nothing.
 *
 * ATMOST with COST n takes min(n, the whole tokens present) when that is >= 1, and is otherwise the
 * request of 1 token (denied, retry_after_ms when one token is there): see rl_atmost_cost. The whole
 * tokens present are floor(scaled(now) / P) (continuous) or the count after the refill (INTERVAL): the
 * `remaining` a COST 0 call would report.
 *
 * FORCE (COST n, FORCE) takes the n tokens whatever is there: the bucket goes below empty, into debt, and
 * the reply is allowed (retry -1, granted n) even for n above C. remaining is 0 while the bucket holds less
 * than one whole token, debt included; reset_after is the time to refill the debt and then the capacity; a
 * later request without FORCE is denied until its tokens are there again, with the exact retry. In
 * continuous mode the debt is E beyond now (scaled(now) < 0), nothing new in the cell. In INTERVAL mode the
 * whole count goes negative: it is written as the tokens owed with RL_TOKEN_DEBT_BIT (token.h), so a cell
 * without debt is written, and read, exactly as before; chunks then arrive on the anchor's schedule as
 * usual, and a bucket found full from a debt starts over as new. Saturation: a bucket records debt only as
 * deep as leaves it full again within RL_MAX_IDLE_MS of now (the bound every bucket without debt keeps), and
 * never more than RL_MAX_DEBT tokens:
 *   - continuous: scaled(now) >= max(C*P - RL_MAX_IDLE_MS*1000*R, -RL_MAX_DEBT*P), so E <= now + 10^15 µs,
 *     inside the bound cell_valid checks whatever rate reads it later;
 *   - INTERVAL: D tokens owed with C + D <= floor(RL_MAX_IDLE_MS*1000 / P) * R (ceil((C + D) / R) chunks of P
 *     within RL_MAX_IDLE_MS) and D <= RL_MAX_DEBT; none when C alone takes longer. A debt written under a
 *     faster rate is read as the deepest the reading request's rate records.
 * A FORCE beyond that is still allowed; the debt stays at that depth (never shallower than it was: a bucket
 * already deeper, on a clock that went back, is left as it is). Switching modes keeps the debt in whole
 * tokens (a fraction owed is a whole token owed), as deep as the new mode records.
 *
 * Bounds: C, R <= 10^12, P <= 10^15 µs and C*P/R <= 10^15 µs (validate), times <= 7.1*10^16 µs. So
 * t*R < 10^29 and C*P <= 10^27: every product below fits easily in 128 bits, and every duration derived
 * from a valid cell fits in 64 (a debt adds at most 10^15 µs to a refill: the saturation above). */
#include "token.h"

#define TOKEN_REM_MAX ((1ULL << 40) - 1) /* e_rem < R <= 10^12 < 2^40 */
#define TOKEN_TIME_LIMIT (RL_MAX_TIME_US + RL_MAX_IDLE_MS * 1000LL)

typedef rl_rate token_params; /* tokens = refill_tokens */

static token_params token_params_of(const rl_request *req) { return rl_rate_of(req); }

static int token_validate(const rl_request *req, char err[RL_ERR_LEN]) {
    token_params p = token_params_of(req);
    if (rl_rate_too_slow(&p)) return rl_rate_error(err, "refill_tokens", "refill_ms", "refill from empty to full");
    return 0;
}

/* --- continuous refill ------------------------------------------------------------------------------ */

/* Scaled tokens (tokens * P) present at now_us, uncapped below, capped at C*P above. */
static rl_i128 continuous_scaled(const token_params *p, const rl_cell *cell, int64_t now_us) {
    rl_i128 full = (rl_i128)p->capacity * p->period_us;
    rl_i128 scaled = (rl_i128)now_us * p->tokens - rl_instant_read(cell, TOKEN_REM_MAX, p->tokens);
    return scaled > full ? full : scaled;
}

static void continuous_store(const token_params *p, rl_cell *cell, int64_t now_us, rl_i128 scaled) {
    rl_instant_write(cell, (rl_i128)now_us * p->tokens - scaled, p->tokens);
}

/* FORCE: take need scaled tokens whatever is there, down to the deepest debt the bucket records (see the
 * opening comment): the scaled tokens at which it is full again RL_MAX_IDLE_MS from now, and no more than
 * RL_MAX_DEBT tokens below empty. Never more than was there (a bucket already deeper, on a clock that went
 * back or after a change of rate, stays as it is). */
static rl_i128 continuous_forced(const token_params *p, rl_i128 scaled, rl_i128 need) {
    rl_i128 full = (rl_i128)p->capacity * p->period_us;
    rl_i128 deepest = full - (rl_i128)RL_MAX_IDLE_MS * 1000 * p->tokens; /* <= 0: validate */
    rl_i128 most_debt = -(rl_i128)RL_MAX_DEBT * p->period_us;
    if (deepest < most_debt) deepest = most_debt;
    rl_i128 left = scaled - need;
    if (left >= deepest) return left;
    return scaled < deepest ? scaled : deepest;
}

static void continuous_decide(const token_params *p, rl_i128 scaled, int64_t now_us, const rl_request *req,
                              rl_cell *cell, rl_reply *reply) {
    rl_i128 full = (rl_i128)p->capacity * p->period_us;
    int refund = (req->flags & RL_F_REFUND) != 0;
    int64_t cost = req->cost;
    /* ATMOST takes up to the whole tokens present (scaled <= full, so at most C). */
    if (!refund && (req->flags & RL_F_ATMOST))
        cost = rl_atmost_cost(cost, scaled > 0 ? (int64_t)rl_floor_div(scaled, p->period_us) : 0);
    rl_i128 need = (rl_i128)cost * p->period_us; /* <= 10^12 * 10^15 (a little more for crafted costs) */
    if (refund) {
        reply->allowed = 1;
        scaled += need;
        if (scaled > full) scaled = full;
    } else if (req->flags & RL_F_FORCE) {
        reply->allowed = 1;
        scaled = continuous_forced(p, scaled, need);
    } else {
        reply->allowed = cost <= p->capacity && scaled >= need;
        if (reply->allowed) scaled -= need;
    }
    reply->granted = reply->allowed && !refund ? cost : 0;
    reply->remaining = scaled > 0 ? (int64_t)rl_floor_div(scaled, p->period_us) : 0;
    continuous_store(p, cell, now_us, scaled);

    /* scaled grows by R per µs: it reaches x at now + ceil((x - scaled) / R). */
    /* (an admitted request has no retry: rl_reply_times answers -1 without reading it) */
    rl_i128 retry_us = !reply->allowed && cost <= p->capacity ? rl_ceil_div(need - scaled, p->tokens) : -1;
    rl_i128 idle_us = rl_ceil_div(full - scaled, p->tokens);
    rl_reply_times(reply, retry_us, idle_us);
}

/* --- interval refill -------------------------------------------------------------------------------- */

typedef struct interval_state {
    int64_t anchor_us;
    int64_t tokens;  /* == capacity: full, and the anchor means nothing */
} interval_state;

/* Add the chunks earned since the anchor. */
static interval_state interval_refill(const token_params *p, interval_state s, int64_t now_us) {
    if (s.tokens >= p->capacity) {
        s.tokens = p->capacity;
        return s;
    }
    if (now_us <= s.anchor_us) return s;  /* clock behind the anchor: nothing earned yet */
    int64_t periods = (now_us - s.anchor_us) / p->period_us;
    int64_t missing = p->capacity - s.tokens;
    if (periods >= (missing + p->tokens - 1) / p->tokens) {
        s.tokens = p->capacity;
    } else {
        /* periods < missing / R + 1, so periods * R < C + R: no overflow. */
        s.tokens += periods * p->tokens;
        s.anchor_us += periods * p->period_us;
    }
    return s;
}

/* Time from now until the bucket holds `want` tokens (want <= capacity). */
static rl_i128 interval_time_to(const token_params *p, interval_state s, int64_t want, int64_t now_us) {
    if (s.tokens >= want) return 0;
    /* want - tokens <= capacity + RL_MAX_DEBT <= 2 * 10^12 and R >= 1: a 64-bit division, positive, exact. */
    int64_t chunks = (want - s.tokens + p->tokens - 1) / p->tokens;
    return (rl_i128)s.anchor_us + (rl_i128)chunks * p->period_us - now_us;
}

/* The most whole tokens an INTERVAL bucket records below empty: as many as leave it full again within
 * RL_MAX_IDLE_MS of chunks, ceil((C + D) / R) * P <= RL_MAX_IDLE_MS, that is C + D <= floor(idle / P) * R,
 * and at most RL_MAX_DEBT (0 when even C takes longer). */
static int64_t interval_most_debt(const token_params *p) {
    rl_i128 most = (rl_i128)(RL_MAX_IDLE_MS * 1000 / p->period_us) * p->tokens - p->capacity;
    if (most < 0) return 0;
    return most < RL_MAX_DEBT ? (int64_t)most : RL_MAX_DEBT;
}

/* FORCE: take cost whole tokens whatever is there, down to the deepest debt recorded; never more than was
 * there (a bucket already deeper stays as it is). */
static int64_t interval_forced(const token_params *p, int64_t tokens, int64_t cost) {
    int64_t deepest = -interval_most_debt(p);
    rl_i128 left = (rl_i128)tokens - cost;
    if (left >= deepest) return (int64_t)left;
    return tokens < deepest ? tokens : deepest;
}

/* The cell of an INTERVAL state (token.h): the anchor, then the tokens, or the debt with its own bit. */
static void interval_write(interval_state s, rl_cell *cell) {
    cell->w[0] = (uint64_t)s.anchor_us;
    cell->w[1] = RL_TOKEN_INTERVAL_BIT | (s.tokens >= 0 ? (uint64_t)s.tokens : RL_TOKEN_DEBT_BIT | (uint64_t)-s.tokens);
}

/* The tokens owed in a cell with RL_TOKEN_DEBT_BIT, as a request of these parameters reads them: a debt
 * deeper than they record (written under a faster rate) reads as the deepest they do, so that the time to
 * full stays within bounds. Apart: a debt is rare, and the common read stays the two words it was. */
static __attribute__((noinline)) int64_t interval_read_debt(const token_params *p, uint64_t owed) {
    int64_t most = interval_most_debt(p);
    return -((int64_t)owed < most ? (int64_t)owed : most);
}

/* The INTERVAL state in a cell. */
static interval_state interval_read(const token_params *p, const rl_cell *cell) {
    uint64_t count = cell->w[1] & ~(RL_TOKEN_INTERVAL_BIT | RL_TOKEN_DEBT_BIT);
    interval_state s = {(int64_t)cell->w[0], (int64_t)count};
    if (__builtin_expect((cell->w[1] & RL_TOKEN_DEBT_BIT) != 0, 0)) s.tokens = interval_read_debt(p, count);
    return s;
}

/* One request on an INTERVAL bucket. may_owe is a constant at each of the two calls below: 0 for the common
 * case (no FORCE, no debt found), where the bucket never goes below empty and the code is what it was
 * before debts; 1 for the rest. One text, so the two cannot disagree. */
static inline __attribute__((always_inline)) void interval_decide_as(const token_params *p, interval_state s,
                                                                    int64_t now_us, const rl_request *req,
                                                                    rl_cell *cell, rl_reply *reply, int may_owe) {
    int refund = (req->flags & RL_F_REFUND) != 0;
    int64_t cost = req->cost;
    if (refund) {
        /* Whole tokens, capped; the anchor keeps the refill schedule (a full bucket is idle). */
        reply->allowed = 1;
        s.tokens = cost < p->capacity - s.tokens ? s.tokens + cost : p->capacity;
    } else {
        int force = may_owe && (req->flags & RL_F_FORCE) != 0;
        if (req->flags & RL_F_ATMOST) cost = rl_atmost_cost(cost, s.tokens);
        reply->allowed = force || cost <= s.tokens;
        if (reply->allowed && cost > 0) {
            if (s.tokens == p->capacity) s.anchor_us = now_us;
            s.tokens = force ? interval_forced(p, s.tokens, cost) : s.tokens - cost;
        }
    }
    reply->granted = reply->allowed && !refund ? cost : 0;
    reply->remaining = may_owe && s.tokens < 0 ? 0 : s.tokens;
    if (may_owe) {
        interval_write(s, cell);
    } else {
        cell->w[0] = (uint64_t)s.anchor_us;
        cell->w[1] = RL_TOKEN_INTERVAL_BIT | (uint64_t)s.tokens;
    }

    rl_i128 retry_us = !reply->allowed && cost <= p->capacity ? interval_time_to(p, s, cost, now_us) : -1;
    rl_reply_times(reply, retry_us, interval_time_to(p, s, p->capacity, now_us));
}

static __attribute__((noinline)) void interval_decide_owing(const token_params *p, interval_state s, int64_t now_us,
                                                            const rl_request *req, rl_cell *cell, rl_reply *reply) {
    interval_decide_as(p, s, now_us, req, cell, reply, 1);
}

static void interval_decide(const token_params *p, interval_state s, int64_t now_us, const rl_request *req,
                            rl_cell *cell, rl_reply *reply) {
    s = interval_refill(p, s, now_us);
    if (__builtin_expect((req->flags & RL_F_FORCE) || s.tokens < 0, 0))
        interval_decide_owing(p, s, now_us, req, cell, reply);
    else
        interval_decide_as(p, s, now_us, req, cell, reply, 0);
}

/* --- the algorithm ---------------------------------------------------------------------------------- */

static void token_decide(const rl_request *req, rl_cell *cell, int exists, rl_reply *reply) {
    token_params p = token_params_of(req);
    int want_interval = (req->flags & RL_F_INTERVAL) != 0;
    int was_interval = exists && (cell->w[1] & RL_TOKEN_INTERVAL_BIT);
    int64_t now = req->now_us;

    reply->limit = p.capacity;
    reply->wait_ms = 0;

    /* Whole tokens present now, for a new bucket or one switching modes. */
    int64_t tokens = p.capacity;
    if (exists && was_interval != want_interval) {
        if (was_interval) {
            tokens = interval_refill(&p, interval_read(&p, cell), now).tokens;
        } else {
            /* A debt is kept whole (a fraction of a token owed is a whole token owed), as deep as INTERVAL
             * records one. */
            rl_i128 scaled = continuous_scaled(&p, cell, now);
            rl_i128 whole = scaled > 0 ? scaled / p.period_us : scaled < 0 ? rl_floor_div(scaled, p.period_us) : 0;
            rl_i128 deepest = -(rl_i128)interval_most_debt(&p);
            tokens = (int64_t)(whole < deepest ? deepest : whole);
        }
        exists = 0;
    }

    if (want_interval) {
        interval_state s = {now, tokens};
        if (exists) s = interval_read(&p, cell);
        interval_decide(&p, s, now, req, cell, reply);
    } else {
        rl_i128 scaled = exists ? continuous_scaled(&p, cell, now) : (rl_i128)tokens * p.period_us;
        continuous_decide(&p, scaled, now, req, cell, reply);
    }
}

static int token_cell_valid(const rl_cell *cell) {
    int64_t t = (int64_t)cell->w[0];
    if (t > TOKEN_TIME_LIMIT || t < -TOKEN_TIME_LIMIT) return 0;
    if (cell->w[1] & RL_TOKEN_INTERVAL_BIT) {
        uint64_t count = cell->w[1] & ~(RL_TOKEN_INTERVAL_BIT | RL_TOKEN_DEBT_BIT);
        if (cell->w[1] & RL_TOKEN_DEBT_BIT) return count >= 1 && count <= (uint64_t)RL_MAX_DEBT;
        return count <= (uint64_t)RL_MAX_COUNT;
    }
    return cell->w[1] <= TOKEN_REM_MAX;
}

const rl_algorithm rl_token_algorithm = {
    .validate = token_validate,
    .decide = token_decide,
    .cell_valid = token_cell_valid,
    .words = rl_two_words,
};
