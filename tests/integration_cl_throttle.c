/* integration_cl_throttle.c -- CL.THROTTLE against real redis-servers, under the test clock:
 *
 *   - redis-cell's own case table (its it_rate_limits test: limit 5, 1 per second, volumes 0 to 6, times
 *     0 to 9.5 s), reply for reply, and the TAT it leaves;
 *   - pseudo-random traces on several keys against a reference written here from redis-cell's rules
 *     (nanosecond GCRA, its f64 steps and its rounding to seconds): every reply field, the stored TAT,
 *     and the key's expiry;
 *   - redis-cell's keys: a TAT written as redis-cell writes it is carried on, ours reads back as it
 *     expects; values that are no TAT get an error and the server stays up;
 *   - arguments: arity, integers as Rust reads them, zero rates, negatives, overflow;
 *   - effects: replicas and an AOF reload store the primary's TAT whatever their clocks; a denied request
 *     or a peek propagates nothing, signals nothing, fires no event;
 *   - the command: COMMAND INFO and DOCS, the wall clock, `no-cl-throttle`, and a name already taken (a
 *     stand-in for redis-cell loaded first: ours loads without it, with a warning);
 *   - the way on to RL.LEAKY NODELAY: the script of docs/migrating-from-redis-cell.md, read from the doc,
 *     copies a TAT into a leaky bucket that then answers as CL.THROTTLE does. */
#define _GNU_SOURCE /* realpath */
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "check.h"
#include "effect_checks.h"
#include "rng.h"
#include "server.h"
#include "suite.h"

static server *srv;
static redisContext *c;

#define T0 1700000000000LL /* a frozen test-clock instant (ms) */
#define MS 1000000LL
#define SEC 1000000000LL

/* A CL.THROTTLE reply: the five integers, or ok = 0 and the error text. */
typedef struct cl_result {
    int ok;
    long long f[5]; /* limited, limit, remaining, retry_after, reset_after */
    char error[256];
} cl_result;

static cl_result cl_of(const redisReply *r) {
    cl_result out = {0};
    if (r->type == REDIS_REPLY_ERROR || r->type == REDIS_REPLY_STATUS) {
        snprintf(out.error, sizeof out.error, "%s", r->str);
        return out;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 5) return out;
    for (int i = 0; i < 5; i++) {
        if (r->element[i]->type != REDIS_REPLY_INTEGER) return out;
        out.f[i] = r->element[i]->integer;
    }
    out.ok = 1;
    return out;
}

static cl_result cl(redisContext *ctx, const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    redisReply *r = cmdline(ctx, "%s", line);
    cl_result out = cl_of(r);
    freeReplyObject(r);
    return out;
}

#define CHECK_CL(r, limited, limit, remaining, retry, reset)                                              \
    do {                                                                                                  \
        cl_result got_ = (r);                                                                             \
        long long want_[5] = {limited, limit, remaining, retry, reset};                                   \
        if (!CHECK(got_.ok && memcmp(got_.f, want_, sizeof want_) == 0))                                  \
            fprintf(stderr, "     got %lld %lld %lld %lld %lld (%s), expected %lld %lld %lld %lld %lld\n", \
                    got_.f[0], got_.f[1], got_.f[2], got_.f[3], got_.f[4], got_.error, want_[0], want_[1],   \
                    want_[2], want_[3], want_[4]);                                                        \
    } while (0)

/* The error of a command line, "" if it did not fail. */
static void error_of(const char *line, char *out, size_t n) {
    redisReply *r = cmdline(c, "%s", line);
    snprintf(out, n, "%s", r->type == REDIS_REPLY_ERROR ? r->str : "");
    freeReplyObject(r);
}

static void check_error(const char *line, const char *want) {
    char got[256];
    error_of(line, got, sizeof got);
    if (!CHECK(strcmp(got, want) == 0)) fprintf(stderr, "     %s\n     got \"%s\"\n     expected \"%s\"\n", line, got, want);
}

/* The key's value as an integer, -1 if there is no key. */
static long long get_tat(redisContext *ctx, const char *key) {
    redisReply *r = cmd(ctx, "GET %s", key);
    long long v = r->type == REDIS_REPLY_STRING ? strtoll(r->str, NULL, 10) : -1;
    freeReplyObject(r);
    return v;
}

static void del(const char *key) { freeReplyObject(cmd(c, "DEL %s", key)); }

static long long real_ms(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* --- the reference: redis-cell's rules, written again ---------------------------------------------- */

/* Rust's `as i64` of an f64: truncation, saturating, NaN 0. */
static long long ref_as_i64(double x) {
    if (x != x) return 0;
    if (x >= 9223372036854775808.0) return LLONG_MAX;
    if (x <= -9223372036854775808.0) return LLONG_MIN;
    return (long long)x;
}

/* A duration >= 0 as CL.THROTTLE replies it: as_seconds_f64 truncated, +1 for a partial millisecond. */
static long long ref_seconds(long long d) {
    long long secs = d / SEC, nanos = d % SEC;
    return ref_as_i64((double)secs + (double)nanos / 1e9) + (nanos / MS > 0);
}

typedef struct ref_key {
    int has;
    long long tat;
} ref_key;

/* One call; returns 0 and the reply, or -1 where the command must fail (zero rates). The times stay far
 * below 2^63 ns with the parameters the traces use. */
static int ref_throttle(ref_key *k, long long max_burst, long long count, long long period, long long q, long long now,
                        long long f[5]) {
    if (count == 0 || period == 0) return -1;
    long long interval = ref_as_i64((double)(period * SEC) / (double)count);
    if (interval == 0) return -1;
    long long tolerance = interval * (max_burst + 1);
    long long tat = k->has && k->tat > now ? k->tat : now; /* a TAT at or before now: the key expired */
    long long increment = interval * q;
    long long new_tat = (now > tat ? now : tat) + increment;
    long long diff = now - (new_tat - tolerance);
    long long ttl, retry = -1;
    f[0] = diff < 0;
    if (diff < 0) {
        if (increment <= tolerance) retry = -diff;
        ttl = tat - now;
    } else {
        ttl = new_tat - now;
        if (q > 0) *k = (ref_key){1, new_tat};
    }
    long long next = tolerance - ttl;
    f[1] = max_burst + 1;
    f[2] = next > -interval ? ref_as_i64((double)(next / 1000) / (double)(interval / 1000)) : 0;
    f[3] = retry < 0 ? -1 : ref_seconds(retry);
    f[4] = ref_seconds(ttl);
    return 0;
}

/* --- redis-cell's table ------------------------------------------------------------------------------ */

static void test_redis_cell_table(void) {
    static const struct {
        long long at_ms, volume, limited, remaining, retry_s, reset_s;
    } rows[] = {
        /* redis-cell's durations (reset_after, retry_after) in its whole seconds: 3.9 s is 4 */
        {0, 6, 1, 5, -1, 0},  {0, 1, 0, 4, -1, 1},    {0, 1, 0, 3, -1, 2},    {0, 1, 0, 2, -1, 3},
        {0, 1, 0, 1, -1, 4},  {0, 1, 0, 0, -1, 5},    {0, 1, 1, 0, 1, 5},     {3000, 1, 0, 2, -1, 3},
        {3100, 1, 0, 1, -1, 4}, {4000, 1, 0, 1, -1, 4}, {8000, 1, 0, 4, -1, 1}, {9500, 1, 0, 4, -1, 1},
        {9500, 0, 0, 4, -1, 1}, {9500, 2, 0, 2, -1, 3}, {9500, 5, 1, 2, 3, 3},
    };
    del("cell:foo");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0 + rows[i].at_ms));
        CHECK_CL(cl(c, "CL.THROTTLE cell:foo 4 1 1 %lld", rows[i].volume), rows[i].limited, 5, rows[i].remaining,
                 rows[i].retry_s, rows[i].reset_s);
    }
    CHECK_EQ(get_tat(c, "cell:foo"), (T0 + 12500) * MS); /* 9.5 s, plus 3 s of TAT ahead */
    /* The quantity defaults to 1; the first case alone does not create the key. */
    del("cell:foo");
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    CHECK_CL(cl(c, "CL.THROTTLE cell:foo 4 1 1 6"), 1, 5, 5, -1, 0);
    CHECK_EQ(cmd_int(c, "EXISTS cell:foo"), 0);
    CHECK_CL(cl(c, "CL.THROTTLE cell:foo 4 1 1"), 0, 5, 4, -1, 1);
    /* redis-cell's end-to-end test: burst 0, 1 per 2 s. */
    CHECK_CL(cl(c, "CL.THROTTLE user123 0 1 2 1"), 0, 1, 0, -1, 2);
    CHECK_CL(cl(c, "CL.THROTTLE user123 0 1 2 1"), 1, 1, 0, 2, 2);
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE 2000"));
    CHECK_CL(cl(c, "CL.THROTTLE user123 0 1 2 1"), 0, 1, 0, -1, 2);
    del("cell:foo");
    del("user123");
}

/* --- traces against the reference ------------------------------------------------------------------ */

typedef struct trace_key {
    char name[16];
    long long max_burst, count, period;
    ref_key ref;
} trace_key;

static void pick_params(trace_key *k) {
    switch (rng() % 4) {
    case 0: /* ordinary: a few per second to a few per hour */
    case 1:
        k->period = rng_range(1, 3600);
        k->count = rng_range(1, 2000);
        k->max_burst = rng_range(0, 30);
        break;
    case 2: /* fast: intervals of a few ns to a few µs, not whole µs */
        k->period = rng_range(1, 3);
        k->count = rng_range(100000, 1000000000);
        k->max_burst = rng_range(0, 5000);
        break;
    default: /* slow, or zero rates (an error) */
        k->period = rng() % 8 == 0 ? 0 : rng_range(1, 100000);
        k->count = rng() % 8 == 0 ? 3000000000LL : rng_range(1, 5);
        k->max_burst = rng_range(0, 3);
        break;
    }
}

/* PEXPIRETIME of a key written at clock_ms: its TAT rounded up to the ms, moved onto real time (under the
 * frozen clock: real now - clock now + an hour, within a second). */
static int expiry_ok(const char *key, long long tat_ns, long long clock_ms) {
    long long at = cmd_int(c, "PEXPIRETIME %s", key);
    long long tat_ms = (tat_ns + MS - 1) / MS;
    long long offset = at - tat_ms, want = real_ms() - clock_ms + 3600000;
    return offset > want - 1000 && offset <= want + 1000;
}

static void test_traces(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    long long clock_ms = T0;
    trace_key keys[8];
    for (int i = 0; i < 8; i++) {
        snprintf(keys[i].name, sizeof keys[i].name, "tr:%d", i);
        del(keys[i].name);
        pick_params(&keys[i]);
        keys[i].ref = (ref_key){0, 0};
    }
    int calls = 0, mismatches = 0, writes = 0, expiry_checked = 0;
    for (int step = 0; step < 4000 && mismatches < 5; step++) {
        trace_key *k = &keys[rng() % 8];
        if (rng() % 40 == 0) pick_params(k); /* a live key under new parameters, as redis-cell allows */
        long long interval_ms = k->count ? k->period * 1000 / k->count : 1;
        long long advance = rng() % 4 == 0 ? 0 : rng_range(0, 2 * interval_ms + 1);
        if (rng() % 50 == 0) advance = rng_range(0, (k->max_burst + 2) * (interval_ms + 1));
        long long q = rng() % 5 == 0 ? (long long)rng_range(0, 3) : (long long)rng_range(0, k->max_burst + 2);

        clock_ms += advance;
        cmdline_append(c, "RL.CLOCK ADVANCE %lld", advance);
        cmdline_append(c, "CL.THROTTLE %s %lld %lld %lld %lld", k->name, k->max_burst, k->count, k->period, q);
        cmdline_append(c, "GET %s", k->name);
        freeReplyObject(next_reply(c));
        redisReply *r = next_reply(c), *g = next_reply(c);
        cl_result got = cl_of(r);
        long long want[5];
        long long before = k->ref.has ? k->ref.tat : -1;
        int rc = ref_throttle(&k->ref, k->max_burst, k->count, k->period, q, clock_ms * MS, want);
        long long stored = g->type == REDIS_REPLY_STRING ? strtoll(g->str, NULL, 10) : -1;
        long long want_stored = k->ref.has ? k->ref.tat : -1;
        int same = rc == 0 ? got.ok && memcmp(got.f, want, sizeof want) == 0 && stored == want_stored
                           : !got.ok && strncmp(got.error, "ERR Zero rates are not supported", 32) == 0;
        calls++;
        if (!CHECK(same)) {
            mismatches++;
            fprintf(stderr, "     CL.THROTTLE %s %lld %lld %lld %lld at %lld ms: got %lld %lld %lld %lld %lld (%s) TAT %lld, "
                            "expected %lld %lld %lld %lld %lld TAT %lld\n",
                    k->name, k->max_burst, k->count, k->period, q, clock_ms, got.f[0], got.f[1], got.f[2], got.f[3],
                    got.f[4], got.error, stored, want[0], want[1], want[2], want[3], want[4], want_stored);
        }
        if (rc == 0 && want_stored != before) {
            writes++;
            if (step % 16 == 0) {
                expiry_checked++;
                if (!CHECK(expiry_ok(k->name, want_stored, clock_ms))) fprintf(stderr, "     expiry of %s\n", k->name);
            }
        }
        freeReplyObject(r);
        freeReplyObject(g);
    }
    CHECK(calls == 4000 && writes > 1000 && expiry_checked > 20);
    for (int i = 0; i < 8; i++) del(keys[i].name);
}

/* --- redis-cell's keys -------------------------------------------------------------------------------- */

static void test_redis_cell_keys(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    long long now = T0 * MS;
    /* A key as redis-cell leaves it: the TAT in decimal, a TTL until then. 3 of 5 used, 1 per second. */
    CHECK(cmd_status_is(c, "OK", "SET swap:k %lld PX 3000", now + 3 * SEC + 123456789));
    CHECK_CL(cl(c, "CL.THROTTLE swap:k 4 1 1"), 0, 5, 0, -1, 5); /* 4.123456789 s: 5 */
    CHECK_EQ(get_tat(c, "swap:k"), now + 4 * SEC + 123456789);
    CHECK_CL(cl(c, "CL.THROTTLE swap:k 4 1 1"), 1, 5, 0, 1, 5);  /* 0.123456789 s to wait */
    /* Integers as Rust's u64 parser reads them: a '+', leading zeros. */
    CHECK(cmd_status_is(c, "OK", "SET swap:plus +%lld", now + SEC));
    CHECK_CL(cl(c, "CL.THROTTLE swap:plus 1 1 1 0"), 0, 2, 1, -1, 1);
    CHECK(cmd_status_is(c, "OK", "SET swap:zeros 000%lld", now + SEC));
    CHECK_CL(cl(c, "CL.THROTTLE swap:zeros 1 1 1 0"), 0, 2, 1, -1, 1);
    /* A TAT already past counts as absent (redis-cell's key would have expired at it). */
    CHECK(cmd_status_is(c, "OK", "SET swap:old %lld", now - 1));
    CHECK_CL(cl(c, "CL.THROTTLE swap:old 4 1 1 0"), 0, 5, 5, -1, 0);
    CHECK_EQ(get_tat(c, "swap:old"), now - 1); /* a peek writes nothing */
    CHECK_CL(cl(c, "CL.THROTTLE swap:old 4 1 1"), 0, 5, 4, -1, 1);
    CHECK_EQ(get_tat(c, "swap:old"), now + SEC);
    /* What we write, redis-cell reads: a plain string of decimal digits, with a TTL. */
    redisReply *r = cmd(c, "TYPE swap:k");
    CHECK(r->type == REDIS_REPLY_STATUS && strcmp(r->str, "string") == 0);
    freeReplyObject(r);
    r = cmd(c, "GET swap:k");
    CHECK(r->type == REDIS_REPLY_STRING && r->len == 19 && strspn(r->str, "0123456789") == 19);
    freeReplyObject(r);
    CHECK(cmd_int(c, "PTTL swap:k") > 0);
    /* The largest TAT redis-cell can store is read; a denied call leaves it. */
    CHECK(cmd_status_is(c, "OK", "SET swap:max 18446744073709551615"));
    cl_result m = cl(c, "CL.THROTTLE swap:max 4 1 1");
    CHECK(m.ok && m.f[0] == 1 && m.f[3] > 16000000000LL);
    freeReplyObject(cmdline(c, "DEL swap:k swap:plus swap:zeros swap:old swap:max"));
}

/* Values that are not a TAT: an error, the value left alone, and the server up (redis-cell panics). */
static void test_bad_values(void) {
    static const char *const values[] = {"abc", "-1", "-0", "1.5", "18446744073709551616", " 12", "12 ", "+", "0x10"};
    const char *want = "ERR the key's value is not a CL.THROTTLE state (a TAT: whole nanoseconds since 1970, 0 to 2^64-1)";
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        freeReplyObject(cmd(c, "SET bad:v %s", values[i]));
        check_error("CL.THROTTLE bad:v 4 1 1", want);
        redisReply *r = cmd(c, "GET bad:v");
        CHECK(r->type == REDIS_REPLY_STRING && strcmp(r->str, values[i]) == 0);
        freeReplyObject(r);
    }
    freeReplyObject(cmd(c, "SET bad:v %s", ""));
    check_error("CL.THROTTLE bad:v 4 1 1", want);
    freeReplyObject(cmd(c, "SET bad:v %b", "1\0002", (size_t)3));
    check_error("CL.THROTTLE bad:v 4 1 1", want);
    freeReplyObject(cmd(c, "DEL bad:v"));
    freeReplyObject(cmd(c, "RPUSH bad:list 1"));
    check_error("CL.THROTTLE bad:list 4 1 1", "WRONGTYPE Operation against a key holding the wrong kind of value");
    freeReplyObject(cmd(c, "DEL bad:list"));
    freeReplyObject(cmd(c, "RL.TOKEN bad:rl 5 1 1000"));
    check_error("CL.THROTTLE bad:rl 4 1 1", "WRONGTYPE Operation against a key holding the wrong kind of value");
    freeReplyObject(cmd(c, "DEL bad:rl"));
    CHECK(cmd_status_is(c, "PONG", "PING"));
}

/* --- arguments ---------------------------------------------------------------------------------------- */

static void test_arguments(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    const char *arity = "ERR wrong number of arguments for 'cl.throttle' command";
    check_error("CL.THROTTLE a:k 1 1", arity);
    check_error("CL.THROTTLE a:k 1 1 1 1 1", arity);
    check_error("CL.THROTTLE a:k x 1 1", "ERR max_burst: couldn't parse as integer: 'x'");
    check_error("CL.THROTTLE a:k 1 1.5 1", "ERR count_per_period: couldn't parse as integer: '1.5'");
    check_error("CL.THROTTLE a:k 1 1 1e3", "ERR period: couldn't parse as integer: '1e3'");
    check_error("CL.THROTTLE a:k 1 1 1 9223372036854775808", "ERR quantity: couldn't parse as integer: '9223372036854775808'");
    check_error("CL.THROTTLE a:k 1 0 1", "ERR Zero rates are not supported (count_per_period and period must be at least 1)");
    check_error("CL.THROTTLE a:k 1 1 0", "ERR Zero rates are not supported (count_per_period and period must be at least 1)");
    check_error("CL.THROTTLE a:k 1 1000000001 1",
                "ERR Zero rates are not supported (count_per_period above period * 10^9: an emission interval under 1 ns)");
    check_error("CL.THROTTLE a:k -1 1 1", "ERR max_burst: must not be negative");
    check_error("CL.THROTTLE a:k 1 -1 1", "ERR count_per_period: must not be negative");
    check_error("CL.THROTTLE a:k 1 1 -1", "ERR period: must not be negative");
    check_error("CL.THROTTLE a:k 1 1 1 -1", "ERR quantity: must not be negative");
    check_error("CL.THROTTLE a:k 9223372036854775807 1 1",
                "ERR max_burst: (max_burst + 1) * period / count_per_period must stay below 2^63 ns (about 292 years)");
    check_error("CL.THROTTLE a:k 0 1 9223372037", "ERR period: period / count_per_period must stay below 2^63 ns (about 292 years)");
    CHECK_EQ(cmd_int(c, "EXISTS a:k"), 0);
    /* Integers as Rust's i64 parser reads them. */
    CHECK_CL(cl(c, "CL.THROTTLE a:k +4 001 +1 -0"), 0, 5, 5, -1, 0);
    CHECK_CL(cl(c, "CL.THROTTLE a:k 4 1 1 +2"), 0, 5, 3, -1, 2);
    del("a:k");
}

/* --- effects: replication, AOF, WATCH, events --------------------------------------------------------- */

static long long repl_offset(redisContext *ctx) { return info_field(ctx, "replication", "master_repl_offset"); }

static int replica_caught_up(redisContext *primary, redisContext *replica) {
    for (int i = 0; i < 500; i++) {
        if (info_field(replica, "replication", "slave_repl_offset") == repl_offset(primary)) return 1;
        sleep_ms(10);
    }
    return 0;
}

static void test_replication(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    server *rep = replica_start(srv);
    redisContext *r = server_connect(rep);
    CHECK(cmd_status_is(r, "OK", "RL.CLOCK SET %lld", T0 + 86400000)); /* a day ahead: it must not matter */
    freeReplyObject(cmd(r, "CONFIG RESETSTAT"));
    CHECK_CL(cl(c, "CL.THROTTLE rep:k 2 3 1 2"), 0, 3, 1, -1, 1);
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE 100"));
    CHECK_CL(cl(c, "CL.THROTTLE rep:k 2 3 1"), 0, 3, 0, -1, 1);
    CHECK(replica_caught_up(c, r));
    CHECK_EQ(get_tat(r, "rep:k"), get_tat(c, "rep:k"));
    CHECK_EQ(get_tat(r, "rep:k"), T0 * MS + 3 * 333333333LL);
    CHECK_EQ(cmd_int(r, "PEXPIRETIME rep:k"), cmd_int(c, "PEXPIRETIME rep:k"));
    /* The replica ran SET, never CL.THROTTLE. */
    redisReply *x = cmd(r, "INFO commandstats");
    CHECK(strstr(x->str, "cmdstat_set:calls=2,") != NULL && strstr(x->str, "cmdstat_cl.throttle") == NULL);
    freeReplyObject(x);
    /* Denied, a peek, an error: nothing propagates. */
    long long before = repl_offset(c);
    CHECK_CL(cl(c, "CL.THROTTLE rep:k 2 3 1"), 1, 3, 0, 1, 1);
    CHECK_CL(cl(c, "CL.THROTTLE rep:k 2 3 1 0"), 0, 3, 0, -1, 1);
    CHECK(!cl(c, "CL.THROTTLE rep:k 2 0 1").ok);
    CHECK_EQ(repl_offset(c), before);
    redisFree(r);
    server_stop(rep);
    del("rep:k");
}

/* An AOF replay stores the same TATs, though the clock has moved a day on. */
static void test_aof(void) {
    const char *const args[] = {"--appendonly", "yes", NULL};
    server *s = server_start(args);
    redisContext *a = server_connect(s);
    CHECK(cmd_status_is(a, "OK", "RL.CLOCK SET %lld", T0));
    for (int i = 0; i < 5; i++) freeReplyObject(cmd(a, "CL.THROTTLE aof:%d 9 7 3 %d", i % 2, i + 1));
    long long tat0 = get_tat(a, "aof:0"), tat1 = get_tat(a, "aof:1");
    CHECK(cmd_status_is(a, "OK", "RL.CLOCK ADVANCE 86400000"));
    CHECK(cmd_status_is(a, "OK", "DEBUG LOADAOF"));
    CHECK_EQ(get_tat(a, "aof:0"), tat0);
    CHECK_EQ(get_tat(a, "aof:1"), tat1);
    CHECK_EQ(tat0, T0 * MS + 9 * 428571428LL); /* 1 + 3 + 5 units of 3/7 s */
    redisFree(a);
    server_stop(s);
}



static void test_watch_and_events(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    del("ev:k");
    CHECK(!watch_survives(srv, c, "ev:k", "CL.THROTTLE ev:k 1 1 60 2")); /* takes both: a change */
    CHECK(watch_survives(srv, c, "ev:k", "CL.THROTTLE ev:k 1 1 60"));    /* denied */
    CHECK(watch_survives(srv, c, "ev:k", "CL.THROTTLE ev:k 1 1 60 0"));  /* a peek */
    CHECK(watch_survives(srv, c, "ev:k", "CL.THROTTLE ev:k 1 1 60 5"));  /* never fits */
    CHECK(watch_survives(srv, c, "ev:k", "CL.THROTTLE ev:k 1 0 60"));    /* an error */
    del("ev:k");
    del("watch:side");

    /* An event for the call that takes, none for the denied one and the peek. */
    static const char *const quiet[] = {"CL.THROTTLE ev:k 1 1 60", "CL.THROTTLE ev:k 1 1 60 0", NULL};
    check_events(srv, c, "Edg$", "CL.THROTTLE ev:k 1 1 60 2", "cl.throttle ev:k", quiet, "SET ev:marker 1",
                 "set ev:marker");
    freeReplyObject(cmd(c, "DEL ev:k ev:marker"));
}

/* --- the command ------------------------------------------------------------------------------------- */

static void test_command_info(void) {
    CHECK(command_info_is(c, "CL.THROTTLE", -5, "write fast"));
    redisReply *x = cmd(c, "COMMAND GETKEYSANDFLAGS CL.THROTTLE the:key 1 1 1");
    CHECK(x->type == REDIS_REPLY_ARRAY && x->elements == 1 && strcmp(x->element[0]->element[0]->str, "the:key") == 0 &&
          strcmp(x->element[0]->element[1]->element[0]->str, "RW") == 0);
    freeReplyObject(x);
    x = cmd(c, "COMMAND DOCS cl.throttle");
    const redisReply *doc = x->type == REDIS_REPLY_ARRAY && x->elements == 2 ? x->element[1] : NULL;
    const redisReply *args = map_get(doc, "arguments");
    static const char *const names[] = {"key", "max_burst", "count_per_period", "period", "quantity"};
    static const char *const types[] = {"key", "integer", "integer", "integer", "integer"};
    if (CHECK(args && args->type == REDIS_REPLY_ARRAY && args->elements == 5)) {
        for (size_t i = 0; i < 5; i++) {
            const redisReply *n = map_get(args->element[i], "name"), *t = map_get(args->element[i], "type");
            CHECK(n && strcmp(n->str, names[i]) == 0 && t && strcmp(t->str, types[i]) == 0);
            CHECK((map_get(args->element[i], "flags") != NULL) == (i == 4)); /* quantity: optional */
        }
    }
    const redisReply *summary = map_get(doc, "summary"), *complexity = map_get(doc, "complexity");
    CHECK(summary && strstr(summary->str, "redis-cell") != NULL);
    CHECK(complexity && strcmp(complexity->str, "O(1)") == 0);
    freeReplyObject(x);
}

/* On the wall clock: the TAT is now in ns, the key expires at it. */
static void test_wall_clock(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    del("wall:k");
    long long before = real_ms();
    CHECK_CL(cl(c, "CL.THROTTLE wall:k 0 10 1"), 0, 1, 0, -1, 1); /* 100 ms: rounds up to 1 s */
    long long tat = get_tat(c, "wall:k"), pttl = cmd_int(c, "PTTL wall:k");
    CHECK(tat >= (before + 100) * MS && tat <= (real_ms() + 101) * MS); /* real_ms truncates */
    CHECK((pttl > 0 && pttl <= 101) || pttl == -2); /* -2: a loaded machine let its 100 ms run out */
    for (int i = 0; i < 50 && cmd_int(c, "EXISTS wall:k") == 1; i++) sleep_ms(20);
    CHECK_EQ(cmd_int(c, "EXISTS wall:k"), 0);
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
}

/* Loaded with no-cl-throttle: no CL.THROTTLE, the rest as always. */
static void test_no_cl_throttle(void) {
    const char *const args[] = {"no-cl-throttle", NULL}; /* appended to the module's arguments */
    server *s = server_start(args);
    redisContext *x = server_connect(s);
    redisReply *r = cmd(x, "CL.THROTTLE k 1 1 1");
    CHECK(r->type == REDIS_REPLY_ERROR && strncmp(r->str, "ERR unknown command", 19) == 0);
    freeReplyObject(r);
    r = cmd(x, "RL.TOKEN k 5 1 1000");
    CHECK(r->type == REDIS_REPLY_ARRAY);
    freeReplyObject(r);
    redisFree(x);
    server_stop(s);
}

/* With a module that has CL.THROTTLE loaded first (a stand-in for redis-cell), ours loads without it,
 * saying so in the log. */
static void test_name_taken(void) {
    const char *own = getenv("RL_MODULE");
    char ours[PATH_MAX], fake[PATH_MAX];
    if (!CHECK(realpath(own ? own : "build/ratelimit.so", ours) && realpath("build/tests/fake_cell.so", fake))) return;
    char *saved = own ? strdup(own) : NULL;
    setenv("RL_MODULE", fake, 1); /* the harness loads this one first */
    const char *const args[] = {"--loadmodule", ours, "test-clock", NULL};
    server *s = server_start(args);
    if (saved) setenv("RL_MODULE", saved, 1); else unsetenv("RL_MODULE");
    free(saved);
    redisContext *x = server_connect(s);
    CHECK(cmd_status_is(x, "fake-cell", "CL.THROTTLE k 1 1 1"));
    redisReply *r = cmd(x, "RL.TOKEN k 5 1 1000");
    CHECK(r->type == REDIS_REPLY_ARRAY);
    freeReplyObject(r);
    char log[PATH_MAX + 16];
    snprintf(log, sizeof log, "%s/redis.log", s->dir);
    FILE *f = fopen(log, "r");
    char line[1024];
    int warned = 0;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "CL.THROTTLE is already a command (redis-cell loaded?): loading without ours")) warned = 1;
    if (f) fclose(f);
    CHECK(warned);
    redisFree(x);
    server_stop(s);
}

/* --- moving on to RL.LEAKY NODELAY ------------------------------------------------------------------ */

/* The EVAL script of docs/migrating-from-redis-cell.md, as the doc shows it (malloc'd), or NULL. */
static char *doc_script(void) {
    FILE *f = fopen("docs/migrating-from-redis-cell.md", "r");
    if (!f) return NULL;
    static char doc[32768];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = '\0';
    char *start = strstr(doc, "    EVAL \""), *end = start ? strstr(start, "\" 2 old:") : NULL;
    if (!end) return NULL;
    start += strlen("    EVAL \"");
    char *script = malloc((size_t)(end - start) + 1), *out = script;
    for (char *p = start; p < end; p++) *out++ = *p; /* newlines and indentation are fine in Lua */
    *out = '\0';
    return script;
}

static void test_move_to_leaky(void) {
    char *script = doc_script();
    if (!CHECK(script != NULL)) return;
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    freeReplyObject(cmd(c, "DEL mv:old mv:new"));
    CHECK_EQ(cmd_int(c, "EVAL %s 2 mv:old mv:new", script), 0); /* no TAT: nothing to copy */
    CHECK_CL(cl(c, "CL.THROTTLE mv:old 9 10 60 3"), 0, 10, 7, -1, 18); /* one per 6 s: 18 s ahead */
    CHECK_EQ(cmd_int(c, "EVAL %s 2 mv:old mv:new", script), 1);
    long long pttl = cmd_int(c, "PTTL mv:new");
    if (!CHECK(pttl > 17000 && pttl <= 18001)) fprintf(stderr, "     PTTL %lld\n", pttl);
    /* The same state on both sides: 7 more, then both deny, a few µs apart. */
    rl_result peek = rl(c, "RL.LEAKY mv:new 10 10 60000 NODELAY COST 0");
    CHECK(peek.ok && peek.allowed == 1 && peek.remaining == 7 && peek.reset_after_ms > 17000 && peek.reset_after_ms <= 18000);
    CHECK_CL(cl(c, "CL.THROTTLE mv:old 9 10 60 7"), 0, 10, 0, -1, 60);
    rl_result take = rl(c, "RL.LEAKY mv:new 10 10 60000 NODELAY COST 7");
    CHECK(take.ok && take.allowed == 1 && take.remaining == 0);
    cl_result denied = cl(c, "CL.THROTTLE mv:old 9 10 60");
    rl_result denied_leaky = rl(c, "RL.LEAKY mv:new 10 10 60000 NODELAY");
    CHECK(denied.ok && denied.f[0] == 1 && denied_leaky.ok && denied_leaky.allowed == 0);
    CHECK(denied.f[3] * 1000 >= denied_leaky.retry_after_ms && denied.f[3] * 1000 - denied_leaky.retry_after_ms < 1000);
    free(script);
    freeReplyObject(cmd(c, "DEL mv:old mv:new"));
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
}

int main(void) {
    static const suite_test tests[] = {test_redis_cell_table, test_traces, test_redis_cell_keys, test_bad_values,
        test_arguments, test_replication, test_aof, test_watch_and_events, test_command_info, test_wall_clock,
        test_move_to_leaky, test_no_cl_throttle, test_name_taken, NULL};
    return server_suite("integration_cl_throttle", &srv, &c, tests);
}
