/* sliding-accuracy-trace.c -- the synthetic bursty trace of the sliding-accuracy study (its shape is
 * described in sliding-accuracy.c and docs/sliding-accuracy.md; the constants below set it). All integer
 * arithmetic, with one splitmix64 stream per client derived from the seed, so the same seed gives the
 * same trace on every platform. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "rl_common.h"
#include "sliding-accuracy.h"

/* --- trace shape ------------------------------------------------------------------------------------ */

#define T0_MS 1700000000123LL     /* 2023-11-14, deliberately not on any window boundary */
#define START_SPREAD_MS 3600000LL /* clients start within the first hour */
#define WEIGHT_MIN 1000LL         /* share weights: Pareto(1) on [1000, 10^6] */
#define WEIGHT_MAX 1000000LL
#define GAP_SLOW_MS 5000LL        /* base mean gap in a burst: 5000 ms / X, X Pareto(1) on [1, 500] */
#define RATE_SPREAD_MAX 500LL
#define GAP_MIN_MS 10LL
#define ON_MIN_MS 2000LL
#define ON_MAX_MS 600000LL
#define OFF_MIN_MS 10000LL
#define OFF_MAX_MS 3600000LL

/* --- deterministic PRNG: splitmix64, one stream per client ------------------------------------------ */

static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (multiply-shift; its bias is below 2^-40 for the n used here). */
static uint64_t rng_below(uint64_t *s, uint64_t n) {
    return (uint64_t)(((unsigned __int128)rng_next(s) * n) >> 64);
}

/* Pareto with tail index 1 on [lo, hi]: P(X > x) = lo / x for lo <= x < hi, the rest at hi. */
static int64_t rng_pareto1(uint64_t *s, int64_t lo, int64_t hi) {
    uint64_t u = 1 + rng_below(s, 1ULL << 32); /* 1 .. 2^32 */
    rl_i128 x = (rl_i128)lo * ((rl_i128)1 << 32) / u;
    return x > hi ? hi : (int64_t)x;
}

static uint64_t client_stream(uint64_t seed, uint64_t client, uint64_t purpose) {
    uint64_t s = seed ^ (client * 0xD1B54A32D192ED03ULL) ^ (purpose << 56);
    rng_next(&s);
    return s;
}

/* --- the trace -------------------------------------------------------------------------------------- */

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "sliding-accuracy: out of memory\n");
        exit(2);
    }
    return p;
}

/* Each client's share of the requests: floor(N * w / total) of a Pareto(1) weight w, the few left over
 * one each to the first clients. Returns a new array of C counts. */
static int64_t *client_shares(int64_t C, int64_t N, uint64_t seed) {
    int64_t *weight = xmalloc(sizeof(int64_t) * (size_t)C);
    rl_i128 total = 0;
    for (int64_t i = 0; i < C; i++) {
        uint64_t s = client_stream(seed, (uint64_t)i, 1);
        weight[i] = rng_pareto1(&s, WEIGHT_MIN, WEIGHT_MAX);
        total += weight[i];
    }
    int64_t given = 0;
    for (int64_t i = 0; i < C; i++) {
        weight[i] = (int64_t)((rl_i128)N * weight[i] / total);
        given += weight[i];
    }
    for (int64_t i = 0; given < N; i = (i + 1) % C, given++) weight[i]++;
    return weight;
}

/* Client i's `count` requests, in time order, from t_ms[k]: bursts and quiet periods. Returns the next k. */
static int64_t client_requests(trace *tr, int64_t k, int64_t i, int64_t count, uint64_t seed) {
    uint64_t s = client_stream(seed, (uint64_t)i, 2);
    int64_t x = rng_pareto1(&s, 1, RATE_SPREAD_MAX);
    int64_t base_gap = GAP_SLOW_MS / x;
    int64_t t = T0_MS + (int64_t)rng_below(&s, START_SPREAD_MS);
    int64_t on_end = t + rng_pareto1(&s, ON_MIN_MS, ON_MAX_MS);
    int64_t gap = base_gap; /* this burst's mean gap */
    for (int64_t left = count; left > 0;) {
        int64_t g = (int64_t)rng_below(&s, (uint64_t)(2 * gap + 1));
        if (t + g < on_end) {
            t += g;
            tr->t_ms[k++] = t;
            left--;
        } else { /* the burst is over: a quiet period, then the next burst */
            t = on_end + rng_pareto1(&s, OFF_MIN_MS, OFF_MAX_MS);
            on_end = t + rng_pareto1(&s, ON_MIN_MS, ON_MAX_MS);
            gap = base_gap * (int64_t)(1 + rng_below(&s, 4)) / 2; /* x 1/2, 1, 3/2 or 2 */
            if (gap < GAP_MIN_MS) gap = GAP_MIN_MS;
        }
    }
    return k;
}

void trace_generate(trace *tr, uint64_t seed) {
    int64_t C = tr->clients, N = tr->requests;
    int64_t *share = client_shares(C, N, seed);
    tr->first = xmalloc(sizeof(int64_t) * (size_t)(C + 1));
    tr->t_ms = xmalloc(sizeof(int64_t) * (size_t)N);
    int64_t k = 0;
    for (int64_t i = 0; i < C; i++) {
        tr->first[i] = k;
        k = client_requests(tr, k, i, share[i], seed);
    }
    tr->first[C] = k;
    free(share);
}

int trace_write(const trace *tr, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 2;
    }
    for (int64_t i = 0; i < tr->clients; i++)
        for (int64_t k = tr->first[i]; k < tr->first[i + 1]; k++) fprintf(f, "%" PRId64 ",%" PRId64 "\n", i, tr->t_ms[k]);
    fclose(f);
    return 0;
}
