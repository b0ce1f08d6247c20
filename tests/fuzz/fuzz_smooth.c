/* fuzz_smooth.c -- libFuzzer target for RL.SMOOTH's algorithm (algorithms/smooth.c, Guava's RateLimiter).
 *
 * Kept apart from fuzz_algorithms.c because a reserving limiter breaks that target's promises on purpose
 * (a reservation is granted whatever is stored, so "remaining more are admitted, one more is not" and the
 * refund rules do not apply). The input drives a stand-in for the module: parameters anywhere in the
 * parser's ranges (edges favoured) and refused combinations skipped as the module refuses them; a start
 * from nothing, from 48 arbitrary bytes that pass cell_valid, or from bytes folded into the valid domain;
 * then up to MAX_STEPS requests, each with a clock step (small, large, backwards, a jump anywhere, or onto
 * the last reply's retry/reset instant), a cost (1, small, or up to what validate allows), MAXWAIT now and
 * then, DRYRUN, and now and then other parameters or the other mode on the live key (Guava's setRate).
 * The stand-in keeps the cell unless DRYRUN and forgets it when the reply says rested (reset_after_ms 0).
 *
 * Invariants (abort() with the values on violation):
 *   reply:  allowed 0 or 1; granted == cost when allowed, else 0; 0 <= remaining <= limit; retry_after_ms
 *           -1 when allowed, >= 1 when denied; wait_ms 0 when denied, and <= MAXWAIT when allowed with it;
 *           reset_after_ms == ceil(reset_after_us / 1000) >= 0.
 *   cell:   every cell written passes cell_valid and holds RL_SMOOTH_WORDS words; a denied request leaves
 *           the cell as it was, but for new parameters (Guava's setRate; the ticket never moves); deciding twice on copies (from different garbage) gives the same reply and
 *           cell; DRYRUN answers as the real call; a new limiter ignores the cell's bytes.
 *   time:   a denied request is admitted retry_after_ms later and still denied 1 ms before that; at
 *           reset_after_us later the limiter answers exactly as a new one (the key may expire then). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "require.h"
#include "../../algorithms/smooth.h"

#define MAX_STEPS 48
#define M 1000000LL /* 1 in millionths */

typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

static uint64_t in_bytes(input *in, int k) {
    uint64_t v = 0;
    for (int i = 0; i < k; i++) {
        v = v << 8;
        if (in->n) {
            v |= *in->p++;
            in->n--;
        }
    }
    return v;
}
static uint8_t in_u8(input *in) { return (uint8_t)in_bytes(in, 1); }
static int64_t in_range(input *in, int64_t lo, int64_t hi) { /* inclusive */
    return lo + (int64_t)(in_bytes(in, 8) % (uint64_t)(hi - lo + 1));
}

static const rl_algorithm *alg = &rl_smooth_algorithm;

/* Nothing to add to REQUIRE's message: its values say it all. */
static void dump_context(void) {}

static int same_reply(const rl_reply *a, const rl_reply *b) {
    return a->allowed == b->allowed && a->limit == b->limit && a->remaining == b->remaining &&
           a->retry_after_ms == b->retry_after_ms && a->reset_after_ms == b->reset_after_ms &&
           a->wait_ms == b->wait_ms && a->granted == b->granted && a->reset_after_us == b->reset_after_us;
}
static int same_cell(const rl_cell *a, const rl_cell *b) { return memcmp(a->w, b->w, RL_SMOOTH_WORDS * 8) == 0; }

/* A rate in millionths: the edges, round rates, or anything in range. */
static int64_t pick_rate(input *in) {
    static const int64_t edges[] = {RL_SMOOTH_MIN_RATE, 500000, M, 2 * M, 5 * M, 3 * M + 333333, 1000 * M,
                                    RL_SMOOTH_MAX_RATE};
    uint8_t b = in_u8(in);
    if (b < 128) return edges[b % 8];
    return in_range(in, RL_SMOOTH_MIN_RATE, RL_SMOOTH_MAX_RATE >> (b % 40));
}

static int64_t pick_period(input *in, int64_t min) {
    uint8_t b = in_u8(in);
    if (b < 64) return b % 2 ? min : RL_MAX_PERIOD_MS;
    if (b < 192) return in_range(in, min, 10000);
    return in_range(in, min, RL_MAX_PERIOD_MS);
}

/* A request's parameters (not the cost, time or MAXWAIT). */
static void pick_params(input *in, rl_request *req) {
    uint8_t form = in_u8(in);
    req->params[0] = pick_rate(in);
    req->flags &= ~(uint32_t)(RL_F_WARMUP | RL_F_COLDFACTOR | RL_F_MAXBURST);
    if (form & 1) {
        req->flags |= RL_F_WARMUP;
        req->params[1] = pick_period(in, 1);
        if (form & 2) {
            req->flags |= RL_F_COLDFACTOR;
            req->params[2] = form & 4 ? in_range(in, RL_SMOOTH_MIN_COLD_FACTOR, RL_SMOOTH_MAX_COLD_FACTOR)
                                      : (form & 8 ? RL_SMOOTH_MIN_COLD_FACTOR : RL_SMOOTH_MAX_COLD_FACTOR);
        }
    } else if (form & 2) {
        req->flags |= RL_F_MAXBURST;
        req->params[1] = pick_period(in, 0);
    }
}

static rl_reply decide(const rl_request *req, const rl_cell *cell, int exists, rl_cell *out, uint8_t garbage) {
    rl_reply r;
    memset(&r, garbage, sizeof r);
    if (exists)
        *out = *cell;
    else
        memset(out, garbage, sizeof *out);
    alg->decide(req, out, exists, &r);
    return r;
}

static void check_reply(const rl_request *req, const rl_reply *r) {
    REQUIRE(r->allowed == 0 || r->allowed == 1, "allowed %lld", (long long)r->allowed);
    REQUIRE(r->granted == (r->allowed ? req->cost : 0), "granted %lld", (long long)r->granted);
    REQUIRE(r->remaining >= 0 && r->remaining <= r->limit, "remaining %lld limit %lld", (long long)r->remaining,
            (long long)r->limit);
    REQUIRE(r->allowed ? r->retry_after_ms == -1 : r->retry_after_ms >= 1, "retry %lld",
            (long long)r->retry_after_ms);
    REQUIRE(r->wait_ms >= 0 && (r->allowed || r->wait_ms == 0), "wait %lld", (long long)r->wait_ms);
    if (r->allowed && (req->flags & RL_F_MAXWAIT))
        REQUIRE(r->wait_ms <= req->maxwait_ms, "wait %lld beyond MAXWAIT %lld", (long long)r->wait_ms,
                (long long)req->maxwait_ms);
    REQUIRE(r->reset_after_us >= 0 && r->reset_after_ms == rl_us_to_ms_ceil(r->reset_after_us),
            "reset %lld ms, %lld us", (long long)r->reset_after_ms, (long long)r->reset_after_us);
}

/* The promises about time, probed on copies of the state the step leaves. */
static void check_time(const rl_request *req, const rl_cell *cell, int exists, const rl_reply *r) {
    rl_cell scratch, anew;
    char err[RL_ERR_LEN];
    if (!r->allowed && exists) {
        rl_request at = *req;
        at.now_us = req->now_us + r->retry_after_ms * 1000;
        REQUIRE(decide(&at, cell, 1, &scratch, 0).allowed == 1, "not admitted retry_after_ms later");
        at.now_us -= 1000;
        REQUIRE(decide(&at, cell, 1, &scratch, 0).allowed == 0, "admitted 1 ms before retry_after_ms");
    }
    if (exists && r->reset_after_us > 0) {
        rl_request at = *req;
        at.flags &= ~(uint32_t)RL_F_MAXWAIT;
        at.cost = 1;
        REQUIRE(alg->validate(&at, err) == 0, "cost 1 refused: %s", err);
        at.now_us = req->now_us + r->reset_after_us;
        rl_reply kept = decide(&at, cell, 1, &scratch, 0), fresh = decide(&at, cell, 0, &anew, 0x5a);
        REQUIRE(same_reply(&kept, &fresh), "rested, yet not answering as a new limiter");
        REQUIRE(same_cell(&scratch, &anew), "rested, yet another cell than a new limiter's");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    input in = {data, size};
    char err[RL_ERR_LEN];
    rl_request req;
    memset(&req, 0, sizeof req);
    req.cost = 1;
    pick_params(&in, &req);
    if (alg->validate(&req, err)) return -1;

    rl_cell cell;
    memset(&cell, 0, sizeof cell);
    int exists = 0;
    uint8_t start = in_u8(&in);
    if (start % 3 == 1) { /* arbitrary bytes, as RL.SETSTATE or an RDB might bring */
        for (int i = 0; i < RL_SMOOTH_WORDS; i++) cell.w[i] = in_bytes(&in, 8);
        if (!alg->cell_valid(&cell)) return -1;
        exists = 1;
    } else if (start % 3 == 2) { /* folded into the valid domain: a state some run could have written */
        rl_request seed = req;
        seed.now_us = in_range(&in, 0, RL_MAX_TIME_US);
        alg->decide(&seed, &cell, 0, &(rl_reply){0});
        double stored; /* some of the stored permits, and a later next free ticket */
        memcpy(&stored, &cell.w[4], 8);
        stored *= (double)in_u8(&in) / 255.0;
        memcpy(&cell.w[4], &stored, 8);
        cell.w[5] += (uint64_t)in_range(&in, 0, 1000LL * 1000 * 1000);
        if (!alg->cell_valid(&cell)) return -1;
        exists = 1;
    }
    REQUIRE(alg->words(&cell) == RL_SMOOTH_WORDS, "words %u", alg->words(&cell));

    int64_t now = in_range(&in, 0, RL_MAX_TIME_US);
    rl_reply last = {0};
    for (int step = 0; step < MAX_STEPS && in.n > 0; step++) {
        uint8_t ctl = in_u8(&in);
        if ((ctl & 0x60) == 0x60) {
            rl_request t = req;
            pick_params(&in, &t);
            t.cost = 1;
            if (!alg->validate(&t, err)) req = t;
        }
        switch (ctl & 7) {
        case 0: now += in_range(&in, 0, 1000); break;
        case 1: now += in_range(&in, 0, 10 * 1000 * 1000); break;
        case 2: now -= in_range(&in, 0, 1000 * 1000); break;
        case 3: now = in_range(&in, 0, RL_MAX_TIME_US); break;
        case 4: now += last.allowed ? last.wait_ms * 1000 : last.retry_after_ms * 1000; break;
        case 5: now += last.reset_after_us + (int64_t)(in_u8(&in) % 3) - 1; break;
        default: break;
        }
        if (now < 0) now = 0;
        if (now > RL_MAX_TIME_US) now = RL_MAX_TIME_US;
        uint8_t c = in_u8(&in);
        req.cost = c < 128 ? 1 : c < 224 ? 1 + c % 16 : in_range(&in, 1, RL_MAX_COUNT);
        req.flags &= ~(uint32_t)(RL_F_MAXWAIT | RL_F_DRYRUN | RL_F_COST);
        if (req.cost != 1) req.flags |= RL_F_COST;
        if (ctl & 0x08) req.flags |= RL_F_DRYRUN;
        if (ctl & 0x10) {
            req.flags |= RL_F_MAXWAIT;
            req.maxwait_ms = in_u8(&in) < 200 ? in_range(&in, 0, 5000) : in_range(&in, 0, RL_SMOOTH_MAX_CHARGE_MS);
        }
        req.now_us = now;
        if (alg->validate(&req, err)) { /* too many permits at this rate: the module refuses the call */
            req.cost = 1;
            req.flags &= ~(uint32_t)RL_F_COST;
            REQUIRE(alg->validate(&req, err) == 0, "cost 1 refused: %s", err);
        }

        rl_cell c1, c2, c3;
        rl_reply r1 = decide(&req, &cell, exists, &c1, 0x11), r2 = decide(&req, &cell, exists, &c2, 0x22);
        REQUIRE(same_reply(&r1, &r2) && same_cell(&c1, &c2), "not deterministic");
        rl_request other = req;
        other.flags ^= RL_F_DRYRUN;
        rl_reply r3 = decide(&other, &cell, exists, &c3, 0x33);
        REQUIRE(same_reply(&r1, &r3), "DRYRUN answers otherwise");
        if (!exists) {
            rl_cell junk;
            memset(&junk, 0xee, sizeof junk);
            rl_reply r4 = decide(&req, &junk, 0, &c3, 0x44);
            REQUIRE(same_reply(&r1, &r4) && same_cell(&c1, &c3), "a new limiter reads the cell");
        }
        check_reply(&req, &r1);
        if (r1.allowed || exists) {
            REQUIRE(alg->cell_valid(&c1), "a written cell fails cell_valid");
            REQUIRE(alg->words(&c1) == RL_SMOOTH_WORDS, "words");
        }
        if (!r1.allowed && exists) { /* unchanged, but for new parameters (setRate), never the ticket */
            rl_cell fresh;
            decide(&req, &cell, 0, &fresh, 0);
            int same_params = memcmp(cell.w, fresh.w, 4 * 8) == 0;
            REQUIRE(same_params ? same_cell(&c1, &cell) : memcmp(c1.w, fresh.w, 4 * 8) == 0 && c1.w[5] == cell.w[5],
                    "a denied request changed the cell beyond its parameters");
        }
        if (r1.allowed || exists) check_time(&req, &c1, 1, &r1);

        if (!(req.flags & RL_F_DRYRUN)) {
            cell = c1;
            exists = r1.reset_after_ms > 0 ? (r1.allowed || exists) : 0;
        }
        last = r1;
    }
    return 0;
}
