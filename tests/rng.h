/* rng.h -- the deterministic pseudo-random numbers of the unit tests (splitmix64): the same seed gives
 * the same cases on every machine and compiler. A test defines RNG_SEED before including this. */
#ifndef RL_TEST_RNG_H
#define RL_TEST_RNG_H

#include <stdint.h>

#ifndef RNG_SEED
#define RNG_SEED 0x9e3779b97f4a7c15ULL
#endif

static uint64_t rng_state = RNG_SEED;

static inline uint64_t rng(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline int64_t rng_range(int64_t lo, int64_t hi) { return lo + (int64_t)(rng() % (uint64_t)(hi - lo + 1)); }

/* A number in [1, max], spread over all magnitudes (as many 1-digit as 12-digit values). */
static inline int64_t rng_magnitude(int64_t max) {
    int64_t top = 1;
    int digits = (int)(rng() % 13);
    for (int i = 0; i < digits && top <= max / 10; i++) top *= 10;
    return 1 + (int64_t)(rng() % (uint64_t)top) % max;
}

#endif
