/* integration_concurrency.c -- concurrency leases against a real redis-server: RL.ACQUIRE, RL.ACQUIRE_RO,
 * RL.RELEASE, RL.RENEW, RL.LEASES and RL.ALL's CONCURRENCY clause, under the test clock.
 *
 *   - the replies (seven fields, the lease id or nil; RESP3's map), ID reuse, expiry, the key's TTL;
 *   - generated traces against the reference model (tests/lease_model.h), under the test clock: acquires
 *     with and without ID, COST above 1 and above the limit, releases, renewals, the limit changed on a
 *     live key, the clock moving; every reply field, every lease id and RL.LEASES must be the model's;
 *   - bad input: every argument refused with an error naming it, and the key unchanged (its DUMP);
 *   - WAIT: a release admits the head of the queue at once (the clock is frozen, so no timer could), in
 *     arrival order; a request that can never fit is answered at once; the timeout answers the denial;
 *   - RL.ALL with a CONCURRENCY clause: the per-limit reply carries the lease, a denied call takes none;
 *   - effects: a replica and an AOF replayed after kill -9 (and after a rewrite) hold byte-identical keys,
 *     DEBUG RELOAD, DUMP/RESTORE and COPY keep the leases; RL.SETSTATE refuses crafted states; a replica
 *     answers RL.ACQUIRE_RO and RL.LEASES and refuses RL.RELEASE;
 *   - keyspace events and WATCH: only writes signal, a denial writes nothing; INFO's counters; RL.RESET. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clients.h"
#define RNG_SEED 0xc0ffee11ULL
#include "lease_model.h"
#include "rng.h"
#include "server.h"

static server *srv;
static redisContext *c;

#define T0 1700000000000LL

static void clock_set(redisContext *ctx, long long ms) { CHECK(cmd_status_is(ctx, "OK", "RL.CLOCK SET %lld", ms)); }

/* An RL.ACQUIRE reply: the six numbers and the lease (has_lease 0 for nil), or ok 0 with the error. */
typedef struct acq {
    int ok;
    long long f[6];
    int has_lease;
    char lease[80];
    char error[256];
} acq;

static acq acq_of(const redisReply *r) {
    acq a = {0};
    if (r && r->type == REDIS_REPLY_ERROR) {
        snprintf(a.error, sizeof a.error, "%s", r->str);
        return a;
    }
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 7) return a;
    a.ok = 1;
    for (int i = 0; i < 6; i++) {
        a.ok &= r->element[i]->type == REDIS_REPLY_INTEGER;
        a.f[i] = r->element[i]->integer;
    }
    const redisReply *l = r->element[6];
    if (l->type == REDIS_REPLY_STRING) {
        a.has_lease = 1;
        snprintf(a.lease, sizeof a.lease, "%.*s", (int)l->len, l->str);
    } else {
        a.ok &= l->type == REDIS_REPLY_NIL;
    }
    return a;
}

static acq acquire(redisContext *ctx, const char *fmt, ...) {
    words w;
    va_list ap;
    va_start(ap, fmt);
    words_vformat(&w, fmt, ap);
    va_end(ap);
    redisReply *r = cmdargv(ctx, w.argc, w.argv, w.lens);
    acq a = acq_of(r);
    freeReplyObject(r);
    return a;
}

/* allowed, remaining, retry_after_ms, reset_after_ms as expected (limit and wait_ms checked too). */
static int acq_is(const acq *a, long long allowed, long long limit, long long remaining, long long retry,
                  long long reset) {
    int ok = a->ok && a->f[0] == allowed && a->f[1] == limit && a->f[2] == remaining && a->f[3] == retry &&
             a->f[4] == reset && a->f[5] == 0 && a->has_lease == (allowed == 1);
    if (!ok)
        fprintf(stderr, "     got ok=%d %lld %lld %lld %lld %lld %lld lease=%s %s\n", a->ok, a->f[0], a->f[1], a->f[2],
                a->f[3], a->f[4], a->f[5], a->has_lease ? a->lease : "(nil)", a->error);
    return ok;
}

/* RL.LEASES as "id:units:ttl_ms id:units:ttl_ms ...". */
static void leases_text(redisContext *ctx, const char *key, char *out, size_t n) {
    redisReply *r = cmd(ctx, "RL.LEASES %s", key);
    size_t used = 0;
    out[0] = '\0';
    if (r->type != REDIS_REPLY_ARRAY) {
        snprintf(out, n, "(%s)", r->type == REDIS_REPLY_ERROR ? r->str : "not an array");
    } else {
        for (size_t i = 0; i < r->elements && used < n; i++) {
            const redisReply *e = r->element[i];
            if (e->type != REDIS_REPLY_ARRAY || e->elements != 3) continue;
            used += (size_t)snprintf(out + used, n - used, "%s%.*s:%lld:%lld", i ? " " : "", (int)e->element[0]->len,
                                     e->element[0]->str, e->element[1]->integer, e->element[2]->integer);
        }
    }
    freeReplyObject(r);
}

#define CHECK_LEASES(ctx, key, want)                    \
    do {                                                \
        char got_[512];                                 \
        leases_text(ctx, key, got_, sizeof got_);       \
        CHECK_STR(got_, want);                          \
    } while (0)

/* 1 if the command line (split on spaces) answers exactly text (a status or an error); says what it got if not. */
static int line_is(redisContext *ctx, const char *text, const char *line) {
    redisReply *r = cmdline(ctx, "%s", line);
    int ok = (r->type == REDIS_REPLY_ERROR || r->type == REDIS_REPLY_STATUS) && strcmp(r->str, text) == 0;
    if (!ok) fprintf(stderr, "     %s: got \"%s\", expected \"%s\"\n", line, r->str ? r->str : "?", text);
    freeReplyObject(r);
    return ok;
}

/* --- replies ----------------------------------------------------------------------------------------- */

static void test_replies(void) {
    clock_set(c, T0);
    acq a = acquire(c, "RL.ACQUIRE pool 3 1000");
    CHECK(acq_is(&a, 1, 3, 2, -1, 1000));
    char first[80];
    snprintf(first, sizeof first, "%s", a.lease);
    CHECK_STR(first, "1");
    a = acquire(c, "RL.ACQUIRE pool 3 2000 COST 2 ID job-7");
    CHECK(acq_is(&a, 1, 3, 0, -1, 2000));
    CHECK_STR(a.lease, "job-7");
    clock_set(c, T0 + 200);
    a = acquire(c, "RL.ACQUIRE pool 3 1000");
    CHECK(acq_is(&a, 0, 3, 0, 800, 1800)); /* the first lease ends at T0 + 1000 */
    a = acquire(c, "RL.ACQUIRE pool 3 1000 COST 4");
    CHECK(acq_is(&a, 0, 3, 0, -1, 1800)); /* never */
    /* ID reuse renews, taking nothing more */
    a = acquire(c, "RL.ACQUIRE pool 3 5000 COST 2 ID job-7");
    CHECK(acq_is(&a, 1, 3, 0, -1, 5000));
    CHECK_STR(a.lease, "job-7");
    CHECK_LEASES(c, "pool", "1:1:800 job-7:2:5000");
    /* DRYRUN and the read-only form look, and record nothing */
    CHECK_EQ(cmd_int(c, "RL.RELEASE pool %s", first), 1);
    a = acquire(c, "RL.ACQUIRE pool 3 1000 DRYRUN");
    CHECK(a.ok && a.f[0] == 1 && a.f[2] == 0 && !a.has_lease);
    a = acquire(c, "RL.ACQUIRE_RO pool 3 1000 ID x");
    CHECK(a.ok && a.f[0] == 1 && !a.has_lease);
    CHECK_LEASES(c, "pool", "job-7:2:5000");
    /* release and renew answer 1 once, then 0 */
    CHECK_EQ(cmd_int(c, "RL.RELEASE pool %s", first), 0);
    CHECK_EQ(cmd_int(c, "RL.RENEW pool job-7 100"), 1);
    CHECK_LEASES(c, "pool", "job-7:2:100");
    CHECK_EQ(cmd_int(c, "RL.RENEW pool nobody 100"), 0);
    CHECK_EQ(cmd_int(c, "RL.RELEASE missing-key x"), 0);
    CHECK_EQ(cmd_int(c, "RL.RENEW missing-key x 5"), 0);
    CHECK_EQ(cmd_int(c, "EXISTS missing-key"), 0);
    /* an expired lease is gone for all: released, renewed, listed */
    clock_set(c, T0 + 300);
    CHECK_LEASES(c, "pool", "");
    CHECK_EQ(cmd_int(c, "RL.RENEW pool job-7 100"), 0);
    CHECK_EQ(cmd_int(c, "RL.RELEASE pool job-7"), 0);
    a = acquire(c, "RL.ACQUIRE pool 3 1000 COST 3");
    CHECK(acq_is(&a, 1, 3, 0, -1, 1000));
    CHECK_STR(a.lease, "2"); /* the module's count of made ids goes on */
    /* the last release deletes the key; a new key in the same µs makes a new id, not the released one */
    CHECK_EQ(cmd_int(c, "RL.RELEASE pool 2"), 1);
    CHECK_EQ(cmd_int(c, "EXISTS pool"), 0);
    a = acquire(c, "RL.ACQUIRE pool 3 1000");
    CHECK_STR(a.lease, "3");
    CHECK_EQ(cmd_int(c, "RL.RELEASE pool 2"), 0); /* a retried release takes nobody's lease */
    CHECK_EQ(cmd_int(c, "RL.RELEASE pool 3"), 1);
    CHECK_EQ(cmd_int(c, "EXISTS pool"), 0);
    /* the TTL is the last lease's end, on the real clock (rounded up to the ms: the key never goes first) */
    CHECK(line_is(c, "OK", "RL.CLOCK REAL"));
    acquire(c, "RL.ACQUIRE ttl 2 5000");
    acquire(c, "RL.ACQUIRE ttl 2 2000");
    long long pttl = cmd_int(c, "PTTL ttl");
    if (!CHECK(pttl > 4000 && pttl <= 5001)) fprintf(stderr, "     PTTL %lld\n", pttl);
    CHECK(cmd_int(c, "DEL ttl") == 1);
    /* RESP3: a map with the names, the lease last */
    char req[256];
    snprintf(req, sizeof req, "HELLO 3\r\nRL.CLOCK SET %lld\r\nRL.ACQUIRE r3 2 1000 ID abc\r\nRL.ACQUIRE r3 1 1000\r\n", T0);
    char *got = raw_exchange(srv->port, req, "lease\r\n_\r\n");
    CHECK(strstr(got, "%7\r\n+allowed\r\n:1\r\n+limit\r\n:2\r\n+remaining\r\n:1\r\n+retry_after_ms\r\n:-1\r\n"
                      "+reset_after_ms\r\n:1000\r\n+wait_ms\r\n:0\r\n+lease\r\n$3\r\nabc\r\n") != NULL);
    CHECK(strstr(got, "+allowed\r\n:0\r\n") != NULL && strstr(got, "+lease\r\n_\r\n") != NULL);
    free(got);
    cmd_int(c, "DEL r3");
}

/* --- generated traces against the reference model ------------------------------------------------------ */

static void test_traces(void) {
    static lease_model m;
    long mismatches = 0, steps = 0, admitted = 0, denied = 0;
    for (int trace = 0; trace < 12; trace++) {
        memset(&m, 0, sizeof m);
        long long now_ms = T0 + trace * 10000000LL;
        int64_t limit = rng_range(1, trace % 3 == 0 ? 30 : 6);
        clock_set(c, now_ms);
        char key[32];
        snprintf(key, sizeof key, "trace:%d", trace);
        /* the model's count of made ids starts where the server's is (every test before made some) */
        acq probe = acquire(c, "RL.ACQUIRE trace:probe 1 1");
        m.next_id = strtoull(probe.lease, NULL, 16) + 1;
        CHECK(probe.has_lease && m.next_id > 1);
        cmd_int(c, "DEL trace:probe");
        for (int step = 0; step < 150; step++, steps++) {
            if (rng() % 2) {
                now_ms += rng_range(0, 300);
                clock_set(c, now_ms);
            }
            if (trace % 4 == 1 && rng() % 15 == 0) limit = rng_range(1, 8); /* the limit changed on a live key */
            char id[8];
            snprintf(id, sizeof id, "c%d", (int)rng_range(0, 9));
            int op = (int)(rng() % 10);
            int64_t now_us = now_ms * 1000;
            if (op < 6) {
                int64_t cost = rng() % 6 == 0 ? rng_range(1, limit + 2) : 1 + (int64_t)(rng() % 2);
                int64_t lease_ms = rng_range(1, 1500);
                int named = rng() % 2;
                char want_id[MODEL_ID_MAX + 1];
                size_t want_len;
                rl_reply want = model_acquire(&m, limit, lease_ms, cost, named ? id : NULL, named ? strlen(id) : 0,
                                              now_us, want_id, &want_len);
                want_id[want_len] = '\0';
                acq got = named ? acquire(c, "RL.ACQUIRE %s %lld %lld COST %lld ID %s", key, (long long)limit,
                                          (long long)lease_ms, (long long)cost, id)
                                : acquire(c, "RL.ACQUIRE %s %lld %lld COST %lld", key, (long long)limit,
                                          (long long)lease_ms, (long long)cost);
                int ok = got.ok && got.f[0] == want.allowed && got.f[1] == want.limit && got.f[2] == want.remaining &&
                         got.f[3] == want.retry_after_ms && got.f[4] == want.reset_after_ms && got.f[5] == 0 &&
                         got.has_lease == (want.allowed == 1) && (!got.has_lease || strcmp(got.lease, want_id) == 0);
                admitted += want.allowed == 1;
                denied += want.allowed == 0;
                if (!ok && mismatches++ < 5)
                    fprintf(stderr, "     trace %d step %d: got %lld %lld %lld %lld %s, want %lld %lld %lld %lld %s\n", trace,
                            step, got.f[0], got.f[2], got.f[3], got.f[4], got.has_lease ? got.lease : "(nil)",
                            (long long)want.allowed, (long long)want.remaining, (long long)want.retry_after_ms,
                            (long long)want.reset_after_ms, want_len ? want_id : "(nil)");
            } else if (op < 8) {
                mismatches += cmd_int(c, "RL.RELEASE %s %s", key, id) != model_release(&m, id, strlen(id), now_us);
            } else {
                int64_t lease_ms = rng_range(1, 2000);
                mismatches += cmd_int(c, "RL.RENEW %s %s %lld", key, id, (long long)lease_ms) !=
                              model_renew(&m, id, strlen(id), lease_ms, now_us);
            }
            char got[2048], want[2048];
            leases_text(c, key, got, sizeof got);
            model_list(&m, now_us, want, sizeof want);
            if (strcmp(got, want) != 0 && mismatches++ < 5)
                fprintf(stderr, "     trace %d step %d: RL.LEASES %s, the model %s\n", trace, step, got, want);
        }
        cmd_int(c, "DEL %s", key);
    }
    CHECK_EQ(mismatches, 0);
    CHECK(steps == 12 * 150 && admitted > 200 && denied > 100);
}

/* --- bad input ----------------------------------------------------------------------------------------- */

static void test_bad_input(void) {
    clock_set(c, T0);
    acquire(c, "RL.ACQUIRE bad 2 1000 ID keep");
    size_t before_len;
    char *before = dump_key(c, "bad", &before_len);
    static const struct {
        const char *line, *error;
    } rows[] = {
        {"RL.ACQUIRE bad 0 1000", "ERR limit: must be an integer between 1 and 10000"},
        {"RL.ACQUIRE bad 10001 1000", "ERR limit: must be an integer between 1 and 10000"},
        {"RL.ACQUIRE bad 2 0", "ERR lease_ms: must be an integer between 1 and 1000000000000"},
        {"RL.ACQUIRE bad 2 x", "ERR lease_ms: must be an integer between 1 and 1000000000000"},
        {"RL.ACQUIRE bad 2 1000 COST 0", "ERR COST: must be an integer between 1 and 10000"},
        {"RL.ACQUIRE bad 2 1000 COST 10001", "ERR COST: must be an integer between 1 and 10000"},
        {"RL.ACQUIRE bad 2 1000 ID", "ERR ID: needs a value"},
        {"RL.ACQUIRE bad 2 1000 ID a ID b", "ERR ID: given more than once"},
        {"RL.ACQUIRE bad 2 1000 ID 01234567890123456789012345678901234567890123456789012345678901234",
         "ERR ID: must be 1 to 64 bytes"},
        {"RL.ACQUIRE bad 2 1000 WAIT 0", "ERR WAIT: must be an integer between 1 and 1000000000000"},
        {"RL.ACQUIRE bad 2 1000 REFUND 1", "ERR 'REFUND': not an option of rl.acquire"},
        {"RL.ACQUIRE bad 2 1000 ATMOST", "ERR 'ATMOST': not an option of rl.acquire"},
        {"RL.ACQUIRE_RO bad 2 1000 DRYRUN", "ERR 'DRYRUN': not an option of rl.acquire_ro"},
        {"RL.ACQUIRE_RO bad 2 1000 WAIT 5", "ERR 'WAIT': not an option of rl.acquire_ro"},
        {"RL.ACQUIRE bad 2", "ERR wrong number of arguments for 'rl.acquire' command"},
        {"RL.RELEASE bad", "ERR wrong number of arguments for 'rl.release' command"},
        {"RL.RELEASE bad a b", "ERR wrong number of arguments for 'rl.release' command"},
        {"RL.RELEASE bad 01234567890123456789012345678901234567890123456789012345678901234",
         "ERR lease_id: must be 1 to 64 bytes"},
        {"RL.RENEW bad keep", "ERR wrong number of arguments for 'rl.renew' command"},
        {"RL.RENEW bad keep 0", "ERR lease_ms: must be an integer between 1 and 1000000000000"},
        {"RL.RENEW bad keep -5", "ERR lease_ms: must be an integer between 1 and 1000000000000"},
        {"RL.RENEW bad keep 1000000000001", "ERR lease_ms: must be an integer between 1 and 1000000000000"},
        {"RL.LEASES bad x", "ERR wrong number of arguments for 'rl.leases' command"},
        {"RL.ALL 1 bad LIMIT CONCURRENCY 2", "ERR LIMIT 1: CONCURRENCY needs 2 numbers"},
        {"RL.ALL 1 bad LIMIT CONCURRENCY 2 1000 WAIT 5", "ERR LIMIT 1: 'WAIT' is not an option of CONCURRENCY"},
        {"RL.ALL 1 bad REFUND 1 LIMIT CONCURRENCY 2 1000",
         "ERR LIMIT 1: REFUND: CONCURRENCY gives nothing back (rl.acquire has no REFUND)"},
        {"RL.ALL 1 bad LIMIT CONCURRENCY 2 1000 ID", "ERR LIMIT 1: ID: needs a value"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) CHECK(line_is(c, rows[i].error, rows[i].line));
    /* an empty id (cmdline cannot send one) */
    const char *argv[] = {"RL.RELEASE", "bad", ""};
    size_t lens[] = {10, 3, 0};
    redisReply *r = cmdargv(c, 3, argv, lens);
    CHECK(r->type == REDIS_REPLY_ERROR && strcmp(r->str, "ERR lease_id: must be 1 to 64 bytes") == 0);
    freeReplyObject(r);
    const char *argv2[] = {"RL.ACQUIRE", "bad", "2", "1000", "ID", ""};
    size_t lens2[] = {10, 3, 1, 4, 2, 0};
    r = cmdargv(c, 6, argv2, lens2);
    CHECK(r->type == REDIS_REPLY_ERROR && strcmp(r->str, "ERR ID: must be 1 to 64 bytes") == 0);
    freeReplyObject(r);
    size_t after_len;
    char *after = dump_key(c, "bad", &after_len);
    CHECK(before && after && before_len == after_len && memcmp(before, after, before_len) == 0);
    free(before);
    free(after);
    /* another type's key: WRONGTYPE from every command, and it stays */
    cmd_int(c, "RPUSH list a");
    acquire(c, "RL.TOKEN tok 5 1 1000");
    static const char *const wrong[] = {"RL.ACQUIRE list 2 1000", "RL.ACQUIRE_RO list 2 1000", "RL.RELEASE list a",
                                        "RL.RENEW list a 10", "RL.LEASES list", "RL.RELEASE tok a",
                                        "RL.ACQUIRE tok 2 1000", "RL.TOKEN bad 5 1 1000"};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++)
        CHECK(line_is(c, "WRONGTYPE Operation against a key holding the wrong kind of value", wrong[i]));
    CHECK_EQ(cmd_int(c, "LLEN list"), 1);
    cmd_int(c, "DEL list tok bad");
}

/* --- waiting -------------------------------------------------------------------------------------------- */

static acq read_on_own(redisContext *w, int timeout_ms) {
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    redisSetTimeout(w, tv);
    redisReply *r = NULL;
    acq a = {0};
    if (redisGetReply(w, (void **)&r) == REDIS_OK) a = acq_of(r);
    else snprintf(a.error, sizeof a.error, "no reply");
    if (r) freeReplyObject(r);
    return a;
}


static void test_wait(void) {
    clock_set(c, T0); /* frozen: only a release or a call can admit */
    acquire(c, "RL.ACQUIRE w 2 60000 ID a");
    acquire(c, "RL.ACQUIRE w 2 60000 ID b");
    redisContext *w[3];
    const char *ids[3] = {"w1", "w2", "w3"};
    for (int i = 0; i < 3; i++) {
        char line[128];
        snprintf(line, sizeof line, "RL.ACQUIRE w 2 60000 ID %s WAIT 20000", ids[i]);
        w[i] = send_alone(srv, line);
        CHECK(wait_for_waiting(c, i + 1)); /* in this order */
    }
    /* the expiry-based retry (60 s) is beyond the timeout, yet they wait: a release may come first */
    CHECK_EQ(cmd_int(c, "RL.RELEASE w a"), 1);
    acq a = read_on_own(w[0], 5000);
    CHECK(acq_is(&a, 1, 2, 0, -1, 60000));
    CHECK_STR(a.lease, "w1");
    CHECK(wait_for_waiting(c, 2));
    /* a fresh call does not pass the waiters */
    a = acquire(c, "RL.ACQUIRE w 2 60000");
    CHECK(a.ok && a.f[0] == 0);
    CHECK_EQ(cmd_int(c, "RL.RELEASE w b"), 1);
    a = read_on_own(w[1], 5000);
    CHECK_STR(a.lease, "w2");
    CHECK_EQ(cmd_int(c, "RL.RELEASE w w1"), 1);
    a = read_on_own(w[2], 5000);
    CHECK_STR(a.lease, "w3");
    CHECK(wait_for_waiting(c, 0));
    CHECK_LEASES(c, "w", "w2:1:60000 w3:1:60000");
    for (int i = 0; i < 3; i++) redisFree(w[i]);
    /* expiry admits too: the clock moves past the leases' end */
    redisContext *x = send_alone(srv, "RL.ACQUIRE w 2 1000 ID late WAIT 20000");
    CHECK(wait_for_waiting(c, 1));
    clock_set(c, T0 + 60000);
    a = read_on_own(x, 5000);
    CHECK(acq_is(&a, 1, 2, 1, -1, 1000));
    redisFree(x);
    /* a request that can never fit is answered at once; one that cannot fit before its timeout is denied
     * at the timeout with a fresh call's answer */
    a = acquire(c, "RL.ACQUIRE w 2 1000 COST 3 WAIT 20000");
    CHECK(acq_is(&a, 0, 2, 1, -1, 1000));
    acquire(c, "RL.ACQUIRE w 2 1000 ID fill");
    x = send_alone(srv, "RL.ACQUIRE w 2 1000 WAIT 200");
    a = read_on_own(x, 5000);
    CHECK(acq_is(&a, 0, 2, 0, 1000, 1000));
    redisFree(x);
    /* RL.RESET forgets the key: its waiter is admitted */
    x = send_alone(srv, "RL.ACQUIRE w 2 1000 ID after-reset WAIT 20000");
    CHECK(wait_for_waiting(c, 1));
    CHECK_EQ(cmd_int(c, "RL.RESET w"), 1);
    a = read_on_own(x, 5000);
    CHECK(acq_is(&a, 1, 2, 1, -1, 1000));
    redisFree(x);
    CHECK_LEASES(c, "w", "after-reset:1:1000");
    cmd_int(c, "DEL w");
}

/* --- RL.ALL ------------------------------------------------------------------------------------------------ */

static void test_all(void) {
    clock_set(c, T0);
    redisReply *r = cmdline(c, "RL.ALL 2 {u}:rate {u}:conc LIMIT TOKEN 10 1 1000 LIMIT CONCURRENCY 1 5000 ID q1");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 5 && r->element[0]->integer == 1);
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 5) {
        CHECK_EQ(r->element[3]->elements, 6); /* the token bucket's six fields */
        acq a = acq_of(r->element[4]);
        CHECK(acq_is(&a, 1, 1, 0, -1, 5000));
        CHECK_STR(a.lease, "q1");
    }
    freeReplyObject(r);
    /* denied by the concurrency limit: nothing is written, the token bucket keeps its 9 */
    r = cmdline(c, "RL.ALL 2 {u}:rate {u}:conc LIMIT TOKEN 10 1 1000 LIMIT CONCURRENCY 1 5000");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 5 && r->element[0]->integer == 0);
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 5) {
        CHECK_EQ(r->element[1]->integer, 5000); /* the call's retry: the lease's end */
        acq a = acq_of(r->element[4]);
        CHECK(acq_is(&a, 0, 1, 0, 5000, 5000));
        CHECK_EQ(r->element[3]->element[2]->integer, 9);
    }
    freeReplyObject(r);
    CHECK_LEASES(c, "{u}:conc", "q1:1:5000");
    /* RL.ALL_RO looks */
    r = cmdline(c, "RL.ALL_RO 1 {u}:conc LIMIT CONCURRENCY 2 5000");
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 4 && r->element[0]->integer == 1);
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 4) {
        acq a = acq_of(r->element[3]);
        CHECK(a.ok && a.f[2] == 0 && !a.has_lease);
    }
    freeReplyObject(r);
    CHECK_LEASES(c, "{u}:conc", "q1:1:5000");
    cmd_int(c, "DEL {u}:rate {u}:conc");
}

/* --- events, WATCH, INFO ---------------------------------------------------------------------------------- */

static void test_events(void) {
    clock_set(c, T0);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET notify-keyspace-events Ed"));
    redisContext *sub = event_subscriber(srv);
    char ev[256];
    acquire(c, "RL.ACQUIRE ev 1 1000 ID e");
    next_event(sub, ev, sizeof ev);
    CHECK_STR(ev, "__keyevent@0__:rl.acquire ev");
    acquire(c, "RL.ACQUIRE ev 1 1000"); /* denied: no event */
    cmd_int(c, "RL.RENEW ev e 2000");
    next_event(sub, ev, sizeof ev);
    CHECK_STR(ev, "__keyevent@0__:rl.renew ev");
    cmd_int(c, "RL.RELEASE ev e");
    next_event(sub, ev, sizeof ev);
    CHECK_STR(ev, "__keyevent@0__:rl.release ev");
    cmd_int(c, "RL.RELEASE ev e"); /* nothing to release: no event */
    next_event(sub, ev, sizeof ev);
    CHECK_STR(ev, "");
    redisFree(sub);
    redisReply *off = cmd(c, "CONFIG SET notify-keyspace-events %s", "");
    CHECK(reply_is_status(off, "OK"));
    freeReplyObject(off);
    acquire(c, "RL.ACQUIRE wt 1 1000");
    CHECK(watch_survives(srv, c, "wt", "RL.ACQUIRE wt 1 1000"));      /* a denial writes nothing */
    CHECK(!watch_survives(srv, c, "wt", "RL.ACQUIRE wt 2 1000"));     /* an admission does */
    CHECK(watch_survives(srv, c, "wt", "RL.RELEASE wt nobody"));
    cmd_int(c, "DEL wt");
    long long calls = info_field(c, "ratelimit", "ratelimit_acquire_calls");
    long long released = info_field(c, "ratelimit", "ratelimit_release_released");
    long long missing = info_field(c, "ratelimit", "ratelimit_release_missing");
    acquire(c, "RL.ACQUIRE inf 1 1000 ID i");
    cmd_int(c, "RL.RELEASE inf i");
    cmd_int(c, "RL.RELEASE inf i");
    CHECK_EQ(info_field(c, "ratelimit", "ratelimit_acquire_calls"), calls + 1);
    CHECK_EQ(info_field(c, "ratelimit", "ratelimit_release_released"), released + 1);
    CHECK_EQ(info_field(c, "ratelimit", "ratelimit_release_missing"), missing + 1);
    CHECK(info_field(c, "ratelimit", "ratelimit_renew_renewed") >= 1);
}

/* --- effects: replica, AOF, RDB, DUMP/RESTORE, COPY, RL.SETSTATE ---------------------------------------------- */

/* Leases of three ages on key, one of them released and one renewed. */
static void make_history(redisContext *ctx, const char *key) {
    clock_set(ctx, T0);
    acquire(ctx, "RL.ACQUIRE %s 10 3000", key);
    acquire(ctx, "RL.ACQUIRE %s 10 5000 COST 3 ID big", key);
    clock_set(ctx, T0 + 100);
    acquire(ctx, "RL.ACQUIRE %s 10 1000 ID short", key);
    acquire(ctx, "RL.ACQUIRE %s 10 9000 ID gone", key);
    cmd_int(ctx, "RL.RELEASE %s gone", key);
    cmd_int(ctx, "RL.RENEW %s short 7000", key);
}

static void test_effects(void) {
    server *p = server_start(server_aof_always);
    redisContext *pc = server_connect(p);
    server *rep = replica_start(p);
    redisContext *rc = server_connect(rep);
    make_history(pc, "h");
    CHECK(cmd_int(pc, "WAIT 1 5000") == 1);
    CHECK(same_dump(pc, rc, "h"));
    char want[512];
    leases_text(pc, "h", want, sizeof want);
    CHECK_STR(want, "1:1:2900 big:3:4900 short:1:7000");
    /* the replica's clock is not frozen: it lists and looks by its own time, but holds the same leases */
    clock_set(rc, T0 + 100);
    CHECK_LEASES(rc, "h", want);
    acq a = acquire(rc, "RL.ACQUIRE_RO h 10 1000");
    CHECK(a.ok && a.f[0] == 1 && a.f[2] == 4 && !a.has_lease);
    CHECK(line_is(rc, "READONLY You can't write against a read only replica.", "RL.RELEASE h big"));
    /* expiry on the primary (a write after the first lease ended drops it) reaches the replica */
    clock_set(pc, T0 + 3500);
    acquire(pc, "RL.ACQUIRE h 10 1000 ID late");
    CHECK(cmd_int(pc, "WAIT 1 5000") == 1);
    CHECK(same_dump(pc, rc, "h"));
    /* the AOF replayed after kill -9, then after a rewrite */
    size_t len;
    char *before = dump_key(pc, "h", &len);
    pc = server_kill9_restart(p, pc);
    size_t len2;
    char *after = dump_key(pc, "h", &len2);
    CHECK(before && after && len == len2 && memcmp(before, after, len) == 0);
    free(after);
    CHECK(cmd_status_is(pc, "Background append only file rewriting started", "BGREWRITEAOF"));
    CHECK(aof_rewrite_wait(pc));
    pc = server_kill9_restart(p, pc);
    after = dump_key(pc, "h", &len2);
    CHECK(before && after && len == len2 && memcmp(before, after, len) == 0);
    free(after);
    long long pttl = cmd_int(pc, "PTTL h");
    CHECK(pttl > 0);
    /* RDB: DEBUG RELOAD keeps the leases */
    CHECK(cmd_status_is(pc, "OK", "DEBUG RELOAD"));
    after = dump_key(pc, "h", &len2);
    CHECK(before && after && len == len2 && memcmp(before, after, len) == 0);
    free(after);
    /* DUMP/RESTORE and COPY: the same leases under another name */
    redisReply *r = cmd(pc, "RESTORE h2 0 %b", before, len);
    CHECK(reply_is_status(r, "OK"));
    freeReplyObject(r);
    CHECK_EQ(cmd_int(pc, "COPY h h3"), 1);
    clock_set(pc, T0 + 3500);
    leases_text(pc, "h", want, sizeof want);
    CHECK_LEASES(pc, "h2", want);
    CHECK_LEASES(pc, "h3", want);
    CHECK_EQ(cmd_int(pc, "RL.RELEASE h3 big"), 1); /* a copy is its own */
    CHECK_LEASES(pc, "h", want);
    free(before);
    /* RL.SETSTATE refuses crafted blobs and changes nothing */
    static const char *const blobs[] = {"C", "Cxxxxxxxxxxxxxxxxxxxx", "C\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00"};
    for (size_t i = 0; i < sizeof blobs / sizeof blobs[0]; i++) {
        r = cmd(pc, "RL.SETSTATE h %b", blobs[i], strlen(blobs[i]));
        CHECK(r->type == REDIS_REPLY_ERROR && strcmp(r->str, "ERR state: not a valid state of this kind") == 0);
        freeReplyObject(r);
    }
    /* a well-formed blob holding no lease: a key without leases is no key (its effect is DEL) */
    char empty[21] = {'C'};
    r = cmd(pc, "RL.SETSTATE h %b", empty, sizeof empty);
    CHECK(r->type == REDIS_REPLY_ERROR && strcmp(r->str, "ERR state: not a valid state of this kind") == 0);
    freeReplyObject(r);
    CHECK_LEASES(pc, "h", want);
    redisFree(rc);
    server_stop(rep);
    redisFree(pc);
    server_stop(p);
}

int main(void) {
    srv = server_start(NULL);
    c = server_connect(srv);
    test_replies();
    test_traces();
    test_bad_input();
    test_wait();
    test_all();
    test_events();
    redisFree(c);
    server_stop(srv);
    test_effects();
    return check_summary("integration_concurrency");
}
