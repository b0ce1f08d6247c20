/* smooth_trace.c -- random traces through RL.SMOOTH's algorithm (algorithms/smooth.c), written for the real
 * Guava to replay (GuavaTrace.java); tests/guava/run.sh compares the two, bit for bit.
 *
 *   smooth_trace OPS EXPECTED [traces [seed]]
 *
 * Each trace is one key: a form (bursty, or warming up with a cold factor) and a period fixed for the trace
 * (Guava can only change a limiter's rate), then calls at random gaps with random permits, MAXWAIT now and
 * then, and now and then another rate. The key is kept as the module keeps it: deleted when the reply says
 * it is rested, gone once its expiry (the instant it has rested) has passed, absent before the first call. OPS gets what a Guava user would do for each call: a rested
 * limiter where the key is missing ("N"), setRate where the call's rate differs from the key's ("S"), then
 * reserve or tryAcquire ("A"). EXPECTED gets, per A, what Guava must answer: allowed, the wait in µs (the
 * ticket the key held, as the algorithm reads it), and the state after the call, storedPermits' bits and
 * nextFreeTicketMicros, or "- -" where the module deleted the key (rested: Guava's state then differs only
 * in that its ticket lies in the past, which answers the same). Decimals are written as clients write them;
 * Java parses them with Double.parseDouble, the module as exact millionths (smooth.h says why they agree).
 * Self-check: the reply's wait_ms is that wait rounded up to a ms. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algorithms/smooth.h"

static uint64_t state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static int64_t between(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* millionths as a client writes the number: "2.5", "0.000001", "1000" */
static const char *decimal(int64_t m, char *buf) {
    int64_t whole = m / 1000000, frac = m % 1000000;
    int n = snprintf(buf, 32, frac ? "%lld.%06lld" : "%lld", (long long)whole, (long long)frac);
    while (frac && buf[n - 1] == '0') buf[--n] = '\0';
    return buf;
}

/* A rate in millionths: round ones, or any with up to six decimals, from 0.05 to 2000 per second. */
static int64_t random_rate(void) {
    static const int64_t round[] = {500000, 1000000, 2000000, 3000000, 5000000, 7000000, 10000000, 100000000};
    if (rnd() % 3 == 0) return round[rnd() % 8];
    return between(50000, rnd() % 2 ? 20000000 : 2000000000);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: smooth_trace OPS EXPECTED [traces [seed]]\n");
        return 2;
    }
    FILE *ops = fopen(argv[1], "w"), *exp = fopen(argv[2], "w");
    if (!ops || !exp) {
        perror("smooth_trace");
        return 2;
    }
    int traces = argc > 3 ? atoi(argv[3]) : 300;
    if (argc > 4) state = strtoull(argv[4], NULL, 10);
    const rl_algorithm *alg = &rl_smooth_algorithm;
    long long calls = 0, denied = 0, rerated = 0, recreated = 0;
    for (int tr = 0; tr < traces; tr++) {
        int warm = rnd() % 2;
        int64_t period = warm ? between(1, 20000) : (rnd() % 5 == 0 ? 0 : between(1, 10000));
        int64_t cold = warm ? (rnd() % 3 == 0 ? 3000000 : between(1000000, 10000000)) : 0;
        int64_t rate = random_rate();
        int64_t now = 1700000000000000LL + (int64_t)(rnd() % 1000000000000ULL);
        rl_cell cell;
        memset(&cell, 0, sizeof cell);
        int exists = 0;
        int64_t key_rate = 0, expires_at = 0; /* the key's expiry: the instant it has rested */
        for (int step = 0; step < 150; step++) {
            if (rnd() % 20 == 0) rate = random_rate();
            double interval_us = 1e12 / (double)rate; /* the stable interval, to scale the gaps */
            switch (rnd() % 8) {
            case 6: /* about the time to rest from empty: the period (cold factor times it warming up) */
                now += (period * 1000 * (warm ? cold / 1000000 + 1 : 1)) + between(-3, 3) * (int64_t)interval_us;
                break;
            case 0: break;
            case 1: now += between(0, 1000); break;
            case 2: now += (int64_t)(interval_us * (double)between(0, 300) / 100.0); break;
            case 3: now += (int64_t)(interval_us * (double)between(0, 30)); break;
            default: now += (int64_t)(interval_us * (double)between(0, 100) / 100.0); break;
            }
            int64_t permits = rnd() % 4 == 0 ? between(1, 1000) : between(1, 5);
            int64_t maxwait_ms = rnd() % 3 == 0 ? between(0, 3000) : -1;
            rl_request req = {.params = {rate, period, cold}, .cost = permits, .now_us = now, .maxwait_ms = maxwait_ms};
            if (warm) req.flags |= RL_F_WARMUP | RL_F_COLDFACTOR;
            else req.flags |= RL_F_MAXBURST;
            if (maxwait_ms >= 0) req.flags |= RL_F_MAXWAIT;
            char err[RL_ERR_LEN], b1[32], b2[32];
            if (alg->validate(&req, err) != 0) continue; /* too many permits at this rate */

            if (exists && now >= expires_at) exists = 0; /* expired: the module's key is gone */
            if (!exists) {
                fprintf(ops, "N %lld %d %s %lld %s\n", (long long)now, warm ? 2 : 1, decimal(rate, b1),
                        (long long)period, warm ? decimal(cold, b2) : "0");
                recreated++;
            } else if (key_rate != rate) {
                fprintf(ops, "S %lld %s\n", (long long)now, decimal(rate, b1));
                rerated++;
            }
            int64_t ticket = exists && (int64_t)cell.w[5] > now ? (int64_t)cell.w[5] : now;
            rl_reply r;
            rl_cell next = cell;
            alg->decide(&req, &next, exists, &r);
            int64_t wait_us = r.allowed ? ticket - now : 0;
            if (r.wait_ms != (wait_us + 999) / 1000) {
                fprintf(stderr, "smooth_trace: self-check: wait_ms %lld for %lld us\n", (long long)r.wait_ms,
                        (long long)wait_us);
                return 1;
            }
            fprintf(ops, "A %lld %lld %lld\n", (long long)now, (long long)permits,
                    (long long)(maxwait_ms >= 0 ? maxwait_ms * 1000 : -1));
            calls++;
            denied += !r.allowed;
            if (r.allowed || exists) { /* written (a denied call may set new parameters) */
                cell = next;
                key_rate = rate;
                exists = 1;
            }
            if (r.reset_after_ms == 0) exists = 0; /* rested: the module deletes the key */
            expires_at = now + r.reset_after_us;
            if (exists)
                fprintf(exp, "%lld %lld %llu %lld\n", (long long)r.allowed, (long long)wait_us,
                        (unsigned long long)cell.w[4], (long long)cell.w[5]);
            else
                fprintf(exp, "%lld %lld - -\n", (long long)r.allowed, (long long)wait_us);
        }
    }
    fclose(ops);
    fclose(exp);
    fprintf(stderr, "smooth_trace: %d traces, %lld calls (%lld denied by MAXWAIT), %lld setRate, %lld new limiters\n",
            traces, calls, denied, rerated, recreated);
    return 0;
}
