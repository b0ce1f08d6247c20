/* fuzz_leases.c -- libFuzzer target for the concurrency limit's decision (algorithms/concurrency.c), driven
 * through the tests' model of a key (tests/lease_store.h) as the module drives it.
 *
 * Input: the first byte gives the limit (1 to 16); then each group of four bytes is one step: what (acquire
 * with a made id, acquire with ID i0..i7, release, renew) and which id (the odd ones 30 bytes, kept outside
 * the lease), how far the clock moves (0 to 255 µs or ms), the cost (1 to limit + 2), and lease_ms (1 to
 * 1786).
 *
 * Invariants (abort() with the values on violation), after every step:
 *   - the key's leases are a state the module could have written (rl_lease_valid), at most `limit` of them,
 *     and the units of the unexpired ones never exceed the limit;
 *   - a reply: allowed 0 or 1; remaining within [0, limit] and equal to the limit less the units held after
 *     the call; wait_ms 0; retry_after_ms -1 exactly when admitted or when the cost is above the limit;
 *     reset_after_ms 0 exactly when no unexpired lease is left, else the last one's end (rounded up);
 *   - a denial's retry_after_ms is exact: on a copy, the same request at now + retry_after_ms is admitted,
 *     and at one ms before (when that is after now) it is not. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "require.h"
#include "../lease_store.h"

static lease_store key, copy;
static int64_t cur_limit, cur_now;
static int cur_step;

static void dump_context(void) {
    fprintf(stderr, "  step %d, limit %lld, now %lld µs, %d leases:", cur_step, (long long)cur_limit,
            (long long)cur_now, key.n);
    for (int i = 0; i < key.n; i++)
        fprintf(stderr, " [%.*s %d units, ends %lld]", key.v[i].id_len, rl_lease_id(&key.v[i]), key.v[i].units,
                (long long)key.v[i].end_us);
    fputc('\n', stderr);
}

static int64_t held_at(const lease_store *s, int64_t now) {
    int64_t held = 0;
    for (int i = 0; i < s->n; i++)
        if (s->v[i].end_us > now) held += s->v[i].units;
    return held;
}

static void check_state(const lease_store *s, int64_t limit, int64_t now) {
    REQUIRE(rl_lease_valid(s->v, s->n), "the leases are not a valid state (%d of them)", s->n);
    REQUIRE(s->n <= limit, "%d leases stored under a limit of %lld", s->n, (long long)limit);
    REQUIRE(held_at(s, now) <= limit, "%lld units held under a limit of %lld", (long long)held_at(s, now),
            (long long)limit);
}

static void check_reply(const rl_reply *r, const lease_store *s, int64_t limit, int64_t cost, int64_t now) {
    REQUIRE(r->allowed == 0 || r->allowed == 1, "allowed %lld", (long long)r->allowed);
    int64_t held = held_at(s, now);
    REQUIRE(r->limit == limit && r->wait_ms == 0, "limit %lld wait_ms %lld", (long long)r->limit, (long long)r->wait_ms);
    REQUIRE(r->remaining == (held < limit ? limit - held : 0), "remaining %lld with %lld held of %lld",
            (long long)r->remaining, (long long)held, (long long)limit);
    REQUIRE((r->retry_after_ms == -1) == (r->allowed || cost > limit), "retry %lld, allowed %lld, cost %lld of %lld",
            (long long)r->retry_after_ms, (long long)r->allowed, (long long)cost, (long long)limit);
    int64_t last = now;
    for (int i = 0; i < s->n; i++)
        if (s->v[i].end_us > last) last = s->v[i].end_us;
    REQUIRE(r->reset_after_ms == (last - now + 999) / 1000, "reset %lld, the last lease ends in %lld µs",
            (long long)r->reset_after_ms, (long long)(last - now));
}

/* The denied request (no ID) tried again on a copy at now + retry: admitted; one ms before: denied. */
static void check_retry(const rl_reply *r, int64_t limit, int64_t lease_ms, int64_t cost, int64_t now) {
    if (r->allowed || r->retry_after_ms < 0) return;
    lease_store_copy(&copy, &key);
    rl_reply again = lease_store_acquire(&copy, limit, lease_ms, cost, NULL, 0, now + r->retry_after_ms * 1000, NULL);
    REQUIRE(again.allowed == 1, "denied again at its retry_after_ms %lld", (long long)r->retry_after_ms);
    if (r->retry_after_ms < 2) return;
    lease_store_copy(&copy, &key);
    again = lease_store_acquire(&copy, limit, lease_ms, cost, NULL, 0, now + (r->retry_after_ms - 1) * 1000, NULL);
    REQUIRE(again.allowed == 0, "admitted a ms before its retry_after_ms %lld", (long long)r->retry_after_ms);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int64_t limit = 1 + data[0] % 16, now = 1700000000000000LL;
    lease_store_clear(&key);
    key.next_id = 1;
    for (size_t at = 1; at + 4 <= size; at += 4) {
        uint8_t what = data[at], step = data[at + 1];
        now += (what & 0x80) ? (int64_t)step * 1000 : step;
        int64_t cost = 1 + data[at + 2] % (limit + 2), lease_ms = 1 + (int64_t)data[at + 3] * 7;
        /* ids i0 .. i7, the odd ones long enough to live outside the lease (RL_LEASE_ID_INLINE) */
        char id[40];
        int id_n = (what >> 2) % 8;
        size_t id_len = id_n % 2 ? 30 : 2;
        memset(id, 'x', sizeof id);
        id[0] = 'i', id[1] = (char)('0' + id_n);
        cur_limit = limit, cur_now = now, cur_step = (int)(at / 4);
        switch (what & 3) {
        case 0:
        case 1: {
            int named = (what & 3) == 1;
            rl_reply r = lease_store_acquire(&key, limit, lease_ms, cost, named ? id : NULL, named ? id_len : 0, now, NULL);
            check_reply(&r, &key, limit, cost, now);
            if (!named) check_retry(&r, limit, lease_ms, cost, now);
            break;
        }
        case 2:
            lease_store_release(&key, id, id_len, now);
            break;
        default:
            lease_store_renew(&key, id, id_len, lease_ms, now);
            break;
        }
        check_state(&key, limit, now);
    }
    return 0;
}
