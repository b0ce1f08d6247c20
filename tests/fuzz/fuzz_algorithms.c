/* fuzz_algorithms.c -- libFuzzer target for the decisions (algorithms/): token bucket (continuous and
 * INTERVAL), leaky bucket (shaping and NODELAY), window counters (FIXED and SLIDING) and the sliding log.
 *
 * The input drives a small stand-in for the module, as tests/unit_*.c do: parameters anywhere in the
 * parser's ranges (edges 1 and 10^12 favoured), refused combinations skipped as the module would refuse
 * them, then up to MAX_STEPS requests, each with a clock step (forward, backward, a jump anywhere in
 * [0, RL_MAX_TIME_US), or onto the previous reply's retry/reset instant +-1), a cost (0, 1, the limit, the
 * limit + 1, the last remaining (+1), anything up to 10^12 and, for cells, a little beyond), DRYRUN, and
 * now and then a change of mode (INTERVAL, NODELAY, FIXED/SLIDING/SUBWINDOWS n) or of parameters on the live key.
 * A cell limiter starts new, from 16 arbitrary bytes that pass cell_valid (the input is dropped when they
 * do not), or from bytes folded into the cell's valid domain. A sliding log starts from arbitrary sorted
 * entries: in the past, in the future, beyond the window, more than limit + 1 of them, mostly of weight 1
 * (a user's ZADD, an earlier version's one member per unit) and some heavy (this version's members).
 *
 * The first byte picks the limiter from the module's list (module/limiters.h), modulo its length (RL.SMOOTH
 * reserves, which breaks several promises below on purpose: tests/fuzz/fuzz_smooth.c fuzzes it). The
 * stand-in keeps the cell unless DRYRUN and forgets it when the reply says idle (reset_after_ms 0), as
 * module/store_cell.c does; it keeps the sorted set of RL.SLIDINGLOG as module/store_log.c does (a
 * refund's plan.drop newest units go, the entry left cut; entries above now move to now, the newest
 * plan.keep units are kept, the oldest kept entry cut, plan.add units added at now in one entry).
 *
 * A request is now and then (ctl bit 0x80) a REFUND (every limiter), an ATMOST (the commands whose syntax
 * takes it: RL.TOKEN, RL.WINDOW) or a FORCE (aux bit 0x40: the commands whose syntax takes it; RL.LEAKY only
 * with NODELAY; any sliding-log attempt) of the step's cost; a token cell may start as an INTERVAL debt.
 * RL.QUOTA's OFFSET (an option's value, params[2]) is picked over its whole range, as its syntax alone would
 * leave it 0.
 *
 * Invariants checked on every step (abort() with the values on violation):
 *   reply:  allowed is 0 or 1; limit == params[0]; 0 <= remaining <= limit; retry_after_ms == -1 when
 *           allowed, and >= 1 when denied with cost <= limit (or with ATMOST); a plain cost > limit is
 *           denied with retry -1; reset_after_us >= 0 and not saturated; reset_after_ms ==
 *           ceil(reset_after_us / 1000); wait_ms >= 0, 0 when denied, with NODELAY, for a refund, and for
 *           every algorithm but RL.LEAKY, and at most reset_after_ms. Cells: granted == cost when a plain
 *           request is allowed, else 0; 0 for a refund; with ATMOST, 0..min(cost, limit), >= 1 exactly
 *           when allowed (COST 0: 0).
 *   cell:   (every word of the state, as many as its first word says) the stored cell passes cell_valid
 *           whenever reset_after_ms > 0; deciding twice on copies gives
 *           the same reply and cell (every reply field written: the copies start from different garbage);
 *           the same request with DRYRUN set gives the same reply and cell; a new limiter (exists 0)
 *           ignores the cell's bytes, and admits exactly when cost <= limit.
 *   exactness (docs/commands.md: "retry_after_ms and reset_after_ms are exact"), probed on a copy of the
 *           state the step leaves (what DRYRUN does): the same request is admitted retry_after_ms later
 *           and denied 1 ms before that; the limiter is idle reset_after_ms later (and then answers
 *           exactly as a new one, in every mode of the command: "an idle limiter behaves exactly like a
 *           new one") and not idle 1 ms before; a request of `remaining` is admitted right away and one of
 *           remaining + 1 is denied.
 *   clock:  a request denied now is denied at any earlier time on the same state ("the clock going
 *           backwards never grants extra").
 *   refund: always allowed; with W the remaining of a plain COST 0 on the state before (same mode),
 *           W <= remaining <= min(limit, W + n), exactly min(limit, W + n) for the buckets and FIXED when
 *           that COST 0 was allowed; reset_after_us never above the COST 0's; a refund of 0 (or on a new
 *           limiter) changes nothing; two refunds at once (split by the input) leave the same state as one
 *           of their sum; later on, never less room than without it; when the key keeps its mode, a refund
 *           at an earlier clock leaves no more room now than the refund now.
 *   atmost: COST 0 is exactly COST 0; COST n grants g = min(n, W) and is exactly the plain request of
 *           COST max(1, g) (reply, granted included, and cell); nothing remains when g < n.
 *   force:  allowed, granted the cost, wait 0; where the plain request is admitted, exactly it (reply and
 *           cell); where not, remaining 0, reset_after_us no less than the denial's, never more room later
 *           than the denial leaves, and the plain request right after is denied (its retry and reset are
 *           exact by the checks above, on the steps that follow).
 *   undo:   a refund of what an admitted request was granted, right after it, restores the state a
 *           COST 0 would have left (its COST 0 reply, and the cell).
 *   slidinglog: plan.at_us == now; plan.keep + plan.add <= limit + 1; keep == min(c, limit + 1 - add) with
 *           c the units in the window (scores above now counting as now); add == cost, or 0 when cost >
 *           limit (nothing logged), or min(cost, limit + 1) with FORCE; drop == 0; remaining ==
 *           max(0, limit - (keep + add)); an empty window admits any cost <= limit; the decision on the entries holding the newest limit + 1 units of the
 *           window (the last one cut) is the decision on the whole log; reply sanity (granted included),
 *           exactness and the earlier-clock rule as above (on the log the step leaves); and, while the limit
 *           has not grown, the reply equals that of a reference that keeps the full log, one entry per unit
 *           (every unit ever logged, units above now moved to now and those out of the window removed at
 *           each call): the "only the newest limit + 1 units matter" claim of algorithms/slidinglog.c.
 *           REFUND n: add == 0, drop == min(n, c'), keep == c' - drop with c' = min(c, limit + 1); the
 *           reference removes the newest n units of its window and forgets those beyond the newest
 *           limit + 1 (the capped log no longer holds them: slidinglog.c, "REFUND n"); a refund of 0 keeps
 *           what a COST 0 keeps, with its remaining and reset; two refunds at once leave the log of one of
 *           their sum; later, never less room than without the refund; and a refund of what an admitted
 *           attempt logged, right after it, leaves the log a COST 0 would have left (undo).
 *
 * (It found that a window key written by FIXED, idle once its window ended, was still weighed by a later
 * SLIDING read; corpus/fuzz_algorithms/known_window_fixed_then_sliding keeps that input.) */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "require.h"
#include "../../module/limiters.h"

#define MAX_STEPS 48
#define COST_SLACK 65536 /* cell costs go up to RL_MAX_COUNT + this: beyond what the parser lets through */
#define TIME_MAX (RL_MAX_TIME_US - 1)
#define SCORE_BOUND (2 * RL_MAX_TIME_US) /* module/store_log_name.c clamps scores to +-this */
#define SLOG_MAX_INITIAL (RL_SLOG_MAX_LIMIT + 1 + 64) /* a user's ZADD may leave more than limit + 1 */
#define SLOG_BUF (SLOG_MAX_INITIAL + RL_SLOG_MAX_LIMIT + 2)
#define BIG_LOG 4096
#define BIG_LOG_STEPS 6

/* The limiters, from the list: their names, and the algorithm of each cell limiter (NULL: the log). */
enum { FAM_TOKEN = RL_LIM_TOKEN, FAM_LEAKY = RL_LIM_LEAKY, FAM_WINDOW = RL_LIM_WINDOW, FAM_SLOG = RL_LIM_SLIDINGLOG,
       FAM_QUOTA = RL_LIM_QUOTA, NFAM = RL_NLIMITERS };
#define FAM_NAME(id, command, type_name, tag, algorithm, storage) #id,
static const char *const fam_names[NFAM] = {RL_LIMITERS(FAM_NAME)};
#define FAM_ALG(id, command, type_name, tag, algorithm, storage) algorithm,
static const rl_algorithm *const cell_algs[NFAM] = {RL_LIMITERS(FAM_ALG)};

/* --- failure reporting: what the current step is ---------------------------------------------------- */

static struct {
    int fam, step;
    rl_request req;
    rl_cell pre;
    int pre_exists;
    size_t log_size;
    int beyond_contract; /* a cost above what the parser allows was used */
    rl_reply reply;
    int have_reply;
    const char *probe;
} ctx;

/* Two cells hold the same state of the current limiter: as many words (read from the first), all equal. */
static int same_words(const rl_cell *a, const rl_cell *b) {
    const rl_algorithm *alg = cell_algs[ctx.fam];
    unsigned n = alg->words(a);
    return n == alg->words(b) && memcmp(a->w, b->w, n * sizeof a->w[0]) == 0;
}

static void print_reply(const char *what, const rl_reply *r) {
    fprintf(stderr, "  %s: allowed %lld limit %lld remaining %lld retry_after_ms %lld reset_after_ms %lld wait_ms %lld "
                    "granted %lld reset_after_us %lld\n",
            what, (long long)r->allowed, (long long)r->limit, (long long)r->remaining, (long long)r->retry_after_ms,
            (long long)r->reset_after_ms, (long long)r->wait_ms, (long long)r->granted, (long long)r->reset_after_us);
}

static void dump_context(void) {
    const rl_request *q = &ctx.req;
    fprintf(stderr, "  %s step %d%s%s: params %lld %lld %lld cost %lld mingap_ms %lld flags 0x%x now_us %lld\n",
            fam_names[ctx.fam], ctx.step, ctx.probe ? ", probe: " : "", ctx.probe ? ctx.probe : "",
            (long long)q->params[0], (long long)q->params[1], (long long)q->params[2], (long long)q->cost,
            (long long)q->mingap_ms, q->flags, (long long)q->now_us);
    if (ctx.fam == FAM_SLOG)
        fprintf(stderr, "  log entries before the step: %zu\n", ctx.log_size);
    else
        fprintf(stderr, "  cell before the step: exists %d w0 %llu (%lld) w1 %llu (%lld)\n", ctx.pre_exists,
                (unsigned long long)ctx.pre.w[0], (long long)ctx.pre.w[0], (unsigned long long)ctx.pre.w[1],
                (long long)ctx.pre.w[1]);
    if (ctx.have_reply) print_reply("reply", &ctx.reply);
    if (ctx.beyond_contract) fprintf(stderr, "  (this input used a cost beyond the parser's range)\n");
}

/* --- the input -------------------------------------------------------------------------------------- */

typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

static uint8_t in_u8(input *in) {
    if (in->n == 0) return 0;
    in->n--;
    return *in->p++;
}

static uint64_t in_bytes(input *in, int k) {
    uint64_t v = 0;
    for (int i = 0; i < k; i++) v |= (uint64_t)in_u8(in) << (8 * i);
    return v;
}

static int64_t clamp(rl_i128 v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : (int64_t)v; }

/* A value in [lo, hi] (hi - lo < 2^63), biased towards the ends, small values and round numbers. */
static int64_t in_range(input *in, int64_t lo, int64_t hi) {
    uint8_t k = in_u8(in);
    uint64_t span = (uint64_t)(hi - lo);
    int64_t small = k >> 3; /* 0..31 */
    switch (k & 7) {
    case 0: return lo;
    case 1: return hi;
    case 2: return clamp((rl_i128)lo + small, lo, hi);
    case 3: return clamp((rl_i128)hi - small, lo, hi);
    case 4: {
        uint8_t e = in_u8(in);
        rl_i128 v = 1;
        if (e & 1)
            for (int i = 0; i < (e >> 1) % 19; i++) v *= 10;
        else
            v = (rl_i128)1 << ((e >> 1) % 63);
        return clamp(v + small % 3 - 1, lo, hi);
    }
    case 5: return lo + (int64_t)(in_bytes(in, 2) % (span + 1));
    case 6: return lo + (int64_t)(in_bytes(in, 4) % (span + 1));
    default: return lo + (int64_t)(in_bytes(in, 8) % (span + 1));
    }
}

static int64_t limit_of(int fam, const int64_t params[3]) {
    (void)fam;
    return params[0];
}

/* A limiter the cases below do not tune is fuzzed from its syntax alone: each number in its range, and any
 * mix of its algorithm's own flags (validate refuses the mixes it must). So a new row of the list is fuzzed
 * with no edit here; RL.TOKEN and RL.LEAKY's numbers, and RL.TOKEN's mode, go this way too (their syntax says
 * all there is to pick), which keeps the generic path itself fuzzed. */
static void pick_params_of_syntax(input *in, const rl_syntax *syn, int64_t p[3]) {
    for (int i = 0; i < 3; i++) p[i] = i < syn->nparams ? in_range(in, syn->params[i].min, syn->params[i].max) : 0;
}

static uint32_t pick_mode_of_syntax(const rl_syntax *syn, uint8_t b) {
    uint32_t mode = 0;
    for (int i = 0, bit = 0; i < syn->noptions && bit < 8; i++) {
        const rl_option_spec *o = &syn->options[i];
        if (o->slot != RL_NO_VALUE || o->flag < RL_F_ALG(0)) continue; /* algorithm flags only */
        if ((b >> bit++) & 1 && !(mode & o->conflicts)) mode |= o->flag;
    }
    return mode;
}

static void pick_params(input *in, int fam, int64_t p[3]) {
    switch (fam) {
    case FAM_WINDOW: /* n for SUBWINDOWS (the other modes ignore it), and a window it divides */
        p[0] = in_range(in, 1, RL_MAX_COUNT);
        p[2] = in_range(in, RL_WINDOW_MIN_SUBWINDOWS, RL_WINDOW_MAX_SUBWINDOWS);
        p[1] = in_range(in, 1, RL_MAX_PERIOD_MS / p[2]) * p[2];
        break;
    case FAM_QUOTA: /* the limit and the period from the syntax; OFFSET, an option's value, too */
        pick_params_of_syntax(in, &rl_syntaxes[fam], p);
        p[2] = in_range(in, 0, 2 * RL_QUOTA_MAX_OFFSET_MIN) - RL_QUOTA_MAX_OFFSET_MIN;
        break;
    case FAM_SLOG: /* large limits cost O(limit) per decision: mostly small ones, the whole range now and then */
        p[0] = (in_u8(in) & 15) == 0 ? in_range(in, 1, RL_SLOG_MAX_LIMIT) : in_range(in, 1, 64);
        p[1] = in_range(in, 1, RL_MAX_PERIOD_MS);
        p[2] = 0;
        break;
    default:
        pick_params_of_syntax(in, &rl_syntaxes[fam], p);
        break;
    }
}

static uint32_t pick_mode(int fam, uint8_t b) {
    switch (fam) {
    case FAM_LEAKY: /* BLOCK is the module's flag, which the algorithm reads too */
        return ((b & 1) ? RL_F_NODELAY : 0) | ((b & 2) ? RL_F_BLOCK : 0);
    case FAM_WINDOW: return b % 4 == 0 ? RL_F_FIXED : b % 4 == 1 ? RL_F_SLIDING : b % 4 == 2 ? RL_F_SUBWINDOWS : 0;
    case FAM_SLOG: return 0;
    default: return pick_mode_of_syntax(&rl_syntaxes[fam], b);
    }
}

/* The next clock reading, always in [0, RL_MAX_TIME_US) as the module's clock clamps it. */
static int64_t next_time(input *in, int kind, int64_t now, const rl_reply *last, int64_t period_ms) {
    rl_i128 t = now;
    switch (kind) {
    case 0: break;
    case 1: t += in_u8(in); break;
    case 2: t += (rl_i128)in_bytes(in, 2) * 1000; break;
    case 3: t -= in_bytes(in, 2); break;
    case 4: t += in_range(in, 0, RL_MAX_TIME_US); break;
    case 5: t -= in_range(in, 0, RL_MAX_TIME_US); break;
    case 6: t = in_range(in, 0, TIME_MAX); break;
    default: {
        uint8_t b = in_u8(in);
        static const int64_t adjust[5] = {-1000, -1, 0, 1, 1000};
        rl_i128 base;
        switch (b & 3) {
        case 0: base = last->retry_after_ms > 0 ? (rl_i128)last->retry_after_ms * 1000 : 0; break;
        case 1: base = (rl_i128)last->reset_after_ms * 1000; break;
        case 2: base = last->reset_after_us; break;
        default: base = (rl_i128)period_ms * 1000 * ((b >> 5) + 1) / 4; break;
        }
        t += base + adjust[(b >> 2) % 5];
        break;
    }
    }
    return clamp(t, 0, TIME_MAX);
}

static int64_t pick_cost(input *in, int kind, int64_t limit, int64_t max_cost, int64_t slack, const rl_reply *last) {
    switch (kind) {
    case 0: return 0;
    case 1: return 1;
    case 2: return limit;
    case 3: return limit + 1;
    case 4: return last->remaining;
    case 5: return last->remaining + 1;
    case 6: return in_range(in, 0, max_cost);
    default: {
        int64_t c = in_range(in, 0, max_cost + slack);
        if (c > max_cost) ctx.beyond_contract = 1;
        return c;
    }
    }
}

/* --- common reply checks ---------------------------------------------------------------------------- */

#define OPTIONS (RL_F_REFUND | RL_F_ATMOST | RL_F_FORCE)

static void check_reply(int fam, const rl_request *req, const rl_reply *r) {
    int64_t limit = limit_of(fam, req->params);
    int refund = (req->flags & RL_F_REFUND) != 0, atmost = !refund && (req->flags & RL_F_ATMOST);
    int force = !refund && (req->flags & RL_F_FORCE);
    REQUIRE(r->allowed == 0 || r->allowed == 1, "allowed = %lld", (long long)r->allowed);
    REQUIRE(r->limit == limit, "limit = %lld, expected %lld", (long long)r->limit, (long long)limit);
    REQUIRE(r->remaining >= 0 && r->remaining <= r->limit, "remaining = %lld, limit %lld", (long long)r->remaining,
            (long long)r->limit);
    if (r->allowed)
        REQUIRE(r->retry_after_ms == -1, "allowed with retry_after_ms %lld", (long long)r->retry_after_ms);
    else
        REQUIRE(r->retry_after_ms == -1 || r->retry_after_ms >= 1, "denied with retry_after_ms %lld",
                (long long)r->retry_after_ms);
    if (refund || force)
        REQUIRE(r->allowed == 1, "%s denied", refund ? "refund" : "FORCE");
    else if (req->cost > limit && !atmost)
        REQUIRE(!r->allowed && r->retry_after_ms == -1, "cost %lld > limit %lld: allowed %lld retry %lld",
                (long long)req->cost, (long long)limit, (long long)r->allowed, (long long)r->retry_after_ms);
    else if (!r->allowed)
        REQUIRE(r->retry_after_ms >= 1, "cost %lld <= limit %lld denied with retry_after_ms %lld", (long long)req->cost,
                (long long)limit, (long long)r->retry_after_ms);
    REQUIRE(r->retry_after_ms < INT64_MAX / 1000, "retry_after_ms saturated: %lld", (long long)r->retry_after_ms);
    REQUIRE(r->reset_after_us >= 0 && r->reset_after_us < INT64_MAX, "reset_after_us = %lld",
            (long long)r->reset_after_us);
    int64_t ceil_ms = r->reset_after_us / 1000 + (r->reset_after_us % 1000 != 0);
    REQUIRE(r->reset_after_ms == ceil_ms, "reset_after_ms %lld != ceil(reset_after_us %lld / 1000) = %lld",
            (long long)r->reset_after_ms, (long long)r->reset_after_us, (long long)ceil_ms);
    REQUIRE(r->wait_ms >= 0, "wait_ms = %lld", (long long)r->wait_ms);
    if (fam != FAM_LEAKY || (req->flags & RL_F_NODELAY) || !r->allowed || refund)
        REQUIRE(r->wait_ms == 0, "wait_ms = %lld (%s, flags 0x%x, allowed %lld)", (long long)r->wait_ms,
                fam_names[fam], req->flags, (long long)r->allowed);
    REQUIRE(r->wait_ms <= r->reset_after_ms, "wait_ms %lld > reset_after_ms %lld", (long long)r->wait_ms,
            (long long)r->reset_after_ms);
    if (refund) {
        REQUIRE(r->granted == 0, "refund with granted %lld", (long long)r->granted);
    } else if (atmost) {
        REQUIRE(r->granted >= 0 && r->granted <= req->cost && r->granted <= limit,
                "ATMOST COST %lld granted %lld (limit %lld)", (long long)req->cost, (long long)r->granted,
                (long long)limit);
        if (req->cost > 0)
            REQUIRE(r->allowed == (r->granted >= 1), "ATMOST: allowed %lld with granted %lld", (long long)r->allowed,
                    (long long)r->granted);
        else
            REQUIRE(r->granted == 0, "ATMOST COST 0 granted %lld", (long long)r->granted);
    } else {
        REQUIRE(r->granted == (r->allowed ? req->cost : 0), "granted %lld, allowed %lld, cost %lld",
                (long long)r->granted, (long long)r->allowed, (long long)req->cost);
    }
}

static void fill_garbage(rl_reply *r, uint8_t byte) { memset(r, byte, sizeof *r); }

/* The fields of the common contract. granted is left out (check_reply checks it); the cell algorithms
 * are compared with it by same_cell_reply. */
static int same_reply(const rl_reply *a, const rl_reply *b) {
    return a->allowed == b->allowed && a->limit == b->limit && a->remaining == b->remaining &&
           a->retry_after_ms == b->retry_after_ms && a->reset_after_ms == b->reset_after_ms &&
           a->wait_ms == b->wait_ms && a->reset_after_us == b->reset_after_us;
}

/* Every field, granted included. */
static int same_cell_reply(const rl_reply *a, const rl_reply *b) { return memcmp(a, b, sizeof *a) == 0; }

/* --- cell limiters ---------------------------------------------------------------------------------- */

static rl_reply cell_decide(const rl_algorithm *alg, const rl_request *req, rl_cell *cell, int exists,
                            uint8_t garbage) {
    rl_reply r;
    fill_garbage(&r, garbage);
    alg->decide(req, cell, exists, &r);
    return r;
}

/* Decide on a copy of a state: nothing is kept. */
static rl_reply cell_probe(const rl_algorithm *alg, const rl_request *req, const rl_cell *cell, int exists) {
    rl_cell copy = *cell;
    return cell_decide(alg, req, &copy, exists, 0x77);
}

/* A call as the stand-in makes it: decide, keep the cell unless DRYRUN, forget it when idle. */
static rl_reply cell_apply(const rl_algorithm *alg, const rl_request *req, rl_cell *cell, int *exists) {
    rl_cell c = *cell;
    rl_reply r = cell_decide(alg, req, &c, *exists, 0x66);
    if (!(req->flags & RL_F_DRYRUN)) {
        *exists = r.reset_after_ms > 0;
        *cell = c;
    }
    return r;
}

/* The request at another time, cost and flags. */
static rl_request req_at(const rl_request *req, int64_t now_us, int64_t cost, uint32_t flags) {
    rl_request q = *req;
    q.now_us = now_us;
    q.cost = cost;
    q.flags = flags;
    return q;
}

/* The stored cell is read in the request's mode (a mode switch rewrites the state when it is made). */
static int same_mode(int fam, const rl_cell *cell, int exists, const rl_request *req) {
    uint32_t flags = req->flags;
    if (!exists) return 1;
    switch (fam) {
    case FAM_TOKEN: return !(cell->w[1] & RL_TOKEN_INTERVAL_BIT) == !(flags & RL_F_INTERVAL);
    case FAM_WINDOW:
        if ((cell->w[0] & RL_WINDOW_SUB_BIT) || (flags & RL_F_SUBWINDOWS)) /* the same ring, or a conversion */
            return (cell->w[0] & RL_WINDOW_SUB_BIT) && (flags & RL_F_SUBWINDOWS) &&
                   (int64_t)((cell->w[0] >> RL_WINDOW_SUB_N_SHIFT) & 0x3f) == req->params[2] &&
                   (int64_t)cell->w[1] * req->params[2] == req->params[1];
        return rl_window_unpack(cell).fixed == !!(flags & RL_F_FIXED);
    default: return 1;
    }
}

/* REFUND, ATMOST and undo (see the header), around the step that took (pre, pre_exists) to the reply r1
 * and the cell c1. */
static void check_options_step(int fam, const rl_algorithm *alg, const rl_request *req, const rl_cell *pre,
                               int pre_exists, const rl_reply *r1, const rl_cell *c1, uint8_t probe_byte) {
    int64_t limit = limit_of(fam, req->params), n = req->cost, now = req->now_us;
    uint32_t plain = req->flags & ~(uint32_t)(OPTIONS | RL_F_DRYRUN);
    int refund = (req->flags & RL_F_REFUND) != 0, atmost = !refund && (req->flags & RL_F_ATMOST);
    int force = !refund && (req->flags & RL_F_FORCE);

    /* What a plain COST 0 reads on the state before, and leaves. */
    rl_cell without = *pre;
    int without_exists = pre_exists;
    rl_request peek = req_at(req, now, 0, plain);
    ctx.probe = "plain COST 0 on the state before";
    rl_reply was = cell_apply(alg, &peek, &without, &without_exists);

    if (refund) {
        rl_i128 most = (rl_i128)was.remaining + n;
        if (most > limit) most = limit;
        REQUIRE(r1->retry_after_ms == -1 && r1->wait_ms == 0, "refund: retry %lld wait %lld",
                (long long)r1->retry_after_ms, (long long)r1->wait_ms);
        REQUIRE(r1->remaining >= was.remaining && r1->remaining <= most,
                "refund %lld: remaining %lld, a COST 0 says %lld", (long long)n, (long long)r1->remaining,
                (long long)was.remaining);
        if (was.allowed && (fam != FAM_WINDOW || (req->flags & (RL_F_FIXED | RL_F_SUBWINDOWS))))
            REQUIRE(r1->remaining == most, "refund %lld: remaining %lld, expected min(limit, %lld + n)", (long long)n,
                    (long long)r1->remaining, (long long)was.remaining);
        REQUIRE(r1->reset_after_us <= was.reset_after_us, "refund: reset_after_us %lld above the COST 0's %lld",
                (long long)r1->reset_after_us, (long long)was.reset_after_us);
        if (n == 0 || !pre_exists) {
            REQUIRE(r1->remaining == was.remaining && r1->reset_after_us == was.reset_after_us,
                    "a refund of 0 (or on a new limiter) changed something");
            if (r1->reset_after_ms > 0)
                REQUIRE(without_exists && same_words(c1, &without),
                        "a refund of 0 stores another cell than COST 0");
        }
        if (!pre_exists) REQUIRE(r1->reset_after_ms == 0, "a refund on a new limiter is not idle");

        /* Split in two at once: the same state. */
        int64_t part = (int64_t)((rl_i128)n * probe_byte / 255);
        rl_cell two = *pre;
        int two_exists = pre_exists;
        rl_request q = req_at(req, now, part, req->flags & ~(uint32_t)RL_F_DRYRUN);
        cell_apply(alg, &q, &two, &two_exists);
        q.cost = n - part;
        ctx.probe = "the refund in two parts";
        rl_reply second = cell_apply(alg, &q, &two, &two_exists);
        REQUIRE(same_cell_reply(&second, r1), "two refunds (%lld + %lld) differ from one", (long long)part,
                (long long)(n - part));
        if (r1->reset_after_ms > 0)
            REQUIRE(same_words(&two, c1), "two refunds store another cell than one");

        /* Later, never less room than without the refund. */
        int64_t laters[2] = {clamp((rl_i128)now + (rl_i128)was.reset_after_us * probe_byte / 256, 0, TIME_MAX),
                             clamp((rl_i128)now + 1000 * (rl_i128)(probe_byte + 1), 0, TIME_MAX)};
        for (int i = 0; i < 2; i++) {
            rl_request l = req_at(req, laters[i], 0, plain);
            ctx.probe = "COST 0 later, after the refund and without it";
            rl_reply a = cell_probe(alg, &l, c1, r1->reset_after_ms > 0);
            rl_reply b = cell_probe(alg, &l, &without, without_exists);
            REQUIRE(a.remaining >= b.remaining, "at %lld, %lld remain after the refund, %lld without it",
                    (long long)laters[i], (long long)a.remaining, (long long)b.remaining);
        }

        /* The same refund at an earlier clock leaves no more room now. */
        if (same_mode(fam, pre, pre_exists, req) && now > 0) {
            int64_t backs[2] = {now - 1, (int64_t)((uint64_t)now * probe_byte / 256)};
            for (int i = 0; i < 2; i++) {
                rl_cell early = *pre;
                int early_exists = pre_exists;
                rl_request e = req_at(req, backs[i], n, req->flags & ~(uint32_t)RL_F_DRYRUN);
                cell_apply(alg, &e, &early, &early_exists);
                ctx.probe = "COST 0 now after the same refund at an earlier clock";
                rl_reply a = cell_probe(alg, &peek, &early, early_exists);
                REQUIRE(a.remaining <= r1->remaining, "a refund at %lld leaves %lld now, the refund now %lld",
                        (long long)backs[i], (long long)a.remaining, (long long)r1->remaining);
            }
        }
    } else if (atmost) {
        rl_cell pc = *pre;
        int64_t g = n < was.remaining ? n : was.remaining;
        rl_request q = req_at(req, now, n == 0 ? 0 : g >= 1 ? g : 1, plain);
        ctx.probe = "the plain request of what ATMOST grants";
        rl_reply p = cell_decide(alg, &q, &pc, pre_exists, 0x44);
        if (!same_cell_reply(&p, r1)) print_reply("plain", &p);
        REQUIRE(same_cell_reply(&p, r1), "ATMOST COST %lld (W %lld) differs from the plain request of %lld",
                (long long)n, (long long)was.remaining, (long long)q.cost);
        if (r1->reset_after_ms > 0)
            REQUIRE(same_words(&pc, c1), "ATMOST stores another cell than the plain request");
        if (n > 0) REQUIRE(r1->granted == g, "ATMOST COST %lld granted %lld, W %lld", (long long)n,
                           (long long)r1->granted, (long long)was.remaining);
        if (g < n) REQUIRE(r1->remaining == 0, "ATMOST took less than asked but %lld remain", (long long)r1->remaining);
    } else if (force) {
        /* What fits is the plain request; what does not leaves a debt: nothing remains, no nearer idle, never
         * more room later than the denial, and the plain request right after is denied. */
        rl_cell pc = *pre;
        int pc_exists = pre_exists;
        rl_request q = req_at(req, now, n, plain);
        ctx.probe = "the plain request of what FORCE takes";
        rl_reply p = cell_apply(alg, &q, &pc, &pc_exists);
        REQUIRE(r1->granted == n && r1->wait_ms == 0, "FORCE COST %lld: granted %lld wait %lld", (long long)n,
                (long long)r1->granted, (long long)r1->wait_ms);
        if (p.allowed) {
            REQUIRE(same_cell_reply(&p, r1), "FORCE of what fits differs from the plain request");
            if (r1->reset_after_ms > 0) REQUIRE(same_words(&pc, c1), "FORCE of what fits stores another cell");
        } else {
            REQUIRE(r1->remaining == 0, "FORCE past the limit, yet %lld remain", (long long)r1->remaining);
            REQUIRE(r1->reset_after_us >= p.reset_after_us, "FORCE: reset_after_us %lld below the denial's %lld",
                    (long long)r1->reset_after_us, (long long)p.reset_after_us);
            int64_t later = clamp((rl_i128)now + 1000 * (rl_i128)(probe_byte + 1) * (probe_byte + 1), 0, TIME_MAX);
            rl_request l = req_at(req, later, 0, plain);
            ctx.probe = "COST 0 later, after the FORCE and after the denial";
            rl_reply a = cell_probe(alg, &l, c1, r1->reset_after_ms > 0), b = cell_probe(alg, &l, &pc, pc_exists);
            REQUIRE(a.remaining <= b.remaining, "at %lld, %lld remain after the FORCE, %lld after the denial",
                    (long long)later, (long long)a.remaining, (long long)b.remaining);
            ctx.probe = "the plain request right after the FORCE";
            rl_reply next = cell_probe(alg, &q, c1, r1->reset_after_ms > 0);
            REQUIRE(next.allowed == 0, "the plain request is admitted right after a FORCE past the limit");
        }
    }

    /* Undo: a refund of what was granted restores the state a COST 0 would have left (not after a FORCE: its
     * debt may have saturated, and forced usage is no attempt to undo). */
    if (!refund && !force && r1->granted > 0 && fam != FAM_SLOG) {
        rl_cell u = *c1;
        int u_exists = r1->reset_after_ms > 0;
        rl_request q = req_at(req, now, r1->granted, plain | RL_F_REFUND);
        cell_apply(alg, &q, &u, &u_exists);
        ctx.probe = "COST 0 after a refund of what was granted";
        rl_reply a = cell_probe(alg, &peek, &u, u_exists);
        if (!same_cell_reply(&a, &was)) {
            print_reply("undone", &a);
            print_reply("COST 0 before", &was);
        }
        REQUIRE(same_cell_reply(&a, &was), "a refund of the %lld granted does not restore the state",
                (long long)r1->granted);
        REQUIRE(u_exists == without_exists, "undo: exists %d, a COST 0 leaves %d", u_exists, without_exists);
        if (u_exists) REQUIRE(same_words(&u, &without), "undo: another cell");
    }
    ctx.probe = NULL;
}

/* Fold 16 bytes into a cell the algorithm accepts. */
static rl_cell fold_cell(int fam, uint64_t a, uint64_t b, uint64_t c) {
    rl_cell cell;
    const int64_t time_limit = RL_MAX_TIME_US + RL_MAX_IDLE_MS * 1000LL;
    switch (fam) {
    case FAM_TOKEN:
        cell.w[0] = (uint64_t)((int64_t)(a % (2 * (uint64_t)time_limit + 1)) - time_limit);
        if ((c & 3) == 3) /* an INTERVAL debt (FORCE) */
            cell.w[1] = (1 + b % RL_MAX_DEBT) | RL_TOKEN_INTERVAL_BIT | RL_TOKEN_DEBT_BIT;
        else if (c & 1)
            cell.w[1] = (b % (RL_MAX_COUNT + 1)) | RL_TOKEN_INTERVAL_BIT;
        else
            cell.w[1] = b % (1ULL << 40);
        break;
    case FAM_LEAKY:
        cell.w[0] = a % ((uint64_t)time_limit + 1);
        cell.w[1] = b % RL_MAX_COUNT;
        break;
    case FAM_QUOTA: /* any end the clock can leave, any count up to the most debt (above any limit) */
        cell.w[0] = 1 + a % (uint64_t)RL_QUOTA_MAX_END_MS;
        cell.w[1] = b % (uint64_t)(RL_MAX_COUNT + RL_MAX_DEBT + 1);
        break;
    default: {
        rl_window_state s = {(int64_t)(a % (1ULL << RL_WINDOW_START_BITS)), (int64_t)(b % (RL_MAX_COUNT + 1)),
                             (int64_t)(c % (RL_MAX_COUNT + 1)), (int)(a >> 63)};
        rl_window_pack(s, &cell);
        break;
    }
    }
    return cell;
}

static void check_cell_step(int fam, const rl_algorithm *alg, const rl_request *req, const rl_cell *pre,
                            int pre_exists, rl_cell *post, rl_reply *out, uint8_t probe_byte) {
    int64_t limit = limit_of(fam, req->params);

    /* Determinism, and every field written: two copies from different garbage. */
    rl_cell c1 = *pre, c2 = *pre, c3 = *pre;
    rl_reply r1 = cell_decide(alg, req, &c1, pre_exists, 0x11);
    rl_reply r2 = cell_decide(alg, req, &c2, pre_exists, 0x22);
    ctx.reply = r1;
    ctx.have_reply = 1;
    REQUIRE(same_cell_reply(&r1, &r2), "two decisions on copies differ (or a reply field is left unwritten)");
    REQUIRE(same_words(&c1, &c2), "two decisions on copies store different cells");

    /* DRYRUN is the module's business: the decision with and without it is the same. */
    rl_request dry = *req;
    dry.flags ^= RL_F_DRYRUN;
    rl_reply r3 = cell_decide(alg, &dry, &c3, pre_exists, 0x33);
    REQUIRE(same_cell_reply(&r1, &r3), "DRYRUN changes the reply");
    REQUIRE(same_words(&c1, &c3), "DRYRUN changes the cell");

    check_reply(fam, req, &r1);
    if (r1.reset_after_ms > 0)
        REQUIRE(alg->cell_valid(&c1), "stored cell fails cell_valid: w0 %llu (%lld) w1 %llu (%lld)",
                (unsigned long long)c1.w[0], (long long)c1.w[0], (unsigned long long)c1.w[1], (long long)c1.w[1]);

    if (!pre_exists) {
        /* A new limiter: the cell's bytes do not matter, and it admits up to its capacity. */
        rl_cell g = {{0xdeadbeefcafef00dULL, 0x0123456789abcdefULL}};
        rl_cell z = {{0, 0}};
        rl_reply rg = cell_decide(alg, req, &g, 0, 0x44);
        rl_reply rz = cell_decide(alg, req, &z, 0, 0x55);
        REQUIRE(same_cell_reply(&r1, &rg) && same_cell_reply(&r1, &rz),
                "a new limiter's reply depends on the cell's bytes");
        if (r1.reset_after_ms > 0)
            REQUIRE(same_words(&g, &c1) && same_words(&z, &c1),
                    "a new limiter's stored cell depends on the cell's bytes");
        int want = (req->flags & OPTIONS) ? 1 : req->cost <= limit; /* ATMOST: something is there */
        REQUIRE(r1.allowed == want, "new limiter: cost %lld, limit %lld, flags 0x%x, allowed %lld",
                (long long)req->cost, (long long)limit, req->flags, (long long)r1.allowed);
    }

    /* The state the step leaves (stored unless DRYRUN); an idle one is a new one. */
    rl_cell st = c1;
    int st_exists = r1.reset_after_ms > 0;
    const int64_t now = req->now_us;

    /* remaining is exact (plain requests of the same mode). */
    if (req->cost <= RL_MAX_COUNT) {
        rl_request q = *req;
        q.flags &= ~(uint32_t)OPTIONS;
        if (r1.remaining >= 1) {
            q.cost = r1.remaining;
            ctx.probe = "cost = remaining, same time";
            rl_reply p = cell_probe(alg, &q, &st, st_exists);
            REQUIRE(p.allowed == 1, "a request of remaining (%lld) is denied right after", (long long)q.cost);
        }
        q.cost = r1.remaining + 1;
        ctx.probe = "cost = remaining + 1, same time";
        rl_reply p = cell_probe(alg, &q, &st, st_exists);
        REQUIRE(p.allowed == 0, "a request of remaining + 1 (%lld) is admitted right after", (long long)q.cost);
    }

    /* retry_after_ms is exact. */
    if (!r1.allowed && r1.retry_after_ms >= 1) {
        rl_request q = *req;
        rl_i128 t1 = (rl_i128)now + (rl_i128)r1.retry_after_ms * 1000;
        if (t1 <= TIME_MAX) {
            q.now_us = (int64_t)t1;
            ctx.probe = "same request at now + retry_after_ms";
            rl_reply p = cell_probe(alg, &q, &st, st_exists);
            REQUIRE(p.allowed == 1, "still denied retry_after_ms (%lld) later", (long long)r1.retry_after_ms);
        }
        if (r1.retry_after_ms >= 2) {
            q.now_us = now + (r1.retry_after_ms - 1) * 1000;
            ctx.probe = "same request at now + retry_after_ms - 1 ms";
            rl_reply p = cell_probe(alg, &q, &st, st_exists);
            REQUIRE(p.allowed == 0, "admitted 1 ms before retry_after_ms (%lld)", (long long)r1.retry_after_ms);
        }
    }

    /* reset_after_ms is exact, and an idle limiter answers as a new one. */
    if (r1.reset_after_ms >= 1) {
        rl_request peek = *req;
        peek.cost = 0;
        peek.flags &= ~(uint32_t)OPTIONS;
        rl_i128 t1 = (rl_i128)now + (rl_i128)r1.reset_after_ms * 1000;
        if (t1 <= TIME_MAX) {
            peek.now_us = (int64_t)t1;
            ctx.probe = "COST 0 at now + reset_after_ms";
            rl_reply p = cell_probe(alg, &peek, &st, st_exists);
            REQUIRE(p.reset_after_ms == 0, "not idle reset_after_ms (%lld) later: reset_after_ms %lld",
                    (long long)r1.reset_after_ms, (long long)p.reset_after_ms);
            /* Idle, the key may be gone (real clock) or still there (frozen clock, or RL.SETSTATE): a later
             * call in any mode of the command, with the same parameters, must not tell them apart. */
            rl_request q = *req;
            int64_t later[2] = {(int64_t)t1, (int64_t)t1 + (int64_t)((uint64_t)probe_byte * 7919 * 1000 %
                                                                     (uint64_t)(TIME_MAX - t1 + 1))};
            for (int m = 0; m < 3; m++) {
                uint32_t mode = m == 0 ? req->flags : pick_mode(fam, (uint8_t)(m - 1));
                if (m > 0 && fam == FAM_LEAKY) mode = m == 1 ? RL_F_NODELAY : 0;
                q.flags = mode;
                for (int i = 0; i < 2; i++) {
                    q.now_us = later[i];
                    ctx.probe = m == 0 ? "same request once idle, stored vs new"
                                       : "same request in another mode once idle, stored vs new";
                    rl_reply a = cell_probe(alg, &q, &st, st_exists);
                    rl_reply b = cell_probe(alg, &q, &st, 0);
                    if (!same_cell_reply(&a, &b)) {
                        fprintf(stderr, "  probe flags 0x%x at %lld\n", q.flags, (long long)q.now_us);
                        print_reply("idle limiter", &a);
                        print_reply("new limiter", &b);
                    }
                    REQUIRE(same_cell_reply(&a, &b),
                            "an idle limiter (at %lld, flags 0x%x) answers differently from a new one",
                            (long long)q.now_us, q.flags);
                }
            }
        }
        if (r1.reset_after_ms >= 2) {
            peek.now_us = now + (r1.reset_after_ms - 1) * 1000;
            ctx.probe = "COST 0 at now + reset_after_ms - 1 ms";
            rl_reply p = cell_probe(alg, &peek, &st, st_exists);
            REQUIRE(p.reset_after_ms > 0, "already idle 1 ms before reset_after_ms (%lld)", (long long)r1.reset_after_ms);
        }
    }

    /* An earlier clock never admits what now denies. */
    if (!r1.allowed && now > 0) {
        rl_request q = *req;
        int64_t back[3] = {now - 1, now - (now < 1000 ? now : 1000), (int64_t)((uint64_t)now * probe_byte / 256)};
        for (int i = 0; i < 3; i++) {
            q.now_us = back[i];
            ctx.probe = "same request, same state, earlier clock";
            rl_reply p = cell_probe(alg, &q, pre, pre_exists);
            REQUIRE(p.allowed == 0, "denied at now but admitted at the earlier %lld", (long long)q.now_us);
        }
    }
    ctx.probe = NULL;

    check_options_step(fam, alg, req, pre, pre_exists, &r1, &c1, probe_byte);

    *post = c1;
    *out = r1;
}

/* Whether the command of each limiter takes ATMOST (the others get only REFUND). */
static int takes_atmost[NFAM];

static void learn_options(void) {
    for (int f = 0; f < NFAM; f++)
        for (int i = 0; i < rl_syntaxes[f].noptions; i++) takes_atmost[f] |= rl_syntaxes[f].options[i].flag == RL_F_ATMOST;
}

/* 1 when the limiter's command takes FORCE (its syntax says so). */
static int takes_force(int fam) {
    const rl_syntax *syn = &rl_syntaxes[fam];
    for (int i = 0; i < syn->noptions; i++)
        if (syn->options[i].flag == RL_F_FORCE) return 1;
    return 0;
}

static int run_cells(input *in, int fam) {
    const rl_algorithm *alg = cell_algs[fam];
    int64_t params[3];
    pick_params(in, fam, params);
    uint32_t mode = pick_mode(fam, in_u8(in));
    rl_request vreq = {.params = {params[0], params[1], params[2]}, .cost = 1, .flags = mode};
    char err[RL_ERR_LEN];
    if (alg->validate(&vreq, err)) return -1; /* the module refuses these parameters */

    rl_cell cell = {{0, 0}};
    int exists = 0;
    uint8_t start = in_u8(in);
    if (start % 3 == 1) {
        cell.w[0] = in_bytes(in, 8);
        cell.w[1] = in_bytes(in, 8);
        if (!alg->cell_valid(&cell)) return -1; /* RL.SETSTATE and RDB load refuse it */
        exists = 1;
    } else if (start % 3 == 2) {
        uint64_t a = in_bytes(in, 8), b = in_bytes(in, 8), c = in_bytes(in, 8);
        cell = fold_cell(fam, a, b, c);
        if (!alg->cell_valid(&cell)) return -1;
        exists = 1;
    }
    int64_t now = in_range(in, 0, TIME_MAX);
    rl_reply last;
    memset(&last, 0, sizeof last);

    for (int step = 0; step < MAX_STEPS && in->n > 0; step++) {
        uint8_t ctl = in_u8(in), aux = in_u8(in);
        if ((ctl & 0x60) == 0x60) { /* new parameters on the live key */
            int64_t np[3];
            pick_params(in, fam, np);
            rl_request t = {.params = {np[0], np[1], np[2]}, .cost = 1, .flags = mode};
            if (!alg->validate(&t, err)) memcpy(params, np, sizeof np);
        }
        if (ctl & 0x10) mode = pick_mode(fam, in_u8(in));
        now = next_time(in, ctl & 7, now, &last, fam == FAM_WINDOW ? params[1] : params[2]);
        int64_t cost = pick_cost(in, aux & 7, params[0], RL_MAX_COUNT, COST_SLACK, &last);
        uint32_t flags = mode | (ctl & 0x08 ? RL_F_DRYRUN : 0);
        if ((ctl & 0x80) && (aux & 0x40) && takes_force(fam)) /* FORCE, where the mode takes it (NODELAY) */
            flags |= RL_F_FORCE | (cost != 1 ? RL_F_COST : 0);
        else if (ctl & 0x80) /* REFUND n takes COST's place; ATMOST goes with COST */
            flags |= !takes_atmost[fam] || (aux & 0x08) ? RL_F_REFUND : RL_F_ATMOST | RL_F_COST;
        else if (cost != 1)
            flags |= RL_F_COST;
        rl_request req = {.params = {params[0], params[1], params[2]}, .cost = cost, .flags = flags, .now_us = now};
        if ((flags & RL_F_FORCE) && alg->validate(&req, err)) req.flags = flags &= ~(uint32_t)RL_F_FORCE;
        REQUIRE(alg->validate(&req, err) == 0, "validated parameters refused: %s", err);

        ctx.step = step;
        ctx.req = req;
        ctx.pre = cell;
        ctx.pre_exists = exists;
        ctx.have_reply = 0;
        rl_cell post;
        check_cell_step(fam, alg, &req, &cell, exists, &post, &last, aux);
        if (!(flags & RL_F_DRYRUN)) {
            exists = last.reset_after_ms > 0;
            if (exists) cell = post;
        }
    }
    return 0;
}

/* --- sliding log ------------------------------------------------------------------------------------ */

/* A sorted set's members as the module reads them: weighted entries, newest first (one per attempt, or
 * weight-1 members left by a user's ZADD or by an earlier version's one-member-per-unit log). */
typedef struct slog_log {
    rl_slog_entry *e;
    size_t n;
} slog_log;

/* The reference: every unit ever logged and not yet out of the window, as (score, how many), newest
 * first. */
typedef struct full_run {
    int64_t score, mult;
} full_run;
typedef struct full_log {
    full_run *r;
    size_t n, cap;
} full_log;

static int in_window(int64_t score, int64_t now, int64_t window_us) { return (rl_i128)score > (rl_i128)now - window_us; }

static int64_t min_now(int64_t score, int64_t now) { return score > now ? now : score; }

/* Units with score > now - W (scores above now count as now), saturating at cap. */
static int64_t slog_in_window(const slog_log *log, int64_t now, int64_t w, int64_t cap) {
    int64_t c = 0;
    for (size_t k = 0; k < log->n && c < cap && in_window(log->e[k].at_us, now, w); k++)
        c = log->e[k].weight < cap - c ? c + log->e[k].weight : cap;
    return c;
}

/* The entries holding the newest limit + 1 units of the window, the last one cut: all a decision may
 * depend on (the module reads no further). */
static size_t slog_cut(const slog_log *log, const rl_request *req, rl_slog_entry *out) {
    int64_t w = req->params[1] * 1000, rem = rl_slog_read_max(req);
    size_t k = 0;
    for (; k < log->n && rem > 0 && in_window(log->e[k].at_us, req->now_us, w); k++) {
        out[k] = log->e[k];
        if (out[k].weight > rem) out[k].weight = rem;
        rem -= out[k].weight;
    }
    return k;
}

/* The log the module leaves (module/store_log.c): the newest plan.drop units go (highest scores first,
 * the entry left cut), then one entry at now holding the new units and the kept units at or above now,
 * then the older entries down to plan.keep units, the last one cut. */
static void slog_apply(const slog_log *log, int64_t now, const rl_slog_plan *plan, slog_log *out) {
    int64_t keep = plan->keep, front = 0, drop = plan->drop;
    size_t i = 0, k = 0;
    while (drop > 0 && i < log->n && log->e[i].weight <= drop) drop -= log->e[i++].weight;
    size_t first = i; /* the newest entry left, which keeps weight - drop */
    for (size_t j = i; j < log->n && log->e[j].at_us >= now; j++) front += log->e[j].weight - (j == first ? drop : 0);
    if (front > keep) front = keep;
    keep -= front;
    if (plan->add + front > 0) out->e[k++] = (rl_slog_entry){now, plan->add + front};
    while (i < log->n && log->e[i].at_us >= now) i++;
    for (; i < log->n && keep > 0; i++) {
        int64_t w = log->e[i].weight - (i == first ? drop : 0);
        int64_t wt = w < keep ? w : keep;
        out->e[k++] = (rl_slog_entry){log->e[i].at_us, wt};
        keep -= wt;
    }
    out->n = k;
}

/* Two logs hold the same units at the same scores, however split into entries (both newest first). */
static int same_units(const slog_log *a, const slog_log *b) {
    size_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        if (i == a->n || j == b->n) return 0;
        int64_t s = a->e[i].at_us, ma = 0, mb = 0;
        if (b->e[j].at_us != s) return 0;
        while (i < a->n && a->e[i].at_us == s) ma += a->e[i++].weight;
        while (j < b->n && b->e[j].at_us == s) mb += b->e[j++].weight;
        if (ma != mb) return 0;
    }
    return 1;
}

static void full_add(full_log *f, int64_t score, int64_t mult) {
    size_t i = 0;
    if (f->n > 0 && f->r[f->n - 1].score >= score) i = f->n - 1; /* appending (the initial log) */
    while (i < f->n && f->r[i].score > score) i++;
    if (i < f->n && f->r[i].score == score) {
        f->r[i].mult += mult;
        return;
    }
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 64;
        f->r = realloc(f->r, f->cap * sizeof *f->r);
    }
    memmove(&f->r[i + 1], &f->r[i], (f->n - i) * sizeof *f->r);
    f->r[i] = (full_run){score, mult};
    f->n++;
}

/* The k-th newest unit (0-based) of the log after the call: `add` units at now, then the c_runs runs in
 * the window (scores above now counting as now); returns 0 when there are not that many. */
static int full_entry(const full_log *f, size_t c_runs, int64_t now, int64_t add, rl_i128 k, int64_t *out) {
    if (k < add) {
        *out = now;
        return 1;
    }
    k -= add;
    for (size_t i = 0; i < c_runs; i++) {
        if (k < f->r[i].mult) {
            *out = min_now(f->r[i].score, now);
            return 1;
        }
        k -= f->r[i].mult;
    }
    return 0;
}

/* A refund on the full log: of the units in the window, the newest limit + 1 are the ones the capped log
 * holds; the newest min(n, those) go, and the units beyond those are forgotten, as the capped log forgot
 * them (slidinglog.c, "REFUND n"). How many go, and how many are left. */
static void full_refund_counts(rl_i128 c, const rl_request *req, int64_t *drop, int64_t *left) {
    rl_i128 held = c < (rl_i128)req->params[0] + 1 ? c : (rl_i128)req->params[0] + 1;
    *drop = req->cost < held ? req->cost : (int64_t)held;
    *left = (int64_t)held - *drop;
}

/* The rule of docs/commands.md on the full log, at now, scores above now counting as now. */
static rl_reply full_decide(const full_log *f, const rl_request *req) {
    int64_t limit = req->params[0], w = req->params[1] * 1000, gap = req->mingap_ms * 1000, n = req->cost;
    int64_t now = req->now_us;
    size_t c_runs = 0;
    rl_i128 c = 0;
    while (c_runs < f->n && in_window(f->r[c_runs].score, now, w)) c += f->r[c_runs++].mult;
    if (req->flags & RL_F_REFUND) {
        int64_t drop, left, e;
        full_refund_counts(c, req, &drop, &left);
        rl_reply r;
        memset(&r, 0, sizeof r);
        r.allowed = 1;
        r.limit = limit;
        r.remaining = left < limit ? limit - left : 0;
        rl_i128 idle = 0;
        if (left > 0 && full_entry(f, c_runs, now, 0, drop, &e)) idle = (rl_i128)e + w - now;
        rl_reply_times(&r, -1, idle);
        return r;
    }
    int over = n > limit, force = (req->flags & RL_F_FORCE) != 0;
    int allowed = force || (!over && c + n <= limit);
    if (allowed && !force && gap > 0 && c > 0 && (rl_i128)now - min_now(f->r[0].score, now) < gap) allowed = 0;
    int64_t add = over && !force ? 0 : n; /* the full log keeps all of a forced cost */
    rl_i128 size = c + add;
    rl_reply r;
    memset(&r, 0, sizeof r);
    r.allowed = allowed;
    r.limit = limit;
    r.remaining = size < limit ? (int64_t)(limit - size) : 0;
    rl_i128 idle = 0;
    int64_t e;
    if (size > 0 && full_entry(f, c_runs, now, add, 0, &e)) idle = (rl_i128)e + w - now;
    rl_i128 retry = -1;
    if (!allowed && !over) {
        rl_i128 at = now;
        if (full_entry(f, c_runs, now, add, limit - n, &e) && (rl_i128)e + w > at) at = (rl_i128)e + w;
        if (gap > 0 && size > 0 && full_entry(f, c_runs, now, add, 0, &e)) {
            rl_i128 gap_over = (rl_i128)e + (gap < w ? gap : w);
            if (gap_over > at) at = gap_over;
        }
        retry = at - now;
    }
    rl_reply_times(&r, retry, idle);
    return r;
}

/* What the full log keeps: units above now move to now, every unit still in the window stays, and an
 * attempt within the limit adds its cost at now. */
static void full_apply(full_log *f, const rl_request *req) {
    int64_t w = req->params[1] * 1000, now = req->now_us, above = 0;
    size_t i = 0;
    while (i < f->n && f->r[i].score > now) above += f->r[i++].mult;
    if (i > 0) {
        memmove(f->r, f->r + i, (f->n - i) * sizeof *f->r);
        f->n -= i;
        full_add(f, now, above);
    }
    while (f->n > 0 && !in_window(f->r[f->n - 1].score, now, w)) f->n--;
    if (req->flags & RL_F_REFUND) { /* keep the units [drop, drop + left) of the window, newest first */
        rl_i128 c = 0;
        for (size_t k = 0; k < f->n; k++) c += f->r[k].mult;
        int64_t skip, room;
        full_refund_counts(c, req, &skip, &room);
        size_t j = 0;
        for (size_t k = 0; k < f->n; k++) {
            int64_t m = f->r[k].mult, d = m < skip ? m : skip;
            m -= d;
            skip -= d;
            if (m > room) m = room;
            room -= m;
            if (m > 0) f->r[j++] = (full_run){f->r[k].score, m};
        }
        f->n = j;
        return;
    }
    if (req->cost > 0 && (req->cost <= req->params[0] || (req->flags & RL_F_FORCE))) full_add(f, now, req->cost);
}

static rl_reply slog_decide(const rl_request *req, const rl_slog_entry *e, size_t n, rl_slog_plan *plan,
                            uint8_t garbage) {
    rl_reply r;
    fill_garbage(&r, garbage);
    memset(plan, garbage, sizeof *plan);
    rl_slog_decide(req, e, n, plan, &r);
    return r;
}

/* Decide on a log: nothing is kept. */
static rl_reply slog_probe(const slog_log *log, const rl_request *req) {
    rl_slog_plan plan;
    return slog_decide(req, log->e, log->n, &plan, 0x77);
}

/* The initial sorted set: anything a user's ZADD, an earlier version or this one could leave, newest
 * first: mostly weight-1 members, some heavy ones. */
static void slog_initial(input *in, const int64_t params[3], int64_t now, slog_log *log, full_log *full) {
    size_t initial = (size_t)((in_u8(in) & 15) == 0 ? in_range(in, 0, SLOG_MAX_INITIAL) : in_range(in, 0, 80));
    if (initial == 0) return;
    int64_t w = params[1] * 1000;
    rl_i128 top;
    switch (in_u8(in) & 3) {
    case 0: top = (rl_i128)now + in_range(in, 0, 1 << 24); break;            /* a little in the future */
    case 1: top = (rl_i128)now - in_range(in, 0, w); break;                  /* in the window */
    case 2: top = in_range(in, -SCORE_BOUND, SCORE_BOUND); break;           /* anywhere */
    default: top = now; break;
    }
    int64_t s = clamp(top, -SCORE_BOUND, SCORE_BOUND);
    int heavy = in_u8(in) & 3;
    for (size_t i = 0; i < initial; i++) {
        int64_t wt = heavy && (in_u8(in) & 7) == 0 ? in_range(in, 1, RL_SLOG_MAX_LIMIT + 1) : 1;
        log->e[log->n++] = (rl_slog_entry){s, wt};
        full_add(full, s, wt);
        s = clamp((rl_i128)s - in_range(in, 0, w), -SCORE_BOUND, SCORE_BOUND);
    }
}

/* The plan's contract (slidinglog.h) for a request decided on log. */
static void check_slog_plan(const rl_request *req, const slog_log *log, const rl_slog_plan *p, const rl_reply *r) {
    int64_t limit = req->params[0], w = req->params[1] * 1000, capn = rl_slog_read_max(req), now = req->now_us;
    int64_t c = slog_in_window(log, now, w, capn);
    REQUIRE(p->add >= 0 && p->keep >= 0 && p->drop >= 0, "plan add %lld keep %lld drop %lld", (long long)p->add,
            (long long)p->keep, (long long)p->drop);
    REQUIRE(p->keep + p->add <= limit + 1, "plan keep %lld + add %lld > limit + 1 = %lld", (long long)p->keep,
            (long long)p->add, (long long)(limit + 1));
    REQUIRE(p->at_us == now, "plan at_us %lld, expected now %lld", (long long)p->at_us, (long long)now);
    if (req->flags & RL_F_REFUND) {
        int64_t want_drop = req->cost < c ? req->cost : c;
        REQUIRE(p->add == 0 && p->drop == want_drop && p->keep == c - want_drop,
                "refund %lld on %lld units: plan add %lld drop %lld keep %lld", (long long)req->cost, (long long)c,
                (long long)p->add, (long long)p->drop, (long long)p->keep);
        REQUIRE(r->remaining == (p->keep < limit ? limit - p->keep : 0) && r->granted == 0 && r->wait_ms == 0,
                "refund: remaining %lld granted %lld wait %lld with %lld units left, limit %lld",
                (long long)r->remaining, (long long)r->granted, (long long)r->wait_ms, (long long)p->keep,
                (long long)limit);
        return;
    }
    REQUIRE(p->drop == 0, "plan drop %lld without a refund", (long long)p->drop);
    int64_t want_add = req->cost > limit ? 0 : req->cost;
    if (req->flags & RL_F_FORCE) want_add = req->cost < capn ? req->cost : capn; /* its newest limit + 1, at now */
    REQUIRE(p->add == want_add, "plan add %lld, expected %lld (cost %lld, limit %lld)", (long long)p->add,
            (long long)want_add, (long long)req->cost, (long long)limit);
    int64_t want_keep = c < capn - p->add ? c : capn - p->add;
    REQUIRE(p->keep == want_keep, "plan keep %lld, expected min(c %lld, limit + 1 - add) = %lld", (long long)p->keep,
            (long long)c, (long long)want_keep);
    REQUIRE(p->at_us == now, "plan at_us %lld, expected now %lld", (long long)p->at_us, (long long)now);
    int64_t size = p->keep + p->add;
    REQUIRE(r->remaining == (size < limit ? limit - size : 0), "remaining %lld with %lld units after, limit %lld",
            (long long)r->remaining, (long long)size, (long long)limit);
    if (c == 0 && req->cost <= limit) REQUIRE(r->allowed == 1, "empty window, cost %lld <= limit: denied", (long long)req->cost);
}

/* A time the reply promises (retry_after_ms, reset_after_ms) and what must be true from that instant on
 * (on_time), and not yet 1 ms before it (early): the probe texts say which is asked. */
typedef struct slog_promise {
    const char *field, *at_text, *before_text;
    int (*on_time)(const rl_reply *);
    int (*early)(const rl_reply *);
} slog_promise;

static int reply_admitted(const rl_reply *r) { return r->allowed == 1; }
static int reply_denied(const rl_reply *r) { return r->allowed == 0; }
static int log_is_empty(const rl_reply *r) { return r->reset_after_ms == 0; }
static int log_not_empty(const rl_reply *r) { return r->reset_after_ms > 0; }

/* The promise of `ms` (>= 1) holds exactly, on the log the step leaves: q asked at now + ms (if the clock
 * reaches it) and at now + ms - 1 ms (if that is later than now). */
static void check_slog_promise(const slog_log *next, rl_request q, int64_t ms, const slog_promise *p) {
    int64_t now = q.now_us;
    rl_i128 t1 = (rl_i128)now + (rl_i128)ms * 1000;
    if (t1 <= TIME_MAX) {
        q.now_us = (int64_t)t1;
        ctx.probe = p->at_text;
        rl_reply r = slog_probe(next, &q);
        REQUIRE(p->on_time(&r), "%s (%lld) later: not yet", p->field, (long long)ms);
    }
    if (ms >= 2) {
        q.now_us = now + (ms - 1) * 1000;
        ctx.probe = p->before_text;
        rl_reply r = slog_probe(next, &q);
        REQUIRE(p->early(&r), "1 ms before %s (%lld): already", p->field, (long long)ms);
    }
}

/* retry_after_ms and reset_after_ms are exact, on the log the step leaves. */
static void check_slog_exact(const rl_request *req, const rl_reply *r1, const slog_log *next) {
    static const slog_promise retry = {"retry_after_ms", "same attempt at now + retry_after_ms",
                                       "same attempt at now + retry_after_ms - 1 ms", reply_admitted, reply_denied};
    static const slog_promise reset = {"reset_after_ms", "COST 0 at now + reset_after_ms",
                                       "COST 0 at now + reset_after_ms - 1 ms", log_is_empty, log_not_empty};
    if (!r1->allowed && r1->retry_after_ms >= 1) check_slog_promise(next, *req, r1->retry_after_ms, &retry);
    if (r1->reset_after_ms >= 1) {
        rl_request q = *req;
        q.cost = 0;
        q.mingap_ms = 0;
        check_slog_promise(next, q, r1->reset_after_ms, &reset);
    }
    ctx.probe = NULL;
}

/* Scratch logs for the refund checks. */
static rl_slog_entry buf_s1[SLOG_BUF], buf_s2[SLOG_BUF], buf_s3[SLOG_BUF];

/* REFUND n decided on log (before the step) as r1 with plan p1, leaving next (see the header). */
static void check_slog_refund(const rl_request *req, const slog_log *log, const slog_log *next, const rl_reply *r1,
                              const rl_slog_plan *p1, uint8_t aux) {
    rl_request c0 = *req;
    c0.flags = (req->flags & ~(RL_F_REFUND | RL_F_DRYRUN)) | RL_F_COST;
    c0.cost = 0;
    rl_slog_plan pz;
    rl_reply rz = slog_decide(&c0, log->e, log->n, &pz, 0x55);
    slog_log zero = {buf_s1, 0};
    slog_apply(log, req->now_us, &pz, &zero); /* the log a COST 0 leaves */
    if (req->cost == 0) {
        ctx.probe = "REFUND 0 against COST 0";
        REQUIRE(p1->keep == pz.keep && p1->drop == 0 && r1->remaining == rz.remaining &&
                    r1->reset_after_us == rz.reset_after_us,
                "a refund of 0 keeps %lld (remaining %lld, reset_after_us %lld), COST 0 keeps %lld (%lld, %lld)",
                (long long)p1->keep, (long long)r1->remaining, (long long)r1->reset_after_us, (long long)pz.keep,
                (long long)rz.remaining, (long long)rz.reset_after_us);
    }
    /* In two parts at the same instant: the same reply and log as the whole. */
    if (req->cost >= 1) {
        rl_request a = *req, b = *req;
        a.cost = (int64_t)((rl_i128)req->cost * aux / 256);
        b.cost = req->cost - a.cost;
        rl_slog_plan pa, pb;
        slog_log mid = {buf_s2, 0}, two = {buf_s3, 0};
        slog_decide(&a, log->e, log->n, &pa, 0x66);
        slog_apply(log, req->now_us, &pa, &mid);
        rl_reply rb = slog_decide(&b, mid.e, mid.n, &pb, 0x67);
        slog_apply(&mid, req->now_us, &pb, &two);
        ctx.probe = "the refund in two parts";
        REQUIRE(same_reply(&rb, r1) && same_units(&two, next), "two refunds (%lld + %lld) differ from one",
                (long long)a.cost, (long long)b.cost);
    }
    /* Later, never less room than without the refund. */
    rl_request later = c0;
    later.mingap_ms = 0;
    later.flags &= ~RL_F_MINGAP;
    later.now_us = clamp((rl_i128)req->now_us + (rl_i128)aux * req->params[1] * 1000 / 128, 0, TIME_MAX);
    ctx.probe = "COST 0 later, after the refund and without it";
    rl_reply with = slog_probe(next, &later), without = slog_probe(&zero, &later);
    REQUIRE(with.remaining >= without.remaining, "at %lld, %lld remain after the refund, %lld without it",
            (long long)later.now_us, (long long)with.remaining, (long long)without.remaining);
    ctx.probe = NULL;
}

/* Undo: an attempt admitted as r1 (cost >= 1, logged), then REFUND cost at the same instant on the log it
 * left (next), leaves the log and the reply of a COST 0 instead of it. */
static void check_slog_undo(const rl_request *req, const slog_log *log, const slog_log *next) {
    rl_request c0 = *req, back = *req;
    c0.flags = (req->flags & ~(RL_F_DRYRUN | RL_F_MINGAP)) | RL_F_COST;
    c0.cost = 0;
    c0.mingap_ms = 0;
    back.flags = (req->flags & ~(RL_F_DRYRUN | RL_F_COST)) | RL_F_REFUND;
    rl_slog_plan pz, pb;
    slog_log zero = {buf_s1, 0}, undone = {buf_s2, 0};
    rl_reply rz = slog_decide(&c0, log->e, log->n, &pz, 0x58);
    slog_apply(log, req->now_us, &pz, &zero);
    rl_reply rb = slog_decide(&back, next->e, next->n, &pb, 0x59);
    slog_apply(next, req->now_us, &pb, &undone);
    ctx.probe = "a refund of what was admitted, right after it";
    REQUIRE(same_units(&undone, &zero) && rb.remaining == rz.remaining && rb.reset_after_us == rz.reset_after_us,
            "the refund of the %lld admitted leaves remaining %lld reset_after_us %lld, a COST 0 %lld %lld",
            (long long)req->cost, (long long)rb.remaining, (long long)rb.reset_after_us, (long long)rz.remaining,
            (long long)rz.reset_after_us);
    ctx.probe = NULL;
}

static int run_slog(input *in) {
    const int fam = FAM_SLOG;
    int64_t params[3];
    pick_params(in, fam, params);
    int64_t mingap = (in_u8(in) & 1) ? in_range(in, 1, RL_MAX_PERIOD_MS) : 0;
    int64_t now = in_range(in, 0, TIME_MAX);

    static rl_slog_entry buf_a[SLOG_BUF], buf_b[SLOG_BUF], cut[SLOG_BUF];
    slog_log log = {buf_a, 0};
    slog_log next = {buf_b, 0};
    full_log full = {NULL, 0, 0};
    int ref_valid = 1;
    slog_initial(in, params, now, &log, &full);

    rl_reply last;
    memset(&last, 0, sizeof last);
    for (int step = 0; step < MAX_STEPS && (step == 0 || in->n > 0); step++) {
        /* A step costs O(entries) per decision: keep big logs to a few steps. */
        if (step >= BIG_LOG_STEPS && (params[0] > BIG_LOG || log.n > BIG_LOG)) break;
        uint8_t ctl = in_u8(in), aux = in_u8(in);
        if ((ctl & 0x60) == 0x60) {
            int64_t old_limit = params[0];
            pick_params(in, fam, params);
            if (params[0] > old_limit) ref_valid = 0; /* the log was capped at the old limit + 1 */
        }
        if (ctl & 0x10) mingap = (in_u8(in) & 1) ? in_range(in, 1, RL_MAX_PERIOD_MS) : 0;
        now = next_time(in, ctl & 7, now, &last, params[1]);
        /* The decision's contract allows costs up to 10^12 (the parser stops at RL_SLOG_MAX_LIMIT). */
        int64_t cost = pick_cost(in, aux & 7, params[0], RL_MAX_COUNT, 0, &last);
        int refund = (ctl & 0x80) != 0; /* REFUND n takes COST's place */
        int force = !refund && (aux & 0x40);
        uint32_t flags = (ctl & 0x08 ? RL_F_DRYRUN : 0) | (refund ? RL_F_REFUND : cost != 1 ? RL_F_COST : 0) |
                         (mingap ? RL_F_MINGAP : 0) | (force ? RL_F_FORCE : 0);
        rl_request req = {.params = {params[0], params[1], 0},
                          .cost = cost, .mingap_ms = mingap, .flags = flags, .now_us = now};

        ctx.step = step;
        ctx.req = req;
        ctx.log_size = log.n;
        ctx.have_reply = 0;

        rl_slog_plan p1, p2, p3, p4;
        rl_reply r1 = slog_decide(&req, log.e, log.n, &p1, 0x11);
        rl_reply r2 = slog_decide(&req, log.e, log.n, &p2, 0x22);
        ctx.reply = r1;
        ctx.have_reply = 1;
        REQUIRE(same_reply(&r1, &r2), "two decisions differ (or a reply field is left unwritten)");
        REQUIRE(memcmp(&p1, &p2, sizeof p1) == 0, "two decisions give different plans (or a plan field is left unwritten)");
        rl_request dry = req;
        dry.flags ^= RL_F_DRYRUN;
        rl_reply r3 = slog_decide(&dry, log.e, log.n, &p3, 0x33);
        REQUIRE(same_reply(&r1, &r3) && memcmp(&p1, &p3, sizeof p1) == 0, "DRYRUN changes the decision");
        /* Only the newest limit + 1 units of the window matter. */
        size_t ncut = slog_cut(&log, &req, cut);
        rl_reply r4 = slog_decide(&req, cut, ncut, &p4, 0x44);
        REQUIRE(same_reply(&r1, &r4) && memcmp(&p1, &p4, sizeof p1) == 0,
                "the decision depends on units beyond the newest limit + 1 of the window");

        check_reply(fam, &req, &r1);
        check_slog_plan(&req, &log, &p1, &r1);
        if (ref_valid) {
            rl_reply ref = full_decide(&full, &req);
            if (!same_reply(&r1, &ref)) print_reply("full-log reference", &ref);
            REQUIRE(same_reply(&r1, &ref), "the capped log answers differently from the full log");
        }

        /* The log the step leaves (kept unless DRYRUN). */
        slog_apply(&log, now, &p1, &next);
        check_slog_exact(&req, &r1, &next);
        if (refund) check_slog_refund(&req, &log, &next, &r1, &p1, aux);
        else if (r1.allowed && cost >= 1 && !force) check_slog_undo(&req, &log, &next);
        /* An earlier clock never admits what now blocks. */
        if (!r1.allowed && now > 0) {
            rl_request q = req;
            int64_t back[2] = {now - 1, (int64_t)((uint64_t)now * aux / 256)};
            for (int i = 0; i < 2; i++) {
                q.now_us = back[i];
                ctx.probe = "same attempt, same log, earlier clock";
                rl_reply p = slog_probe(&log, &q);
                REQUIRE(p.allowed == 0, "blocked at now but admitted at the earlier %lld", (long long)q.now_us);
            }
            ctx.probe = NULL;
        }

        if (!(flags & RL_F_DRYRUN)) {
            slog_log tmp = log;
            log = next;
            next = tmp;
            full_apply(&full, &req);
        }
        last = r1;
    }
    free(full.r);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    input in = {data, size};
    memset(&ctx, 0, sizeof ctx);
    int fam = in_u8(&in) % NFAM;
    ctx.fam = fam;
    if (!takes_atmost[FAM_TOKEN]) learn_options();
    if (fam == RL_LIM_SMOOTH) return -1; /* a reserving limiter: fuzz_smooth.c */
    if (!cell_algs[fam]) return run_slog(&in);
    return run_cells(&in, fam);
}
