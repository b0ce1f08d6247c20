/* integration_leaks.c -- the module in a redis-server under valgrind: after a workload that takes every
 * path of every command (errors, DRYRUN, BLOCK with clients that disconnect while held, sorted-set logs and
 * their refunds, concurrency leases and their waiters, RDB reload, COPY, RESTORE of good and corrupt
 * payloads, RL.SETSTATE), memcheck reports no leak and no memory error whose stack passes through the
 * module.
 *
 * Debian's Redis allocates with a shared libjemalloc; valgrind tracks it through --soname-synonyms, so the
 * module's RedisModule_Alloc blocks are seen too. A server with jemalloc linked in statically (upstream's
 * default build) hides nearly every allocation from valgrind: about 250 instead of 40,000+, and no leak
 * could ever be reported. So the test also requires the heap summary to show at least MIN_ALLOCS
 * allocations, and fails, saying why, when valgrind saw too little to judge (scripts/servers.sh builds
 * with MALLOC=libc for this). At SHUTDOWN NOSAVE Redis exits without freeing its keyspace: live limiters
 * are "still reachable", which is not a leak. A block nothing points to any more is "definitely lost":
 * that is what this test looks for. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clients.h"
#include "server.h"

#define T0 1700000000000LL
/* Allocations valgrind must see in the server for the run to mean anything. Seen: Debian's 7.0.15 (shared
 * jemalloc) 52,876; Redis 8.0.2 and Valkey 8.1.1 built with MALLOC=libc 45,180 and 43,848; Redis 8.0.2
 * with its bundled jemalloc 259. */
#define MIN_ALLOCS 10000

/* (Run from the repository's root, as make test does: the suppressions are Redis's own LZF reads.) */
static const char *const valgrind[] = {"valgrind", "--soname-synonyms=somalloc=libjemalloc.so*", "--leak-check=full",
                                       "--show-leak-kinds=definite,indirect", "--num-callers=30",
                                       "--suppressions=tests/valgrind-redis.supp", NULL};

static void run(redisContext *c, const char *line) { freeReplyObject(cmdline(c, line)); }

/* A lease key's replicated state, built by hand as module/lease_type.c lays it out: 'C', the count (4 bytes),
 * each lease (end µs 8, acquired µs 8, units 4, id length 1, id), the expiry ms (8); little-endian. */
typedef struct blob {
    unsigned char b[512];
    size_t n;
} blob;

static void put(blob *x, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) x->b[x->n++] = (unsigned char)(v >> (8 * i));
}

static void put_lease(blob *x, uint64_t end_us, uint64_t acquired_us, uint64_t units, const char *id) {
    put(x, end_us, 8);
    put(x, acquired_us, 8);
    put(x, units, 4);
    put(x, strlen(id), 1);
    for (const char *p = id; *p; p++) x->b[x->n++] = (unsigned char)*p;
}

/* RL.SETSTATE of lease blobs: valid ones (new key, replacing a key's leases, no expiry), then refused ones
 * (short, a count that lies, truncated, overlong, a field out of range, out of order) on a lease key. */
static void lease_states(redisContext *c) {
    const uint64_t now = 1700000100000ULL * 1000;
    blob x = {.n = 0};
    x.b[x.n++] = 'C';
    put(&x, 2, 4);
    put_lease(&x, now + 1000000, now, 2, "first");
    put_lease(&x, now + 5000000, now - 10, 1, "second");
    size_t leases_end = x.n;
    put(&x, 4102444800000ULL, 8);
    for (int i = 0; i < 2; i++) {
        redisReply *r = cmd(c, "RL.SETSTATE %s %b", i ? "ls1" : "lss", (const char *)x.b, x.n); /* new, then replacing */
        if (!CHECK(reply_is_status(r, "OK"))) fprintf(stderr, "     RL.SETSTATE %s: %s\n", i ? "ls1" : "lss", r->str ? r->str : "?");
        freeReplyObject(r);
    }
    run(c, "RL.ACQUIRE lss 4 1000 ID first");
    run(c, "RL.RELEASE lss second");
    blob y = x;
    y.n = leases_end;
    put(&y, 0, 8); /* no expiry */
    redisReply *r = cmd(c, "RL.SETSTATE lss %b", (const char *)y.b, y.n);
    CHECK(reply_is_status(r, "OK"));
    freeReplyObject(r);
    for (int k = 0; k < 7; k++) {
        blob bad = x;
        switch (k) {
        case 0: bad.n = 12; break;                  /* short */
        case 1: bad.b[1] = 3; break;                /* three leases said, two held */
        case 2: bad.b[1] = 1; break;                /* one said, two held */
        case 3: bad.n = leases_end - 2, put(&bad, 1, 8); break; /* the last id cut */
        case 4: bad.n = leases_end, put(&bad, 0, 1), put(&bad, 1, 8); break; /* a byte too many */
        case 5: bad.b[5 + 16] = 0; bad.b[5 + 17] = 0; break; /* the first lease holds no units */
        default: memset(bad.b + 5, 0xff, 8); break; /* it ends at -1, before the second: out of order */
        }
        r = cmd(c, "RL.SETSTATE lss %b", (const char *)bad.b, bad.n);
        CHECK(r->type == REDIS_REPLY_ERROR && strcmp(r->str, "ERR state: not a valid state of this kind") == 0);
        freeReplyObject(r);
    }
    r = cmd(c, "RL.SETSTATE str %b", (const char *)x.b, x.n); /* valid, on another type's key */
    CHECK(r->type == REDIS_REPLY_ERROR && strncmp(r->str, "WRONGTYPE", 9) == 0);
    freeReplyObject(r);
    run(c, "RL.LEASES lss");
    run(c, "COPY lss lsscopy");
    run(c, "DEBUG RELOAD");
    run(c, "RL.LEASES lsscopy");
}

/* A request sent on a connection of its own, not read, given 30 ms to reach the server (so that waiters
 * queue in the order they are sent). */
static redisContext *queued(const server *s, const char *line) {
    redisContext *w = send_alone(s, line);
    sleep_ms(30);
    return w;
}

/* Its reply: 1 when it is an RL.ACQUIRE reply (seven fields), or RL.ALL's of two limits (five), with allowed as
 * given. */
static int answered(redisContext *w, long long allowed) {
    struct timeval tv = {5, 0};
    redisSetTimeout(w, tv);
    redisReply *r = NULL;
    int ok = redisGetReply(w, (void **)&r) == REDIS_OK && r && r->type == REDIS_REPLY_ARRAY && (r->elements == 7 || r->elements == 5) &&
             r->element[0]->integer == allowed;
    if (r) freeReplyObject(r);
    return ok;
}

/* RL.ACQUIRE's waiters (the clock frozen): one timed out, one that disconnects, one admitted by a release,
 * one by the clock, one by RL.RESET, one by a renewal to a sooner end, an RL.ALL waiter with a CONCURRENCY
 * clause, and one unblocked by CLIENT UNBLOCK. */
static void lease_waiters(const server *s, redisContext *c) {
    run(c, "RL.CLOCK SET 1700000400000");
    run(c, "RL.ACQUIRE lw 1 1000 ID holder");
    redisContext *timed_out = queued(s, "RL.ACQUIRE lw 1 1000 WAIT 30");
    CHECK(answered(timed_out, 0));
    redisContext *by_release = queued(s, "RL.ACQUIRE lw 1 1000 ID w0 WAIT 60000");
    redisContext *gone = queued(s, "RL.ACQUIRE lw 1 1000 WAIT 60000");
    redisContext *by_clock = queued(s, "RL.ACQUIRE lw 1 1000 COST 1 WAIT 60000");
    run(c, "RL.ALL 1 {lw}l LIMIT CONCURRENCY 1 500 ID first");
    redisContext *all = queued(s, "RL.ALL 2 {lw}t {lw}l WAIT 60000 LIMIT TOKEN 5 1 1000 LIMIT CONCURRENCY 1 1000");
    redisFree(gone);
    sleep_ms(30);
    run(c, "RL.RELEASE lw holder");
    CHECK(answered(by_release, 1));
    run(c, "RL.CLOCK ADVANCE 1000"); /* w0 ends: the next is admitted; and {lw}l's lease too */
    CHECK(answered(by_clock, 1));
    CHECK(answered(all, 1));
    run(c, "RL.ACQUIRE lr 1 60000");
    redisContext *by_reset = queued(s, "RL.ACQUIRE lr 1 1000 WAIT 60000");
    run(c, "RL.RESET lr");
    CHECK(answered(by_reset, 1));
    run(c, "RL.ACQUIRE ln 1 60000 ID h");
    redisContext *by_renew = queued(s, "RL.ACQUIRE ln 1 1000 WAIT 60000");
    run(c, "RL.RENEW ln h 10");
    run(c, "RL.CLOCK ADVANCE 10");
    CHECK(answered(by_renew, 1));
    redisContext *unblocked = queued(s, "RL.ACQUIRE ln 1 1000 ID u WAIT 60000");
    redisReply *list = cmdline(c, "CLIENT LIST TYPE normal");
    for (char *line = list->str; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (strstr(line, " flags=b ")) freeReplyObject(cmdline(c, "CLIENT UNBLOCK %lld", atoll(strstr(line, "id=") + 3)));
        line = nl ? nl + 1 : NULL;
    }
    freeReplyObject(list);
    CHECK(answered(unblocked, 0));
    redisContext *all_w[] = {timed_out, by_release, by_clock, all, by_reset, by_renew, unblocked};
    for (size_t i = 0; i < sizeof all_w / sizeof all_w[0]; i++) redisFree(all_w[i]);
    CHECK_EQ(info_field(c, "ratelimit", "ratelimit_clients_waiting"), 0);
}

static void workload(server *s, redisContext *c) {
    run(c, "RL.CLOCK SET 1700000000000");
    static const char *const lines[] = {
        "RL.TOKEN t1 10 1 1000", "RL.TOKEN t1 10 1 1000 COST 20", "RL.TOKEN t2 5 2 1000 INTERVAL COST 3",
        "RL.TOKEN t2 5 2 1000 COST 1", "RL.TOKEN t3 5 1 1000 DRYRUN", "RL.LEAKY l1 3 1 1000",
        "RL.LEAKY l1 3 1 1000 NODELAY", "RL.LEAKY l1 3 1 1000 COST 9", "RL.WINDOW w1 5 1000",
        "RL.WINDOW w1 5 1000 FIXED COST 2", "RL.WINDOW w1 5 1000 SLIDING DRYRUN", "RL.SLIDINGLOG s1 3 1000",
        "RL.SLIDINGLOG s1 3 1000 COST 9", "RL.SLIDINGLOG s1 3 1000 MINGAP 10", "RL.SLIDINGLOG s2 100 1000 COST 150",
        "ZADD s3 1700000000000000 1700000000000000-0", "RL.SLIDINGLOG s3 3 1000 COST 2",
        /* errors: every parser exit and WRONGTYPE */
        "RL.TOKEN t1", "RL.TOKEN t1 x 1 1", "RL.TOKEN t1 1 1 1 COST", "RL.TOKEN t1 1 1 1 COST 1 COST 1",
        "RL.TOKEN t1 1 1 1 BOGUS", "RL.WINDOW w1 1 1 FIXED SLIDING", "RL.TOKEN t1 1000000000000 1 1000000000000",
        "SET str x", "RL.TOKEN str 1 1 1", "RL.SLIDINGLOG str 1 1", "RL.LEAKY t1 1 1 1",
        "RL.SETSTATE t9 TOKEN 1 2", "RL.SETSTATE t9 TOKEN 1 2 PXAT 9999999999999", "RL.SETSTATE t9 NOPE 1 2",
        "RL.SETSTATE t9 TOKEN 1 99999999999999999", "RL.SETSTATE str TOKEN 1 2",
        /* CL.THROTTLE: allowed, denied, a peek, never fits; its errors, bad stored values, WRONGTYPE */
        "CL.THROTTLE c1 4 1 1", "CL.THROTTLE c1 4 1 1 5", "CL.THROTTLE c1 4 1 1 0", "CL.THROTTLE c1 4 1 1 6",
        "CL.THROTTLE c1 x 1 1", "CL.THROTTLE c1 4 0 1", "CL.THROTTLE c1 -4 1 1", "CL.THROTTLE c1 4 1 1 1 1",
        "CL.THROTTLE str 4 1 1", "SET c2 +1700000000500000000", "CL.THROTTLE c2 4 1 1", "CL.THROTTLE t1 4 1 1",
        /* a value that moves between inline and allocated (module/cell_type.c), copied each way */
        "RL.SETSTATE v1 TOKEN 1700000002000000 1 PXAT 4102444800000", "COPY v1 v1heap",
        "RL.SETSTATE v1 TOKEN 1700000002000000 0 PXAT 4102444800000", "COPY v1 v1inline",
        "RL.SETSTATE v1 TOKEN 1700000002000000 3 PXAT 4102444800000", "RL.TOKEN v1 10 4 1000",
        "COPY t1 t1copy", "DEBUG RELOAD", "RL.CLOCK ADVANCE 500", "RL.TOKEN t1 10 1 1000",
        /* RL.ALL: admitted; denied (every limit released and prepared again to describe it); DRYRUN; an
         * error in a clause after others were parsed; WRONGTYPE after a limit was prepared; the _RO forms,
         * REFUND, ATMOST, INFO; RL.RESET, including its WRONGTYPE */
        "RL.ALL 3 {a}t {a}w {a}l LIMIT TOKEN 5 1 1000 LIMIT WINDOW 4 1000 LIMIT SLIDINGLOG 3 1000",
        "RL.ALL 3 {a}t {a}w {a}l COST 4 LIMIT TOKEN 5 1 1000 LIMIT WINDOW 4 1000 LIMIT SLIDINGLOG 3 1000",
        "RL.ALL 2 {a}t {a}w DRYRUN LIMIT TOKEN 5 1 1000 LIMIT WINDOW 4 1000",
        "RL.ALL 2 {a}t {a}w LIMIT TOKEN 5 1 1000 LIMIT WINDOW 0 1000", "RL.ALL 2 {a}t str LIMIT TOKEN 5 1 1000 LIMIT WINDOW 4 1000",
        "RL.TOKEN_RO t1 10 1 1000 COST 3", "RL.WINDOW w1 5 1000 COST 9 ATMOST", "RL.TOKEN t3 10 1 1000 COST 5",
        "RL.TOKEN t3 10 1 1000 REFUND 2", "RL.LEAKY l1 3 1 1000 REFUND 1", "INFO ratelimit", "RL.RESET {a}t {a}w {a}l",
        "RL.RESET t2 str",
        /* RL.SMOOTH: both forms, a rate change, MAXWAIT refused, its errors, six words through SETSTATE */
        "RL.SMOOTH g1 5", "RL.SMOOTH g1 5 COST 20", "RL.SMOOTH g1 2.5 MAXWAIT 10", "RL.SMOOTH g2 2 WARMUP 4000",
        "RL.SMOOTH g2 2 WARMUP 4000 COLDFACTOR 2.5 DRYRUN", "RL.SMOOTH_RO g1 5", "RL.SMOOTH g1 x",
        "RL.SMOOTH g1 5 COLDFACTOR 2", "RL.SMOOTH str 5", "RL.SETSTATE g3 SMOOTH 1 5000000 1000 0 0 0 PXAT 4102444800000",
        "RL.SETSTATE g3 SMOOTH 7 5000000 1000 0 0 0", "COPY g1 g1copy", "DEBUG RELOAD", "RL.SMOOTH g1copy 5",
        /* Concurrency leases: admitted, denied, a COST above the limit, an ID renewed, DRYRUN and the read-only
         * form; releases and renewals that find their lease and that do not; RL.LEASES sorting several, and
         * after some ended; a write that drops the ended ones; the last release deleting the key; errors and
         * WRONGTYPE from each command; RL.ALL with a CONCURRENCY clause admitted, denied, renewing, looking,
         * and failing after a limit was prepared; COPY, DEBUG RELOAD, RL.RESET of lease keys */
        "RL.CLOCK SET 1700000050000", "RL.ACQUIRE ls1 4 5000", "RL.ACQUIRE ls1 4 3000 COST 2 ID job",
        "RL.ACQUIRE ls1 4 1000 ID x", "RL.ACQUIRE ls1 4 1000", "RL.ACQUIRE ls1 4 1000 COST 9",
        "RL.ACQUIRE ls1 4 9000 COST 2 ID job", "RL.ACQUIRE ls1 4 1000 DRYRUN", "RL.ACQUIRE_RO ls1 4 1000 ID x",
        "RL.ACQUIRE_RO ls1 4 1000 COST 9", "RL.LEASES ls1", "RL.RENEW ls1 x 20000", "RL.RENEW ls1 nobody 5",
        "RL.RELEASE ls1 job", "RL.RELEASE ls1 job", "RL.LEASES ls1", "RL.CLOCK ADVANCE 6000", "RL.LEASES ls1",
        "RL.RELEASE ls1 nobody", "RL.ACQUIRE ls1 4 1000 COST 3", "RL.ACQUIRE ls2 1 1000 ID only", "RL.RELEASE ls2 only",
        "RL.RELEASE ls2 only", "RL.RENEW ls2 only 10", "RL.LEASES ls2", "RL.ACQUIRE ls1 0 1000", "RL.ACQUIRE ls1 4 1000 ID",
        "RL.ACQUIRE ls1 4 1000 COST 0", "RL.ACQUIRE ls1 4 1000 ID a ID b", "RL.ACQUIRE ls1 4 1000 REFUND 1",
        "RL.ACQUIRE ls1 4 1000 ID 01234567890123456789012345678901234567890123456789012345678901234",
        "RL.ACQUIRE_RO ls1 4 1000 WAIT 5", "RL.RELEASE ls1", "RL.RENEW ls1 x 0", "RL.RENEW ls1 x y", "RL.LEASES ls1 x",
        "RL.RELEASE ls1 01234567890123456789012345678901234567890123456789012345678901234", "RL.ACQUIRE str 4 1000",
        "RL.ACQUIRE_RO t1 4 1000", "RL.ACQUIRE str 4 1000 WAIT 100", "RL.RELEASE str x", "RL.RENEW t1 x 5",
        "RL.LEASES str", "RL.TOKEN ls1 10 1 1000",
        "RL.ALL 2 {ls}t {ls}l LIMIT TOKEN 5 1 1000 LIMIT CONCURRENCY 1 5000 ID q",
        "RL.ALL 2 {ls}t {ls}l LIMIT TOKEN 5 1 1000 LIMIT CONCURRENCY 1 5000",
        "RL.ALL 2 {ls}t {ls}l DRYRUN LIMIT TOKEN 5 1 1000 LIMIT CONCURRENCY 2 5000", "RL.ALL_RO 1 {ls}l LIMIT CONCURRENCY 2 5000",
        "RL.ALL 1 {ls}l LIMIT CONCURRENCY 1 8000 ID q", "RL.ALL 1 {ls}l COST 0 LIMIT CONCURRENCY 2 1000",
        "RL.ALL 2 {ls}t {ls}s LIMIT TOKEN 5 1 1000 LIMIT CONCURRENCY 1 5000", "SET {ls}s x",
        "RL.ALL 2 {ls}t {ls}s LIMIT TOKEN 5 1 1000 LIMIT CONCURRENCY 1 5000", "RL.ALL 1 {ls}l LIMIT CONCURRENCY 1 5000 ID",
        "RL.ALL 1 {ls}l REFUND 1 LIMIT CONCURRENCY 1 5000", "COPY ls1 ls1copy", "RL.RELEASE ls1copy x", "DEBUG RELOAD",
        "RL.LEASES ls1", "RL.LEASES ls1copy", "RL.RESET ls1 {ls}l", "RL.ACQUIRE ls1 4 1000", "INFO ratelimit",
        /* ids longer than a lease holds in itself (RL_LEASE_ID_INLINE): kept in allocations of their own, which
         * renewals move, copies duplicate, releases, expiry, deletion and reloads free */
        "RL.ACQUIRE ll 4 5000 ID a-long-lease-id-kept-outside-the-lease-0001",
        "RL.ACQUIRE ll 4 1000 ID a-long-lease-id-kept-outside-the-lease-0002",
        "RL.ACQUIRE ll 4 9000 ID 0123456789012345678901234567890123456789012345678901234567890123",
        "RL.RENEW ll a-long-lease-id-kept-outside-the-lease-0002 20000", "COPY ll llcopy", "RL.LEASES ll",
        "RL.RELEASE ll a-long-lease-id-kept-outside-the-lease-0001", "DEBUG RELOAD", "RL.LEASES llcopy",
        "RL.CLOCK ADVANCE 9500", "RL.ACQUIRE ll 4 1000 ID a-long-lease-id-kept-outside-the-lease-0003", "DEL llcopy",
        "RL.RESET ll",
        /* Policies (RL.POLICY, RL.CHECK): every kind in one key; admitted, denied (each limit described again),
         * DRYRUN and _RO; a lock started by a denial; a policy replaced (entries kept, dropped, started fresh) and
         * replaced while a call holds it; leases released and renewed on the key; its errors; RL.SETSTATE of a
         * good and a bad state; COPY, DEBUG RELOAD (the policies as aux data), RL.RESET, FLUSH */
        "RL.POLICY SET pk LIMIT t TOKEN 3 1 1000 LIMIT w WINDOW 5 1000 SUBWINDOWS 4 LIMIT s SLIDINGLOG 4 1000 "
        "LIMIT g SMOOTH 5 LIMIT q QUOTA 9 DAY LIMIT c CONCURRENCY 2 5000 LIMIT l LEAKY 3 1 1000 NODELAY LOCKOUT 500",
        "RL.CHECK pk p1", "RL.CHECK pk p1 COST 2", "RL.CHECK pk p1 COST 9", "RL.CHECK pk p1", "RL.CHECK pk p1 DRYRUN",
        "RL.CHECK_RO pk p1", "RL.CHECK_RO pk p3", "RL.CHECK pk p2 COST 0", "RL.LEASES p1", "RL.RELEASE p1 nobody",
        "RL.POLICY SET pk LIMIT t TOKEN 9 1 1000 LIMIT s WINDOW 5 1000 LIMIT c CONCURRENCY 3 5000 LIMIT new TOKEN 2 1 10",
        "RL.CHECK pk p1", "COPY p1 p1copy", "DEBUG RELOAD", "RL.POLICY LIST", "RL.CHECK pk p1copy", "RL.CHECK pk str",
        "RL.CHECK nosuch p1", "RL.CHECK pk p1 COST x", "RL.CHECK_RO pk p1 WAIT 5", "RL.POLICY SET bad LIMIT a TOKEN 0 1 1",
        "RL.POLICY SET other LIMIT a TOKEN 1 1 1000", "RL.CHECK other p1", "RL.POLICY GET pk", "RL.POLICY DEL other",
        "RL.SETSTATE pbad \x50\x01a\x01", "RL.CLOCK ADVANCE 6000", "RL.CHECK pk p1", "RL.RESET p1 p1copy",
        /* a sliding log gone idle while its lock record still counts strikes: the log the call made is freed */
        "RL.POLICY SET lk LIMIT s SLIDINGLOG 1 100 LOCKOUT 50 BACKOFF 2 FORGIVE 100000", "RL.CHECK lk q1",
        "RL.CHECK lk q1", "RL.CLOCK ADVANCE 300", "RL.CHECK lk q1 COST 0", "RL.CHECK lk q1", "RL.RESET q1",
        "RL.POLICY FLUSH",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) run(c, lines[i]);
    /* the lease and policy lines took their paths, not only their errors */
    static const char *const taken[] = {"acquire_admitted", "acquire_denied", "acquire_errors", "acquire_ro_admitted",
                                        "acquire_ro_denied", "release_released", "release_missing", "renew_renewed",
                                        "renew_missing", "release_errors", "renew_errors", "check_admitted",
                                        "check_denied", "check_errors", "check_ro_admitted", "check_ro_errors"};
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++) {
        char field[64];
        snprintf(field, sizeof field, "ratelimit_%s", taken[i]);
        if (!CHECK(info_field(c, "ratelimit", field) >= 1)) fprintf(stderr, "     %s is 0\n", field);
    }
    for (int i = 0; i < 300; i++) {
        freeReplyObject(cmdline(c, "RL.SLIDINGLOG many:%d 5 1000 COST %d", i % 7, i % 8));
        freeReplyObject(cmdline(c, "RL.WINDOW many:w%d 3 100", i % 5));
        if (i % 50 == 0) run(c, "RL.CLOCK ADVANCE 400");
    }
    /* A lease key's array grown, written in the middle, and shrunk: leases of many lengths, renewed and
     * released out of order. */
    for (int i = 0; i < 40; i++) freeReplyObject(cmdline(c, "RL.ACQUIRE many:c 100 %d ID l%d", 1000 + (i * 37) % 900, i));
    for (int i = 0; i < 40; i += 3) freeReplyObject(cmdline(c, "RL.RENEW many:c l%d %d", i, 500 + i * 11));
    for (int i = 0; i < 40; i++)
        if (i % 7) freeReplyObject(cmdline(c, "RL.RELEASE many:c l%d", (i * 13) % 40));
    run(c, "RL.LEASES many:c");
    run(c, "RL.CLOCK ADVANCE 2000"); /* every lease has ended: the next write drops them all */
    run(c, "RL.ACQUIRE many:c 100 1000");
    lease_states(c);
    /* Sliding logs: members from the future moved to now, an earlier version's members, a log of many
     * weighted members with others' members between them searched by rank when a call blocks, a clock
     * step back merging members, and the cap cutting into the units at now. */
    run(c, "RL.CLOCK SET 1700000100000");
    run(c, "ZADD s4 +inf u1 1800000000000000 u2 1700000099999000 1700000099999000-0");
    run(c, "RL.SLIDINGLOG s4 5 1000");
    for (int i = 0; i < 60; i++) {
        freeReplyObject(cmdline(c, "RL.SLIDINGLOG deep 100 100000 COST %d", 1 + i % 3));
        if (i % 5 == 0) freeReplyObject(cmdline(c, "ZADD deep %lld other:%d", (1700000100000LL + i) * 1000 - 1, i));
        run(c, "RL.CLOCK ADVANCE 1");
    }
    static const char *const deep[] = {"RL.SLIDINGLOG deep 100 100000 COST 2", "RL.SLIDINGLOG deep 100 100000 DRYRUN",
                                       "RL.CLOCK SET 1700000100010", "RL.SLIDINGLOG deep 100 100000 COST 1",
                                       "RL.SLIDINGLOG deep 100 100000 COST 100", "RL.SLIDINGLOG deep 100 100000 COST 0"};
    for (size_t i = 0; i < sizeof deep / sizeof deep[0]; i++) run(c, deep[i]);
    /* Refunds: members removed whole and one cut (on the deep log, its reply found by rank), through
     * others' members above now, cut from both ends at once, folded into one member at now, a DRYRUN, the
     * read-only form, one that empties the key, and an error. */
    static const char *const refunds[] = {
        "RL.SLIDINGLOG deep 100 100000 REFUND 7",   "RL.SLIDINGLOG deep 100 100000 REFUND 3 DRYRUN",
        "RL.SLIDINGLOG_RO deep 100 100000 REFUND 5", "RL.SLIDINGLOG deep 100 100000 REFUND 0",
        "ZADD s4 +inf u3 1800000000000000 u4",      "RL.SLIDINGLOG s4 5 1000 REFUND 2",
        "RL.SLIDINGLOG s6 10 1000 COST 4",          "RL.CLOCK ADVANCE 10",
        "RL.SLIDINGLOG s6 10 1000 COST 6",          "RL.CLOCK ADVANCE 10",
        "RL.SLIDINGLOG s6 3 1000 REFUND 2",         "RL.SLIDINGLOG s6 10 1000 COST 7",
        "RL.SLIDINGLOG s6 3 1000 REFUND 1",         "RL.SLIDINGLOG s6 3 1000 REFUND 9",
        "RL.SLIDINGLOG s1 3 1000 REFUND 1 COST 1"};
    for (size_t i = 0; i < sizeof refunds / sizeof refunds[0]; i++) run(c, refunds[i]);

    /* WAIT and BLOCK (module/wait.c): waiters admitted by a clock step, one timed out, one that disconnects,
     * one unblocked by CLIENT UNBLOCK and one by CLIENT UNBLOCK ERROR, an RL.ALL waiter, and held replies
     * released by their timer, by CLIENT UNBLOCK and by a disconnect. */
    run(c, "RL.CLOCK SET 1700000200000");
    run(c, "RL.TOKEN wt1 1 1 1000");
    run(c, "RL.TOKEN wt1 1 1 1000 WAIT 30"); /* the frozen clock never refills: its timeout answers */
    static const char *const waits[] = {
        "RL.TOKEN wt1 1 1 1000 WAIT 60000", "RL.TOKEN wt1 1 1 1000 WAIT 60000", "RL.TOKEN wt1 1 1 1000 WAIT 60000",
        "RL.ALL 2 {w}a {w}b WAIT 60000 LIMIT TOKEN 1 1 1000 LIMIT WINDOW 1 1000", "RL.TOKEN wt1 1 1 1000 WAIT 60000",
        "RL.LEAKY wt2 1 1 100", "RL.LEAKY wt3 1 1 100000"};
    redisContext *w[7];
    for (int i = 0; i < 7; i++) {
        w[i] = server_connect(s);
        redisAppendCommand(w[i], waits[i]);
        int done = 0;
        while (!done && redisBufferWrite(w[i], &done) == REDIS_OK) {}
        sleep_ms(20);
    }
    run(c, "RL.LEAKY wt2 1 1 100 BLOCK");   /* held 100 ms on this connection, released by its timer */
    run(c, "RL.ALL 2 {w}a {w}b LIMIT TOKEN 1 1 1000 LIMIT WINDOW 1 1000");
    redisFree(w[1]);                         /* a waiter disconnects */
    sleep_ms(30);
    run(c, "RL.CLOCK ADVANCE 1000");         /* serves the first waiter and the RL.ALL one */
    sleep_ms(30);
    redisReply *ids = cmdline(c, "CLIENT LIST TYPE normal");
    for (char *line = ids->str; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (strstr(line, " flags=b ")) {
            long long id = atoll(strstr(line, "id=") + 3);
            freeReplyObject(cmdline(c, id % 2 ? "CLIENT UNBLOCK %lld" : "CLIENT UNBLOCK %lld ERROR", id));
        }
        line = nl ? nl + 1 : NULL;
    }
    freeReplyObject(ids);
    redisContext *held = server_connect(s); /* a held reply whose client goes away */
    redisAppendCommand(held, "RL.LEAKY wt3 1 1 100000 BLOCK");
    int sent = 0;
    while (!sent && redisBufferWrite(held, &sent) == REDIS_OK) {}
    sleep_ms(30);
    redisFree(held);
    for (int i = 0; i < 7; i++)
        if (i != 1) redisFree(w[i]);
    sleep_ms(50);

    lease_waiters(s, c);

    /* RESTORE: a good payload, then a truncated one; a cell and a lease key. */
    static const char *const restored[] = {"t1", "ls1"};
    for (size_t i = 0; i < sizeof restored / sizeof restored[0]; i++) {
        size_t len;
        char *dump = dump_key(c, restored[i], &len);
        CHECK(dump != NULL);
        if (!dump) continue;
        redisReply *good = cmd(c, "RESTORE %s:restored 0 %b", restored[i], dump, len);
        CHECK(reply_is_status(good, "OK"));
        freeReplyObject(good);
        redisReply *bad = cmd(c, "RESTORE %s:bad 0 %b", restored[i], dump, len - 3);
        CHECK(bad->type == REDIS_REPLY_ERROR);
        freeReplyObject(bad);
        free(dump);
    }

    /* BLOCK on the real clock: held replies delivered, and clients that disconnect while held. */
    run(c, "RL.CLOCK REAL");
    CHECK_EQ(rl(c, "RL.LEAKY held 2 1 100 BLOCK").wait_ms, 0);
    CHECK(rl(c, "RL.LEAKY held 2 1 100 BLOCK").wait_ms > 0);
    for (int i = 0; i < 20; i++) {
        redisContext *gone = server_connect(s);
        redisAppendCommand(gone, "RL.LEAKY gone%d 3 1 300 BLOCK COST 2", i);
        redisAppendCommand(gone, "RL.LEAKY gone%d 3 1 300 BLOCK", i); /* 2 units ahead: held 600 ms */
        int done = 0;
        while (!done) redisBufferWrite(gone, &done);
        redisReply *first;
        redisGetReply(gone, (void **)&first); /* the first is answered; the second is held */
        freeReplyObject(first);
        redisFree(gone);
    }
    static const char *const twice[] = {"RL.LEAKY inmulti 3 1 1000 BLOCK", "RL.LEAKY inmulti 3 1 1000 BLOCK", NULL};
    freeReplyObject(multi_exec(c, twice));
    /* The held replies' timers fire after 600 ms (their clients are gone by then): wait well past them so
     * every one has run and released its reply before the shutdown. */
    sleep_ms(1500);
    redisReply *info = cmd(c, "INFO clients");
    CHECK(strstr(info->str, "blocked_clients:0") != NULL);
    freeReplyObject(info);
    CHECK(cmd_status_is(c, "OK", "FLUSHALL"));
}

/* A stack passes through the module when a frame is in ratelimit.so or in one of its source files (valgrind
 * names a frame "fn (file.c:line)" when the module has its debug information): every file of module/ and
 * algorithms/, none of which has a name that Redis or Valkey uses. */
static int in_module(const char *record) {
    static const char *const files[] = {
        "all", "answer", "call", "cell_type", "cl_throttle", "clock", "command", "compat", "docs", "effects",
        "lease_type", "leases", "limiters", "parse", "ratelimit", "reply", "reset", "setstate", "stats", "store_cell",
        "store_lease", "store_log", "store_log_edit", "store_log_name", "store_log_read", "store_log_write", "syntax",
        "wait", "concurrency", "gcra_ns", "leaky", "rl_common", "slidinglog", "smooth", "token", "window"};
    if (strstr(record, "ratelimit.so")) return 1;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char mark[40];
        snprintf(mark, sizeof mark, "(%s.c:", files[i]);
        if (strstr(record, mark)) return 1;
    }
    return 0;
}

/* "1,344 bytes", "52,876 allocs": digits with thousands separators. */
static long number_at(const char *p) {
    long n = 0;
    for (; (*p >= '0' && *p <= '9') || *p == ','; p++)
        if (*p != ',') n = n * 10 + (*p - '0');
    return n;
}

/* Split a valgrind log into records (separated by "==pid== " blank lines) and report those that are a
 * leak or a memory error with the module in their stack. *allocs becomes the heap summary's allocation
 * count, if the log has one (0 stays otherwise). */
static int module_findings(const char *path, long *definitely_lost, long *allocs) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    static char record[1 << 16];
    char line[1024];
    size_t used = 0;
    int findings = 0;
    for (;;) {
        char *got = fgets(line, sizeof line, f);
        char *body = got ? strstr(line, "== ") : NULL;
        int blank = got && body && (body[3] == '\n' || body[3] == '\0');
        if (!got || blank) {
            record[used] = '\0';
            int is_problem = strstr(record, "are definitely lost") || strstr(record, "are indirectly lost") ||
                             strstr(record, "Invalid ") || strstr(record, "uninitialised") ||
                             strstr(record, "Mismatched free");
            if (is_problem && in_module(record)) {
                findings++;
                fprintf(stderr, "valgrind finding in the module:\n%s\n", record);
            }
            used = 0;
            if (!got) break;
            continue;
        }
        const char *lost = strstr(line, "definitely lost: ");
        if (lost) *definitely_lost += number_at(lost + 17);
        const char *usage = strstr(line, "total heap usage: ");
        if (usage) *allocs = number_at(usage + 18);
        size_t l = strlen(line);
        if (used + l < sizeof record - 1) {
            memcpy(record + used, line, l);
            used += l;
        }
    }
    fclose(f);
    return findings;
}

int main(void) {
    server_set_wrapper(valgrind);
    server *s = server_start(NULL);
    redisContext *c = server_connect(s);
    workload(s, c);
    redisFree(c);
    server_shutdown(s);
    server_set_wrapper(NULL);

    DIR *d = opendir(s->dir);
    int logs = 0, findings = 0;
    long lost = 0, most_allocs = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "vg.", 3) != 0) continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", s->dir, e->d_name);
        long allocs = 0;
        int n = module_findings(path, &lost, &allocs);
        CHECK(n >= 0);
        if (allocs > most_allocs) most_allocs = allocs; /* the server's log (a forked child writes its own) */
        findings += n > 0 ? n : 0;
        logs++;
    }
    if (d) closedir(d);
    CHECK(logs >= 1);
    CHECK_EQ(findings, 0);
    if (!CHECK(most_allocs >= MIN_ALLOCS))
        fprintf(stderr, "     valgrind saw only %ld allocations (at least %d expected): it does not see this "
                        "server's allocations (jemalloc linked in statically? a wrapper it does not follow?), so "
                        "no leak could be seen. Use a server built with MALLOC=libc (scripts/servers.sh) or with "
                        "a shared libjemalloc.\n", most_allocs, MIN_ALLOCS);
    printf("valgrind: %d log(s), %ld allocations seen, %ld bytes definitely lost in the whole process, "
           "%d finding(s) in the module\n", logs, most_allocs, lost, findings);
    if (getenv("RL_KEEP_LOGS")) fprintf(stderr, "logs kept in %s\n", s->dir); else server_stop(s);
    return check_summary("integration_leaks");
}
