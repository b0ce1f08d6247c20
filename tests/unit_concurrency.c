/* unit_concurrency.c -- the concurrency limit's decision (algorithms/concurrency.c) on a fake clock.
 *
 * The test plays the module (tests/lease_store.h): a key's leases in an array sorted by end, each plan
 * applied as module/lease_type.c applies it, releases and renewals as module/leases.c makes them. Then:
 *   1. hand-computed tables: admission up to the limit, the retry when leases will have expired, COST above
 *      the limit, ID reuse renewing without taking more, a generated id, DRYRUN-free looks (COST 0),
 *      expiry, a lease that ends exactly now;
 *   2. generated traces against the reference model (tests/lease_model.h): an unordered list of leases,
 *      each answer found by brute force, with acquires (with and without ID, COST up to the limit and above),
 *      releases, renewals (longer and shorter), the limit changed on a live key, and time moving by random
 *      steps. Every reply field, every id, and the set of unexpired leases must be identical, and the units
 *      held by unexpired leases never exceed the limit at any instant under a constant limit;
 *   3. rl_lease_valid on crafted states. */
#include <stdlib.h>

#include "check.h"
#define RNG_SEED 0x1ea5e5ULL
#include "rng.h"
#include "lease_model.h"
#include "lease_store.h"

/* --- the test's module (lease_store.h), with ids as C strings ------------------------------------------ */

#define MAXL LEASE_STORE_MAX
typedef lease_store store;

static rl_reply acquire(store *s, int64_t limit, int64_t lease_ms, int64_t cost, const char *id, int64_t now,
                        rl_lease_plan *plan) {
    return lease_store_acquire(s, limit, lease_ms, cost, id, id ? strlen(id) : 0, now, plan);
}
static int release(store *s, const char *id, int64_t now) { return lease_store_release(s, id, strlen(id), now); }
static int renew(store *s, const char *id, int64_t lease_ms, int64_t now) {
    return lease_store_renew(s, id, strlen(id), lease_ms, now);
}

#define MS 1000LL
#define T0 (1700000000000LL * MS)

/* --- 1. tables ----------------------------------------------------------------------------------------- */

static void test_tables(void) {
    static store s = {.next_id = 1};
    rl_lease_plan plan;
    rl_reply r = acquire(&s, 3, 1000, 1, NULL, T0, &plan);
    CHECK_EQ(r.allowed, 1);
    CHECK_EQ(r.limit, 3);
    CHECK_EQ(r.remaining, 2);
    CHECK_EQ(r.retry_after_ms, -1);
    CHECK_EQ(r.reset_after_ms, 1000);
    CHECK_EQ(r.wait_ms, 0);
    CHECK_EQ(r.granted, 1);
    CHECK_EQ(plan.action, RL_LEASE_ADD);
    char want[64];
    snprintf(want, sizeof want, "1");
    CHECK(plan.id_len == strlen(want) && memcmp(plan.id, want, plan.id_len) == 0);
    r = acquire(&s, 3, 2000, 2, "job", T0 + 100 * MS, &plan);
    CHECK_EQ(r.allowed, 1);
    CHECK_EQ(r.remaining, 0);
    CHECK_EQ(r.reset_after_ms, 2000);
    CHECK(plan.id_len == 3 && memcmp(plan.id, "job", 3) == 0);
    /* full: a request of 1 fits when the first lease (1 unit) ends, at T0 + 1000 ms: 800 ms from now */
    r = acquire(&s, 3, 500, 1, NULL, T0 + 200 * MS, &plan);
    CHECK_EQ(r.allowed, 0);
    CHECK_EQ(r.remaining, 0);
    CHECK_EQ(r.retry_after_ms, 800);
    CHECK_EQ(r.reset_after_ms, 1900);
    CHECK_EQ(r.granted, 0);
    CHECK_EQ(plan.action, RL_LEASE_KEEP);
    /* a request of 2 needs "job" (2 units) gone too: at T0 + 2100 ms */
    r = acquire(&s, 3, 500, 2, NULL, T0 + 200 * MS, NULL);
    CHECK_EQ(r.retry_after_ms, 1900);
    /* above the limit: never */
    r = acquire(&s, 3, 500, 4, NULL, T0 + 200 * MS, NULL);
    CHECK_EQ(r.allowed, 0);
    CHECK_EQ(r.retry_after_ms, -1);
    /* ID reuse: renewed, no more units taken, even though the limit is full */
    r = acquire(&s, 3, 5000, 2, "job", T0 + 300 * MS, &plan);
    CHECK_EQ(r.allowed, 1);
    CHECK_EQ(r.granted, 0);
    CHECK_EQ(r.remaining, 0);
    CHECK_EQ(r.reset_after_ms, 5000);
    CHECK_EQ(plan.action, RL_LEASE_RENEW);
    CHECK_EQ(s.n, 2);
    CHECK_EQ(s.v[1].end_us, T0 + 5300 * MS);
    CHECK_EQ(s.v[1].units, 2);
    CHECK_EQ(s.v[1].acquired_us, T0 + 100 * MS); /* a renewal keeps its age */
    /* a look (COST 0) takes nothing */
    r = acquire(&s, 3, 500, 0, NULL, T0 + 300 * MS, &plan);
    CHECK_EQ(r.allowed, 1);
    CHECK_EQ(r.remaining, 0);
    CHECK_EQ(plan.action, RL_LEASE_KEEP);
    /* the first lease ends exactly at T0 + 1000 ms: it no longer counts then */
    r = acquire(&s, 3, 100, 0, NULL, T0 + 1000 * MS, NULL);
    CHECK_EQ(r.remaining, 1);
    r = acquire(&s, 3, 100, 0, NULL, T0 + 1000 * MS - 1, NULL);
    CHECK_EQ(r.remaining, 0);
    /* release: the slot comes back at once; a second release finds nothing */
    CHECK_EQ(release(&s, "job", T0 + 400 * MS), 1);
    CHECK_EQ(release(&s, "job", T0 + 400 * MS), 0);
    r = acquire(&s, 3, 100, 0, NULL, T0 + 400 * MS, NULL);
    CHECK_EQ(r.remaining, 2);
    CHECK_EQ(r.reset_after_ms, 600);
    /* an expired id is not renewed: a new lease is taken under it (and counted) */
    CHECK_EQ(renew(&s, want, 100, T0 + 1000 * MS), 0);
    r = acquire(&s, 1, 100, 1, want, T0 + 1000 * MS, &plan);
    CHECK_EQ(plan.action, RL_LEASE_ADD);
    CHECK_EQ(plan.expired, 1);
    CHECK_EQ(r.granted, 1);
    CHECK_EQ(s.n, 1);
    CHECK_EQ(s.next_id, 2); /* an id given: none made */
    /* renew shorter: the lease ends sooner */
    CHECK_EQ(renew(&s, want, 1, T0 + 1050 * MS), 1);
    CHECK_EQ(s.v[0].end_us, T0 + 1051 * MS);
    r = acquire(&s, 1, 100, 1, NULL, T0 + 1051 * MS, &plan);
    CHECK_EQ(r.allowed, 1);
    CHECK_EQ(s.next_id, 3);
    snprintf(want, sizeof want, "2"); /* the count goes on across keys' lives */
    CHECK(plan.id_len == strlen(want) && memcmp(plan.id, want, plan.id_len) == 0);
    /* a retry rounds up to whole ms: a lease ending 1 µs from now is 1 ms away */
    static store t = {.next_id = 0xfffffffffffffffeULL}; /* made ids in hex: the largest, then 0 */
    acquire(&t, 1, 1, 1, "x", T0, NULL);
    r = acquire(&t, 1, 1, 1, NULL, T0 + 999, NULL);
    CHECK_EQ(r.retry_after_ms, 1);
    CHECK_EQ(r.reset_after_ms, 1);
    CHECK_EQ(r.reset_after_us, 1);
    r = acquire(&t, 1, 1, 1, NULL, T0 + 1000, &plan);
    snprintf(want, sizeof want, "fffffffffffffffe");
    CHECK(r.allowed && plan.id_len == strlen(want) && memcmp(plan.id, want, plan.id_len) == 0);
    r = acquire(&t, 1, 1, 1, NULL, T0 + 2000, &plan);
    snprintf(want, sizeof want, "ffffffffffffffff");
    CHECK(r.allowed && plan.id_len == strlen(want) && memcmp(plan.id, want, plan.id_len) == 0);
    r = acquire(&t, 1, 1, 1, NULL, T0 + 3000, &plan);
    snprintf(want, sizeof want, "0");
    CHECK(r.allowed && plan.id_len == strlen(want) && memcmp(plan.id, want, plan.id_len) == 0);
}

/* --- 2. generated traces against the reference model ------------------------------------------------------ */

typedef lease_model model;

/* The unexpired leases of the store and of the model are the same (by id, units and end). */
static int same_leases(const store *s, const model *m, int64_t now) {
    int counted = 0;
    for (int i = 0; i < s->n; i++) {
        const rl_lease *l = &s->v[i];
        if (l->end_us <= now) continue;
        counted++;
        int j = model_find(m, now, rl_lease_id(l), l->id_len);
        if (j < 0 || m->v[j].units != l->units || m->v[j].end_us != l->end_us) return 0;
    }
    int live = 0;
    for (int i = 0; i < m->n; i++) live += m->v[i].end_us > now;
    return counted == live;
}

static void test_traces(void) {
    long mismatches = 0, over = 0, steps = 0;
    for (int trace = 0; trace < 400; trace++) {
        store *s = calloc(1, sizeof *s);
        model *m = calloc(1, sizeof *m);
        s->next_id = m->next_id = 1;
        int64_t limit = rng_range(1, trace % 4 == 0 ? 200 : 8), now = T0 + rng_range(0, 1000000);
        int constant_limit = trace % 5 != 0;
        for (int step = 0; step < 300; step++, steps++) {
            now += rng() % 3 == 0 ? 0 : rng_range(0, 400) * (rng() % 2 ? MS : 1);
            if (!constant_limit && rng() % 10 == 0) limit = rng_range(1, 10);
            char id[48]; /* c0 .. c12; the ones above 9 long enough to live outside the lease */
            int id_n = (int)rng_range(0, 12);
            snprintf(id, sizeof id, id_n > 9 ? "c%d-a-long-id-kept-outside-the-lease" : "c%d", id_n);
            int op = (int)(rng() % 10);
            if (op < 6) {
                int64_t cost = rng() % 8 == 0 ? rng_range(1, limit + 3) : 1 + (int64_t)(rng() % 2);
                int64_t lease_ms = rng_range(1, 2000);
                const char *with = rng() % 2 ? id : NULL;
                char ref_id[RL_LEASE_ID_MAX];
                size_t ref_len;
                rl_lease_plan plan;
                rl_reply want = model_acquire(m, limit, lease_ms, cost, with, with ? strlen(with) : 0, now, ref_id, &ref_len);
                rl_reply got = acquire(s, limit, lease_ms, cost, with, now, &plan);
                int ok = got.allowed == want.allowed && got.limit == want.limit && got.remaining == want.remaining &&
                         got.retry_after_ms == want.retry_after_ms && got.reset_after_ms == want.reset_after_ms &&
                         got.wait_ms == 0 && got.granted == want.granted;
                if (got.allowed) ok &= plan.id_len == ref_len && memcmp(plan.id, ref_id, ref_len) == 0;
                if (!ok && mismatches++ < 5)
                    fprintf(stderr, "trace %d step %d: got %lld %lld %lld %lld, want %lld %lld %lld %lld\n", trace,
                            step, (long long)got.allowed, (long long)got.remaining, (long long)got.retry_after_ms,
                            (long long)got.reset_after_ms, (long long)want.allowed, (long long)want.remaining,
                            (long long)want.retry_after_ms, (long long)want.reset_after_ms);
            } else if (op < 8) {
                mismatches += release(s, id, now) != model_release(m, id, strlen(id), now);
            } else {
                int64_t lease_ms = rng_range(1, 3000);
                mismatches += renew(s, id, lease_ms, now) != model_renew(m, id, strlen(id), lease_ms, now);
            }
            mismatches += !same_leases(s, m, now);
            /* the leases never hold more than the limit, at any instant (the held units only fall between
             * writes, so checking right after each write is checking every instant) */
            if (constant_limit && model_held_after(m, now) > limit) over++;
            mismatches += s->n > limit + MAXL / 2; /* (a bound for the test's arrays) */
            if (s->n > 0) mismatches += !rl_lease_valid(s->v, s->n);
        }
        lease_store_clear(s);
        free(s);
        free(m);
    }
    CHECK_EQ(mismatches, 0);
    CHECK_EQ(over, 0);
    CHECK(steps == 400 * 300);
}

/* --- 3. validation of crafted states ---------------------------------------------------------------------- */

static void test_valid(void) {
    rl_lease v[3] = {{.end_us = 10, .acquired_us = 5, .units = 1, .id_len = 1, .id.bytes = "a"},
                     {.end_us = 20, .acquired_us = 5, .units = 2, .id_len = 1, .id.bytes = "b"},
                     {.end_us = 20, .acquired_us = 0, .units = 3, .id_len = 2, .id.bytes = "cc"}};
    CHECK(rl_lease_valid(v, 3));
    CHECK(rl_lease_valid(v, 0));
    CHECK(!rl_lease_valid(v, -1));
    CHECK(!rl_lease_valid(v, RL_LEASE_MAX_LIMIT + 1));
    rl_lease bad[3];
    memcpy(bad, v, sizeof v);
    bad[0].end_us = 30; /* out of order */
    CHECK(!rl_lease_valid(bad, 3));
    memcpy(bad, v, sizeof v);
    bad[1].units = 0;
    CHECK(!rl_lease_valid(bad, 3));
    memcpy(bad, v, sizeof v);
    bad[1].units = RL_LEASE_MAX_LIMIT + 1;
    CHECK(!rl_lease_valid(bad, 3));
    memcpy(bad, v, sizeof v);
    bad[2].id_len = 0;
    CHECK(!rl_lease_valid(bad, 3));
    memcpy(bad, v, sizeof v);
    bad[2].acquired_us = 21; /* acquired after it ends */
    CHECK(!rl_lease_valid(bad, 3));
    memcpy(bad, v, sizeof v);
    bad[0].end_us = 0;
    CHECK(!rl_lease_valid(bad, 3));
    /* insert_at keeps leases of one end in the order they were written */
    CHECK_EQ(rl_lease_insert_at(v, 3, 20), 3);
    CHECK_EQ(rl_lease_insert_at(v, 3, 19), 1);
    CHECK_EQ(rl_lease_insert_at(v, 3, 5), 0);
    CHECK_EQ(rl_lease_expired(v, 3, 20), 3);
    CHECK_EQ(rl_lease_expired(v, 3, 19), 1);
    CHECK_EQ(rl_lease_find(v, 3, 10, "a", 1), -1); /* ended */
    CHECK_EQ(rl_lease_find(v, 3, 9, "a", 1), 0);
    CHECK_EQ(rl_lease_find(v, 3, 9, "cc", 2), 2);
    CHECK_EQ(rl_lease_find(v, 3, 9, "c", 1), -1);
    /* ids longer than a lease holds in itself: found, renewed (moved by end with its id) and released */
    static lease_store k = {.next_id = 1};
    const char *long_id = "an-id-of-sixty-four-bytes-0123456789-0123456789-0123456789-01234";
    CHECK_EQ(strlen(long_id), RL_LEASE_ID_MAX);
    rl_lease_plan plan;
    lease_store_acquire(&k, 3, 100, 1, long_id, strlen(long_id), T0, &plan);
    lease_store_acquire(&k, 3, 50, 1, "short", 5, T0, NULL);
    CHECK(k.n == 2 && k.v[1].id_len == RL_LEASE_ID_MAX && memcmp(rl_lease_id(&k.v[1]), long_id, RL_LEASE_ID_MAX) == 0);
    CHECK_EQ(lease_store_renew(&k, long_id, strlen(long_id), 10, T0), 1);
    CHECK(k.v[0].id_len == RL_LEASE_ID_MAX && memcmp(rl_lease_id(&k.v[0]), long_id, RL_LEASE_ID_MAX) == 0);
    lease_store_acquire(&k, 3, 100, 1, long_id, strlen(long_id), T0, &plan); /* ID reuse: renewed, no copy */
    CHECK(plan.action == RL_LEASE_RENEW && k.n == 2);
    CHECK_EQ(lease_store_release(&k, long_id, strlen(long_id), T0), 1);
    CHECK(k.n == 1 && k.v[0].id_len == 5);
    lease_store_clear(&k);
    /* made ids: the number in hex, no leading zeros */
    static const struct {
        uint64_t n;
        const char *id;
    } ids[] = {{0, "0"},     {9, "9"},     {10, "a"},         {0x1a, "1a"},
               {0x100, "100"}, {0xabc, "abc"}, {0x10000, "10000"}, {0x9c1e0f3a27b4d5e8ULL, "9c1e0f3a27b4d5e8"}};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char out[RL_LEASE_ID_MAX];
        size_t len = rl_lease_make_id(out, ids[i].n);
        CHECK(len == strlen(ids[i].id) && memcmp(out, ids[i].id, len) == 0);
    }
    CHECK_EQ(sizeof(rl_lease), 48);
}

int main(void) {
    test_tables();
    test_traces();
    test_valid();
    return check_summary("unit_concurrency");
}
