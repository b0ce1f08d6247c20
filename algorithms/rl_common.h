/* rl_common.h -- what every rate-limiting algorithm shares.
 *
 * The algorithms are pure functions of (parameters, stored state, time): no Redis, no clock, no I/O. The
 * module feeds them one request and the key's stored cell, and they fill in the common six-field reply
 * and the cell to store back. Because time is an argument, unit tests drive them with a fake clock.
 *
 * Arithmetic is integer only. Time is in microseconds (int64). Rates are kept as exact rationals
 * (tokens per period) and every product that could leave 64 bits is taken in 128 bits, so no float drift
 * and no wrap-around: the limits below bound every intermediate value, and the comments at each use say
 * why it fits. */
#ifndef RL_COMMON_H
#define RL_COMMON_H

#include <stdint.h>

/* Counts (capacity, limit, cost, tokens) go up to 10^12; periods up to 10^12 ms (about 31.7 years). */
#define RL_MAX_COUNT 1000000000000LL
#define RL_MAX_PERIOD_MS 1000000000000LL
/* A bucket that needs longer than this to go from empty (or full) back to idle is refused; a window is
 * idle at most two windows (2 * RL_MAX_PERIOD_MS) after its last request. Either way every deadline the
 * algorithms compute stays far inside int64 microseconds. */
#define RL_MAX_IDLE_MS RL_MAX_PERIOD_MS
/* The clock runs from the Unix epoch up to 2^46 ms (the year 4199). Times outside are clamped by the
 * module's clock; the algorithms rely on it. */
#define RL_MAX_TIME_MS (1LL << 46)
#define RL_MAX_TIME_US (RL_MAX_TIME_MS * 1000LL)

typedef __int128 rl_i128;

/* The common reply of every RL.* command (see docs/commands.md). reset_after_us is the exact time to
 * idle, kept for the module to set the key's expiry; it is not sent to clients. granted is the seventh
 * field, sent only with ATMOST; every cell algorithm fills it in every reply. */
typedef struct rl_reply {
    int64_t allowed;
    int64_t limit;
    int64_t remaining;
    int64_t retry_after_ms;  /* -1 when allowed or never */
    int64_t reset_after_ms;  /* 0 means idle: the key is deleted (or never created) */
    int64_t wait_ms;
    /* The units this request consumed: cost when allowed (without ATMOST), 0 when denied; with ATMOST
     * the units actually taken, from 1 to cost when allowed (0 for COST 0); 0 for a REFUND, which
     * consumes nothing. */
    int64_t granted;
    int64_t reset_after_us;
} rl_reply;

#define RL_REPLY_FIELDS 6
/* The six fields' names, then "granted", the seventh field a reply carries with ATMOST. */
extern const char *const rl_reply_field_names[RL_REPLY_FIELDS + 1];

/* Request flags: one bit per option given. The common ones are read by every algorithm; each algorithm
 * declares its own options with RL_F_ALG(n) in its header (bits may repeat across algorithms, as each
 * command accepts only its own options), and the module its own with RL_F_MODULE(n) (module/parse.h). */
enum {
    RL_F_DRYRUN = 1u << 0, /* decide, store nothing */
    RL_F_COST = 1u << 1,   /* COST was given (the parser's record; req->cost holds the value) */
    /* REFUND n (every limiter command; excludes COST): give back up to n units of what was consumed,
     * req->cost holding n. Never more than the capacity, never below an empty counter (or log); always
     * allowed (retry_after_ms -1, wait_ms 0, granted 0), the reply describing the state after the refund.
     * A refund of 0, or on a new limiter, changes nothing (but what every call does: the sliding log still
     * trims what left its window). Each algorithm's opening comment says exactly what it gives back. With
     * both flags set, REFUND wins (ATMOST goes with COST, which REFUND excludes). */
    RL_F_REFUND = 1u << 2,
    /* ATMOST (RL.TOKEN, RL.WINDOW, with COST n): admit as many units as are available now, from 1 to n.
     * "Available" is what `remaining` of a COST 0 call would say. The request is then exactly the request
     * of COST g = min(n, available) when that is >= 1 (allowed, granted g), else of COST 1 (denied,
     * granted 0, retry_after_ms when 1 unit would be admitted); COST 0 is COST 0 (granted 0). A cost
     * above the capacity is thus not "never" with ATMOST. rl_atmost_cost computes that cost. */
    RL_F_ATMOST = 1u << 3,
    /* Not an option: a denied attempt is not logged. RL.ALL writes nothing when a limit denies, so it
     * asks every limit to describe itself this way; only an algorithm that logs attempts (the sliding log)
     * reads it. Common, not RL_F_ALG: it is set on every kind of limit. */
    RL_F_NOLOG = 1u << 4,
    /* FORCE (with COST n: RL.TOKEN, RL.LEAKY NODELAY, RL.WINDOW, RL.QUOTA, RL.SLIDINGLOG and RL.ALL): the
     * units are always taken, even when they do not fit, and the state goes into debt (a bucket below empty,
     * a window's count above its limit). The reply is allowed (retry_after_ms -1, granted the cost), says
     * remaining 0 while in debt, and its reset_after_ms includes the time to repay the debt; a later request
     * without FORCE is denied until its units fit again, with an exact retry_after_ms. How much debt a state
     * can hold, and what a FORCE beyond it does, each algorithm's opening comment says (at most
     * RL_MAX_DEBT units). Excludes REFUND, ATMOST, WAIT and BLOCK (a forced request never waits). */
    RL_F_FORCE = 1u << 5,
};
/* The most units of debt a state records (FORCE). */
#define RL_MAX_DEBT RL_MAX_COUNT
#define RL_F_MODULE(n) (1u << (8 + (n)))
#define RL_F_ALG(n) (1u << (16 + (n)))

/* One parsed request. params[] are the command's positional numbers in order (for RL.TOKEN: capacity,
 * refill_tokens, refill_ms); options with a value may fill the ones after them (RL.SMOOTH, whose one
 * positional number leaves room for four numbers in all: algorithms/smooth.h). */
typedef struct rl_request {
    int64_t params[3]; /* the command's positional numbers, in its syntax's order */
    int64_t cost;
    int64_t mingap_ms;  /* RL.SLIDINGLOG MINGAP (slidinglog.h), 0 when absent */
    uint32_t flags;
    int64_t now_us;
    int64_t maxwait_ms;      /* RL.SMOOTH MAXWAIT (smooth.h), with RL_F_MAXWAIT */
    int64_t wait_timeout_ms; /* WAIT timeout_ms (module/wait.c), with RL_F_WAIT */
    int64_t id_arg;          /* ID lease_id (RL.ACQUIRE): the index of its value among the clause's arguments */
    /* LOCKOUT ms [BACKOFF factor] [MAXLOCK ms] [FORGIVE ms] (lockout.h): each meaningful only with its flag (the
     * parser leaves them as they were otherwise), and last, so that the fields before them are zeroed at once */
    int64_t lockout_ms, lock_backoff, lock_max_ms, lock_forgive_ms;
} rl_request;

/* The stored state of one limiter: up to RL_CELL_MAX_WORDS 64-bit words, whatever the algorithm packs into
 * them. How many a state uses is the algorithm's `words` (read from the state itself, so a stored value
 * needs no length of its own): two for the token and leaky buckets and the two-count windows, which keeps
 * a key's value in the smallest allocator class that holds exact state; more for a state that must keep
 * its parameters (RL.SMOOTH) or one count per sub-window (RL.WINDOW SUBWINDOWS). A key's value holds only
 * the words in use; a cell on the stack has room for the largest. */
#define RL_CELL_MAX_WORDS 64
typedef struct rl_cell {
    uint64_t w[RL_CELL_MAX_WORDS];
} rl_cell;

/* The size of an error message, with its NUL: long enough for any message the project writes (the longest: a
 * policy's limit named by its number and 32-character name before a clause's own error, or two policy names of
 * 64 characters in one message). */
#define RL_ERR_LEN 256

/* What a cell algorithm exports: one decision, a check of parameter combinations the per-argument ranges
 * cannot express, and a check that a cell could have been written by this algorithm (for RDB load and
 * RL.SETSTATE, whose input may be crafted), and the size of a state. */
typedef struct rl_algorithm {
    /* Returns 0, or -1 with the complete error reply ("ERR <argument>: <what is wrong>") in err. */
    int (*validate)(const rl_request *req, char err[RL_ERR_LEN]);
    /* Decide req against *cell (exists == 0: a new limiter, whose cell holds zeros in its first two
     * words and nothing defined after). On return *cell is the state to store (words(cell) of them) when
     * reply->reset_after_ms > 0. */
    void (*decide)(const rl_request *req, rl_cell *cell, int exists, rl_reply *reply);
    /* 1 when the cell's words (words(cell) of them; the rest is not read) are a state this algorithm
     * could have written. */
    int (*cell_valid)(const rl_cell *cell);
    /* How many words the state in cell holds, from 1 to RL_CELL_MAX_WORDS, read from its first word
     * alone (a value loaded from RDB or RL.SETSTATE is sized by it before the rest is read). */
    unsigned (*words)(const rl_cell *cell);
} rl_algorithm;

/* `words` for an algorithm whose state is always two words. */
unsigned rl_two_words(const rl_cell *cell);

/* The error of a bucket whose parameters would take longer than RL_MAX_IDLE_MS to go from one end to the
 * other (what: "refill from empty to full"); shared by the token and leaky buckets. Returns -1. */
int rl_rate_error(char err[RL_ERR_LEN], const char *tokens_name, const char *ms_name, const char *what);

/* --- exact integer helpers ------------------------------------------------------------------------ */

/* 1 when both fit in 64 bits: a 128-bit division is a library call ten times the cost of a 64-bit one,
 * and with the usual parameters (rates far below the bounds) the operands of nearly every division fit.
 * The result is the same either way; only the instruction differs. */
static inline int rl_fits64(rl_i128 a, rl_i128 b) { return a == (int64_t)a && b == (int64_t)b; }

/* Floor and ceiling of a / b for b > 0, any sign of a. */
static inline rl_i128 rl_floor_div(rl_i128 a, rl_i128 b) {
    if (rl_fits64(a, b)) {
        int64_t x = (int64_t)a, y = (int64_t)b, q = x / y; /* y > 0: no INT64_MIN / -1 */
        return (x % y != 0 && x < 0) ? q - 1 : q;
    }
    rl_i128 q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}
static inline rl_i128 rl_ceil_div(rl_i128 a, rl_i128 b) {
    if (rl_fits64(a, b)) {
        int64_t x = (int64_t)a, y = (int64_t)b, q = x / y;
        return (x % y != 0 && x > 0) ? q + 1 : q;
    }
    rl_i128 q = a / b;
    return (a % b != 0 && a > 0) ? q + 1 : q;
}

/* A duration in microseconds (>= 0 expected) as whole milliseconds, rounded up, saturated to int64. */
static inline int64_t rl_us_to_ms_ceil(rl_i128 us) {
    if (us <= 0) return 0;
    rl_i128 ms = rl_ceil_div(us, 1000);
    return ms > INT64_MAX ? INT64_MAX : (int64_t)ms;
}

/* Clamp a 128-bit value into int64 (used where the bounds above already guarantee it fits, as a last
 * line of defence against crafted cells). */
static inline int64_t rl_sat64(rl_i128 v) {
    if (v > INT64_MAX) return INT64_MAX;
    if (v < INT64_MIN) return INT64_MIN;
    return (int64_t)v;
}

/* The cost an ATMOST request of n is decided as, given the units available now (>= 0): min(n, available)
 * when that is >= 1, else 1 (denied: retry_after_ms says when 1 unit is there); 0 stays 0. */
static inline int64_t rl_atmost_cost(int64_t n, int64_t available) {
    if (n <= 0) return n;
    if (available < 1) return 1;
    return available < n ? available : n;
}

/* --- rates and exact instants (token and leaky buckets) -------------------------------------------- */

/* A bucket's parameters: capacity, and a rate of `tokens` per `period_us` (params[0..2], the period
 * given in ms). */
typedef struct rl_rate {
    int64_t capacity, tokens, period_us;
} rl_rate;

static inline rl_rate rl_rate_of(const rl_request *req) {
    rl_rate r = {req->params[0], req->params[1], req->params[2] * 1000};
    return r;
}

/* 1 when filling (or draining) the whole capacity takes longer than RL_MAX_IDLE_MS: C * P / R µs. */
static inline int rl_rate_too_slow(const rl_rate *r) {
    return (rl_i128)r->capacity * r->period_us > (rl_i128)RL_MAX_IDLE_MS * 1000 * r->tokens;
}

/* An instant kept exactly in units of 1/R µs (R = the rate's tokens), so that adding whole tokens (P
 * each) never rounds: stored in a cell as whole µs (w[0]) and a remainder below R (w[1] & rem_mask).
 * A remainder written under a larger R is clamped, which moves the instant by less than 1 µs. */
static inline rl_i128 rl_instant_read(const rl_cell *cell, uint64_t rem_mask, int64_t per_us) {
    uint64_t rem = cell->w[1] & rem_mask;
    if (rem >= (uint64_t)per_us) rem = (uint64_t)per_us - 1;
    return (rl_i128)(int64_t)cell->w[0] * per_us + (rl_i128)rem;
}

static inline void rl_instant_write(rl_cell *cell, rl_i128 instant, int64_t per_us) {
    rl_i128 us = rl_floor_div(instant, per_us);
    cell->w[0] = (uint64_t)(int64_t)us;
    cell->w[1] = (uint64_t)(instant - us * per_us);
}

/* Fill the fields every algorithm computes the same way from "time until allowed" and "time until idle",
 * both in exact microseconds (retry_us < 0: allowed or never). */
void rl_reply_times(rl_reply *reply, rl_i128 retry_us, rl_i128 idle_us);

#endif
