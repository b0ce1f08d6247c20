/* integration_leases_race.c -- concurrency leases (RL.ACQUIRE, RL.RELEASE, RL.RENEW, RL.LEASES) under races,
 * with 100 real hiredis clients (threads) on one real redis-server, on the real clock:
 *
 *   1. the race: 100 clients loop on one key of limit 5 for RL_LEASE_RACE_S seconds (30 by default, what make
 *      test runs), each holding what it gets for a random time, then releasing it; a fifth of them instead
 *      disconnect without releasing, and come back later. Every lease's interval is recorded, and the
 *      largest overlap of those intervals must be exactly 5: never above the limit, and the limit reached
 *      (so the measure is fine enough to see a sixth). Beside it a monitor reads the server's own view
 *      (RL.CLOCK GET and RL.LEASES in one MULTI) every 10 ms: never more than 5 units listed, no lease
 *      listed after its latest possible expiry or after its release, dead clients' leases outliving their
 *      connection (disconnecting releases nothing) and gone at their expiry;
 *   2. the same race with WAIT (a third of the time: 10 s by default): every request waits its turn
 *      server-side instead of retrying;
 *   3. the slots of dead clients come back at their expiry, and not before: five clients take the five
 *      slots and disconnect; a waiter is admitted no earlier than the first expiry; after the last one the
 *      four others are free again;
 *   4. first in, first out with WAIT: 100 clients queue in a known order (each one confirmed waiting before
 *      the next is sent), 4 of them leave the queue; then one slot at a time is freed, by RL.RELEASE or by
 *      RL.RENEW to 300 ms and its expiry, and each time exactly one waiter is admitted: the next in arrival
 *      order. Each admitted client disconnects, its lease staying until it is freed in turn.
 *
 * Why the overlap check is sound (cannot fail on a correct server) yet sharp. A lease exists on the server
 * from the execution of its RL.ACQUIRE to the execution of its RL.RELEASE, or to its expiry (the acquire's
 * server time plus lease_ms). The server and the test read the same clock (CLOCK_REALTIME): the module's
 * time for a command is read when the command runs (the call's cached time on 7.2+), after the client sent
 * it and before the client reads its reply. So each recorded interval is taken inside the server's:
 *   start = when the admitted reply was read (after the acquire ran);
 *   end   = when RL.RELEASE was sent, if it answered 1 (the lease still existed when it ran), else (it had
 *           expired, or its client died) the acquire's send time plus lease_ms, less 2 ms for the module's
 *           rounding to whole ms: no later than the expiry.
 * Intervals inside the server's overlap no more than the server's do, so "at most 5" holds on any correct
 * server. They are short of the server's only by round trips (well under a ms here) against holds of
 * 1-50 ms and dead leases of 300 ms, so a sixth admission while five are held shows as an overlap of 6;
 * that the measure does reach 5 is checked too. The monitor's checks use the module's own clock: RL.CLOCK
 * GET runs just before RL.LEASES in one transaction, so its time is at most RL.LEASES'.
 *
 * FIFO is checked where arrival order is known (4): in the free-running race (2) clients arrive at once, and
 * nothing outside the server can say which arrived first. The test asserts no timings: only orders (before
 * or after an expiry) and counts. Prints "integration_leases_race: N passed, N failed". */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "clients.h"
#include "server.h"
#include "suite.h"

#define LIMIT 5
#define CLIENTS 100
#define DEAD_EVERY 5          /* client n dies instead of releasing when n % DEAD_EVERY == 0: a fifth */
#define LEASE_MS 300
#define HOLD_MAX_MS 50        /* a live client holds 1..HOLD_MAX_MS ms */
#define ROUNDING_US 2000      /* the module keeps ms: an expiry may be up to this much off the µs one */
#define RACE_WAIT_MS 8000     /* WAIT of the race's requests: below the connections' 10 s reply timeout */
#define MONITOR_EVERY_MS 10
#define ID_MAX 72

static server *srv;
static redisContext *c;

static int64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A thread's own random numbers (splitmix64). */
static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static long random_ms(uint64_t *state, long lo, long hi) { return lo + (long)(next_random(state) % (uint64_t)(hi - lo + 1)); }

/* --- RL.ACQUIRE's reply: seven fields, the last the lease id or nil ------------------------------------------ */

typedef struct acquire_reply {
    int ok; /* an array of 6 integers and a string or nil */
    long long allowed, limit, remaining, retry_after_ms, reset_after_ms, wait_ms;
    char lease[ID_MAX]; /* "" when nil */
    int has_lease;
    char error[128];
} acquire_reply;

static acquire_reply acquire_of(const redisReply *r) {
    acquire_reply a = {0};
    if (!r) {
        snprintf(a.error, sizeof a.error, "no reply");
        return a;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        snprintf(a.error, sizeof a.error, "%s", r->str);
        return a;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 7) {
        snprintf(a.error, sizeof a.error, "not an array of 7 (type %d)", r->type);
        return a;
    }
    long long *fields[6] = {&a.allowed, &a.limit, &a.remaining, &a.retry_after_ms, &a.reset_after_ms, &a.wait_ms};
    for (int i = 0; i < 6; i++) {
        if (r->element[i]->type != REDIS_REPLY_INTEGER) {
            snprintf(a.error, sizeof a.error, "field %d is not an integer", i + 1);
            return a;
        }
        *fields[i] = r->element[i]->integer;
    }
    const redisReply *lease = r->element[6];
    if (lease->type == REDIS_REPLY_STRING && lease->len > 0 && lease->len < ID_MAX) {
        memcpy(a.lease, lease->str, lease->len);
        a.has_lease = 1;
    } else if (lease->type != REDIS_REPLY_NIL) {
        snprintf(a.error, sizeof a.error, "lease is neither a 1-64 byte string nor nil");
        return a;
    }
    a.ok = 1;
    return a;
}

/* What the spec says of every reply on a key whose leases all take 1 unit for LEASE_MS ms; NULL if it holds,
 * else what does not. */
static const char *reply_wrong(const acquire_reply *a) {
    if (!a->ok) return a->error;
    if (a->limit != LIMIT || a->wait_ms != 0) return "limit or wait_ms";
    if (a->allowed == 1) {
        if (!a->has_lease) return "admitted without a lease id";
        if (a->remaining < 0 || a->remaining > LIMIT - 1 || a->retry_after_ms != -1) return "admitted: remaining or retry_after_ms";
        if (a->reset_after_ms != LEASE_MS) return "admitted: reset_after_ms is not lease_ms (its own lease ends last)";
        return NULL;
    }
    if (a->allowed != 0 || a->has_lease) return "denied with a lease id";
    if (a->remaining != 0) return "denied with units free";
    if (a->retry_after_ms < 1 || a->retry_after_ms > a->reset_after_ms || a->reset_after_ms > LEASE_MS)
        return "denied: retry_after_ms or reset_after_ms out of (0, lease_ms]";
    return NULL;
}

/* --- what the race records ---------------------------------------------------------------------------------- */

enum { RELEASED, EXPIRED_FIRST, DEAD };

typedef struct lease_rec {
    char id[ID_MAX];
    int64_t acq_send, acq_recv; /* µs, around the RL.ACQUIRE that admitted it */
    int64_t rel_send, rel_recv; /* around its RL.RELEASE (RELEASED, EXPIRED_FIRST) */
    int64_t closed;             /* DEAD: when its client closed the connection */
    int outcome;
} lease_rec;

typedef struct lease_list {
    lease_rec *v;
    size_t n, cap;
} lease_list;

static lease_rec *lease_add(lease_list *l) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
    }
    memset(&l->v[l->n], 0, sizeof *l->v);
    return &l->v[l->n++];
}

/* A lease's interval as the test may count it: inside the server's (see the header). */
static int64_t interval_start(const lease_rec *r) { return r->acq_recv; }
static int64_t interval_end(const lease_rec *r) {
    return r->outcome == RELEASED ? r->rel_send : r->acq_send + LEASE_MS * 1000LL - ROUNDING_US;
}

typedef struct race {
    int port;
    const char *key;
    int wait; /* the requests carry WAIT RACE_WAIT_MS */
    int64_t deadline;
} race;

typedef struct client_run {
    const race *race;
    int number;
    pthread_t thread;
    lease_list leases;
    long long denied, timed_out, errors, bad_replies, release_zero;
    char first_problem[160];
} client_run;

static void note_problem(client_run *me, const char *what, const char *detail) {
    if (!me->first_problem[0]) snprintf(me->first_problem, sizeof me->first_problem, "client %d: %s (%s)", me->number, what, detail);
}

/* One attempt: RL.ACQUIRE, then hold and release, or die (close the connection) without releasing. Returns
 * the connection to go on with (NULL after a death or an error). */
static redisContext *attempt(client_run *me, redisContext *cc, uint64_t *rnd) {
    const race *rc = me->race;
    int64_t sent = now_us();
    redisReply *r = rc->wait ? redisCommand(cc, "RL.ACQUIRE %s %d %d WAIT %d", rc->key, LIMIT, LEASE_MS, RACE_WAIT_MS)
                             : redisCommand(cc, "RL.ACQUIRE %s %d %d", rc->key, LIMIT, LEASE_MS);
    int64_t got = now_us();
    acquire_reply a = acquire_of(r);
    if (r) freeReplyObject(r);
    const char *wrong = reply_wrong(&a);
    if (!r || !a.ok) {
        me->errors++;
        note_problem(me, "acquire failed", r ? a.error : cc->errstr);
        redisFree(cc);
        sleep_ms(10);
        return NULL;
    }
    if (wrong) {
        me->bad_replies++;
        note_problem(me, "reply against the spec", wrong);
    }
    if (!a.allowed) {
        me->denied++;
        if (rc->wait) me->timed_out++; /* a waiter answered with the denial of its timeout */
        else sleep_ms(random_ms(rnd, 5, 25));
        return cc;
    }
    lease_rec *l = lease_add(&me->leases);
    snprintf(l->id, sizeof l->id, "%s", a.lease);
    l->acq_send = sent;
    l->acq_recv = got;
    if (me->number % DEAD_EVERY == 0) {
        l->outcome = DEAD;
        redisFree(cc);
        l->closed = now_us();
        sleep_ms(random_ms(rnd, 1000, 3000)); /* dead for a while, then a new client */
        return NULL;
    }
    sleep_ms(random_ms(rnd, 1, HOLD_MAX_MS));
    l->rel_send = now_us();
    r = redisCommand(cc, "RL.RELEASE %s %s", rc->key, l->id);
    l->rel_recv = now_us();
    if (!r || r->type != REDIS_REPLY_INTEGER || (r->integer != 0 && r->integer != 1)) {
        me->errors++;
        note_problem(me, "release failed", r && r->type == REDIS_REPLY_ERROR ? r->str : "not 0 or 1");
        l->outcome = EXPIRED_FIRST; /* what is known: no later than its expiry */
        if (r) freeReplyObject(r);
        redisFree(cc);
        return NULL;
    }
    l->outcome = r->integer == 1 ? RELEASED : EXPIRED_FIRST;
    if (r->integer == 0) me->release_zero++; /* held past lease_ms: a slow thread, not an error */
    freeReplyObject(r);
    return cc;
}

static void *client_main(void *arg) {
    client_run *me = arg;
    uint64_t rnd = 0x5eed0000ULL + (uint64_t)me->number * 7919;
    redisContext *cc = NULL;
    while (now_us() < me->race->deadline) {
        if (!cc) cc = port_connect(me->race->port);
        cc = attempt(me, cc, &rnd);
    }
    if (cc) redisFree(cc);
    return NULL;
}

/* --- the monitor: the server's own view ------------------------------------------------------------------------ */

typedef struct sample {
    int64_t server_ms; /* RL.CLOCK GET, just before RL.LEASES in one MULTI */
    int n;             /* leases listed (only the first LIMIT + 1 kept) */
    long long units;
    char id[LIMIT + 1][ID_MAX];
    long long unit[LIMIT + 1], ttl_ms[LIMIT + 1];
} sample;

typedef struct monitor {
    const race *race;
    volatile int stop;
    pthread_t thread;
    sample *v;
    size_t n, cap;
    long long errors;
    char first_error[160];
} monitor;

static int read_sample(const redisReply *exec, sample *s) {
    if (!reply_is_array(exec, 2) || exec->element[0]->type != REDIS_REPLY_INTEGER ||
        exec->element[1]->type != REDIS_REPLY_ARRAY)
        return 0;
    const redisReply *list = exec->element[1];
    s->server_ms = exec->element[0]->integer;
    s->n = (int)list->elements;
    s->units = 0;
    for (size_t i = 0; i < list->elements; i++) {
        const redisReply *e = list->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements != 3 || e->element[0]->type != REDIS_REPLY_STRING ||
            e->element[1]->type != REDIS_REPLY_INTEGER || e->element[2]->type != REDIS_REPLY_INTEGER ||
            e->element[0]->len >= ID_MAX)
            return 0;
        s->units += e->element[1]->integer;
        if (i > LIMIT) continue;
        memcpy(s->id[i], e->element[0]->str, e->element[0]->len);
        s->id[i][e->element[0]->len] = '\0';
        s->unit[i] = e->element[1]->integer;
        s->ttl_ms[i] = e->element[2]->integer;
    }
    return 1;
}

static void *monitor_main(void *arg) {
    monitor *m = arg;
    redisContext *mc = port_connect(m->race->port);
    while (!m->stop) {
        redisAppendCommand(mc, "MULTI");
        redisAppendCommand(mc, "RL.CLOCK GET");
        redisAppendCommand(mc, "RL.LEASES %s", m->race->key);
        redisAppendCommand(mc, "EXEC");
        redisReply *r[4] = {0};
        int ok = 1;
        for (int i = 0; i < 4; i++) ok &= redisGetReply(mc, (void **)&r[i]) == REDIS_OK && r[i];
        if (m->n == m->cap) {
            m->cap = m->cap ? m->cap * 2 : 1024;
            m->v = realloc(m->v, m->cap * sizeof *m->v);
        }
        sample *s = &m->v[m->n];
        memset(s, 0, sizeof *s);
        if (ok && read_sample(r[3], s)) {
            m->n++;
        } else {
            m->errors++;
            if (!m->first_error[0])
                snprintf(m->first_error, sizeof m->first_error, "%s",
                         ok && r[3]->type == REDIS_REPLY_ERROR ? r[3]->str : "MULTI RL.CLOCK GET RL.LEASES: unreadable");
        }
        for (int i = 0; i < 4; i++)
            if (r[i]) freeReplyObject(r[i]);
        if (!ok) break;
        sleep_ms(MONITOR_EVERY_MS);
    }
    redisFree(mc);
    return NULL;
}

/* --- judging a race ------------------------------------------------------------------------------------------- */

typedef struct edge {
    int64_t at;
    int delta; /* +1 start, -1 end */
} edge;

static int edge_order(const void *a, const void *b) {
    const edge *x = a, *y = b;
    if (x->at != y->at) return x->at < y->at ? -1 : 1;
    return x->delta - y->delta; /* an end before a start at the same instant: half-open intervals */
}

/* The largest number of intervals open at once. */
static int max_overlap(const lease_list *all, int64_t *when) {
    edge *e = malloc((2 * all->n + 1) * sizeof *e);
    size_t n = 0;
    for (size_t i = 0; i < all->n; i++) {
        int64_t from = interval_start(&all->v[i]), to = interval_end(&all->v[i]);
        if (to <= from) continue; /* empty: said nothing */
        e[n++] = (edge){from, +1};
        e[n++] = (edge){to, -1};
    }
    qsort(e, n, sizeof *e, edge_order);
    int open = 0, most = 0;
    for (size_t i = 0; i < n; i++) {
        open += e[i].delta;
        if (open > most) {
            most = open;
            *when = e[i].at;
        }
    }
    free(e);
    return most;
}

static int rec_by_id(const void *a, const void *b) { return strcmp(((const lease_rec *)a)->id, ((const lease_rec *)b)->id); }

static const lease_rec *find_lease(const lease_list *sorted, const char *id) {
    lease_rec key;
    snprintf(key.id, sizeof key.id, "%s", id);
    return bsearch(&key, sorted->v, sorted->n, sizeof key, rec_by_id);
}

typedef struct view_counts {
    long long samples, over_limit, unknown, bad_units, bad_ttl, past_expiry, past_release, ttl_beyond_end;
    long long dead_seen_after_close; /* a dead client's lease still listed after its connection closed */
    long long most_units;
    char first[200];
} view_counts;

static void view_problem(view_counts *v, long long *counter, const sample *s, const char *id, const char *what) {
    (*counter)++;
    if (!v->first[0]) snprintf(v->first, sizeof v->first, "at server ms %lld, lease %s: %s", (long long)s->server_ms, id, what);
}

/* Every sample against the leases the clients recorded (sorted by id). */
static view_counts judge_samples(const monitor *m, const lease_list *sorted) {
    view_counts v = {0};
    v.samples = (long long)m->n;
    for (size_t k = 0; k < m->n; k++) {
        const sample *s = &m->v[k];
        int64_t t = s->server_ms * 1000; /* at most the server's time of RL.LEASES, in µs */
        if (s->units > v.most_units) v.most_units = s->units;
        if (s->units > LIMIT || s->n > LIMIT) view_problem(&v, &v.over_limit, s, "-", "more than 5 units listed");
        for (int i = 0; i < s->n && i <= LIMIT; i++) {
            const lease_rec *l = find_lease(sorted, s->id[i]);
            if (!l) {
                view_problem(&v, &v.unknown, s, s->id[i], "listed, but no client was given it");
                continue;
            }
            if (s->unit[i] != 1) view_problem(&v, &v.bad_units, s, s->id[i], "not 1 unit");
            if (s->ttl_ms[i] < 0 || s->ttl_ms[i] > LEASE_MS) view_problem(&v, &v.bad_ttl, s, s->id[i], "ttl_ms out of [0, lease_ms]");
            int64_t latest_end = l->acq_recv + LEASE_MS * 1000LL + ROUNDING_US;
            if (t >= latest_end) view_problem(&v, &v.past_expiry, s, s->id[i], "listed after its expiry");
            if (t + s->ttl_ms[i] * 1000 > latest_end) view_problem(&v, &v.ttl_beyond_end, s, s->id[i], "ttl_ms beyond its expiry");
            if (l->outcome == RELEASED && t >= l->rel_recv) view_problem(&v, &v.past_release, s, s->id[i], "listed after its release");
            if (l->outcome == DEAD && t > l->closed) v.dead_seen_after_close++;
        }
    }
    return v;
}

/* Run one race and check it; label names it in messages. */
static void run_race(const char *label, const char *key, int wait, int seconds) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    CHECK(cmd_int(c, "DEL %s", key) >= 0);
    race rc = {srv->port, key, wait, now_us() + (int64_t)seconds * 1000000};
    monitor m = {.race = &rc};
    pthread_create(&m.thread, NULL, monitor_main, &m);
    client_run *runs = calloc(CLIENTS, sizeof *runs);
    for (int i = 0; i < CLIENTS; i++) {
        runs[i].race = &rc;
        runs[i].number = i;
        pthread_create(&runs[i].thread, NULL, client_main, &runs[i]);
    }
    for (int i = 0; i < CLIENTS; i++) pthread_join(runs[i].thread, NULL);
    m.stop = 1;
    pthread_join(m.thread, NULL);

    lease_list all = {0};
    long long denied = 0, timed_out = 0, errors = 0, bad = 0, release_zero = 0, dead = 0;
    const char *problem = "";
    for (int i = 0; i < CLIENTS; i++) {
        client_run *r = &runs[i];
        for (size_t k = 0; k < r->leases.n; k++) {
            *lease_add(&all) = r->leases.v[k];
            dead += r->leases.v[k].outcome == DEAD;
        }
        denied += r->denied;
        timed_out += r->timed_out;
        errors += r->errors;
        bad += r->bad_replies;
        release_zero += r->release_zero;
        if (!problem[0] && r->first_problem[0]) problem = r->first_problem;
    }
    int64_t when = 0;
    int most = max_overlap(&all, &when);
    qsort(all.v, all.n, sizeof *all.v, rec_by_id);
    int unique = 1;
    for (size_t i = 1; i < all.n; i++) unique &= strcmp(all.v[i - 1].id, all.v[i].id) != 0;
    view_counts v = judge_samples(&m, &all);
    printf("%s: %zu leases (%lld of dead clients), %lld denials (%lld WAIT timeouts), %lld released after their expiry;"
           " largest overlap %d; %lld server samples, at most %lld units listed, dead leases seen after their client"
           " left %lld times\n",
           label, all.n, dead, denied, timed_out, release_zero, most, v.samples, v.most_units, v.dead_seen_after_close);
    if (problem[0]) fprintf(stderr, "     %s: first problem: %s\n", label, problem);
    if (v.first[0]) fprintf(stderr, "     %s: server view: %s\n", label, v.first);
    if (m.first_error[0]) fprintf(stderr, "     %s: monitor: %s\n", label, m.first_error);

    CHECK_EQ(errors, 0);
    CHECK_EQ(bad, 0);
    CHECK(all.n > 0 && dead > 0 && unique); /* leases were handed out, dead clients held some, ids unique */
    if (!CHECK(most <= LIMIT)) fprintf(stderr, "     %s: %d leases held at once (at %lld µs)\n", label, most, (long long)when);
    CHECK_EQ(most, LIMIT); /* the limit was reached: the measure could have seen a sixth */
    CHECK_EQ(m.errors, 0);
    CHECK(v.samples > 0);
    CHECK_EQ(v.over_limit, 0);
    CHECK_EQ(v.unknown, 0);
    CHECK_EQ(v.bad_units + v.bad_ttl, 0);
    CHECK_EQ(v.past_expiry, 0);   /* dead leases (all leases) gone at their expiry */
    CHECK_EQ(v.ttl_beyond_end, 0);
    CHECK_EQ(v.past_release, 0);
    CHECK(v.dead_seen_after_close > 0); /* disconnecting released nothing */

    /* Every lease ends: once the last could have expired, nothing is listed and all 5 units are free. */
    sleep_ms(LEASE_MS + 50);
    redisReply *left = cmd(c, "RL.LEASES %s", key);
    CHECK(reply_is_array(left, 0));
    freeReplyObject(left);
    redisReply *r = cmd(c, "RL.ACQUIRE %s %d %d COST %d", key, LIMIT, LEASE_MS, LIMIT);
    acquire_reply full = acquire_of(r);
    freeReplyObject(r);
    CHECK(full.ok && full.allowed == 1 && full.remaining == 0);
    CHECK(cmd_int(c, "DEL %s", key) == 1);

    for (int i = 0; i < CLIENTS; i++) free(runs[i].leases.v);
    free(runs);
    free(all.v);
    free(m.v);
}

static int race_seconds(void) {
    const char *s = getenv("RL_LEASE_RACE_S");
    int n = s && *s ? atoi(s) : 30;
    return n >= 1 ? n : 30;
}

/* 1. */
static void test_race(void) { run_race("race", "lr:race", 0, race_seconds()); }

/* 2. */
static void test_race_wait(void) {
    int seconds = race_seconds() / 3;
    run_race("race with WAIT", "lr:racewait", 1, seconds >= 1 ? seconds : 1);
}

/* --- requests whose reply is read later ------------------------------------------------------------------------ */

typedef struct waiter {
    redisContext *cc;
    int answered, closed;
    int64_t sent, received;
    acquire_reply reply;
} waiter;

static waiter waiter_send(const char *fmt, ...) {
    waiter w = {0};
    w.cc = server_connect(srv);
    words line;
    va_list ap;
    va_start(ap, fmt);
    words_vformat(&line, fmt, ap);
    va_end(ap);
    redisAppendCommandArgv(w.cc, line.argc, line.argv, line.lens);
    w.sent = now_us();
    int done = 0;
    while (!done)
        if (redisBufferWrite(w.cc, &done) != REDIS_OK) break;
    return w;
}

/* 1 once w's reply has been read (waiting up to ms for it). */
static int waiter_poll(waiter *w, int ms) {
    if (w->answered) return 1;
    if (w->closed) return 0;
    struct pollfd fd = {w->cc->fd, POLLIN, 0};
    if (poll(&fd, 1, ms) <= 0) return 0;
    redisReply *r = NULL;
    if (redisGetReply(w->cc, (void **)&r) != REDIS_OK || !r) return 0;
    w->received = now_us();
    w->reply = acquire_of(r);
    freeReplyObject(r);
    w->answered = 1;
    return 1;
}

static void waiter_close(waiter *w) {
    if (!w->closed) redisFree(w->cc);
    w->closed = 1;
}


/* The ids RL.LEASES lists, as one string "id id ..." sorted, for comparing sets. */
static int id_order(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static void listed_ids(const char *key, char *out, size_t size) {
    redisReply *r = cmd(c, "RL.LEASES %s", key);
    out[0] = '\0';
    if (r->type != REDIS_REPLY_ARRAY) {
        snprintf(out, size, "(not an array)");
        freeReplyObject(r);
        return;
    }
    char *ids[64];
    size_t n = 0;
    for (size_t i = 0; i < r->elements && n < 64; i++)
        if (r->element[i]->type == REDIS_REPLY_ARRAY && r->element[i]->elements == 3) ids[n++] = r->element[i]->element[0]->str;
    qsort(ids, n, sizeof *ids, id_order);
    for (size_t i = 0; i < n; i++) snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? " " : "", ids[i]);
    freeReplyObject(r);
}
static void sorted_ids(char ids[][ID_MAX], int n, char *out, size_t size) {
    char *p[64];
    for (int i = 0; i < n; i++) p[i] = ids[i];
    qsort(p, (size_t)n, sizeof *p, id_order);
    out[0] = '\0';
    for (int i = 0; i < n; i++) snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? " " : "", p[i]);
}

/* 3. the slots of dead clients come back at their expiry ---------------------------------------------------------- */

static void test_dead_slots_return(void) {
    const int lease_ms = 400;
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    CHECK(cmd_int(c, "DEL lr:dead") >= 0);
    char ids[LIMIT][ID_MAX];
    int64_t first_sent = 0, last_received = 0;
    for (int i = 0; i < LIMIT; i++) { /* five clients take a slot each and leave */
        redisContext *dc = server_connect(srv);
        int64_t sent = now_us();
        redisReply *r = cmd(dc, "RL.ACQUIRE lr:dead %d %d", LIMIT, lease_ms);
        last_received = now_us();
        if (i == 0) first_sent = sent;
        acquire_reply a = acquire_of(r);
        freeReplyObject(r);
        CHECK(a.ok && a.allowed == 1 && a.remaining == LIMIT - 1 - i);
        snprintf(ids[i], ID_MAX, "%s", a.lease);
        redisFree(dc);
    }
    char want[512], got[512];
    sorted_ids(ids, LIMIT, want, sizeof want);
    listed_ids("lr:dead", got, sizeof got);
    CHECK_STR(got, want); /* their connections are gone, their leases are not */
    redisReply *r = cmd(c, "RL.ACQUIRE lr:dead %d %d", LIMIT, lease_ms);
    acquire_reply denied = acquire_of(r);
    freeReplyObject(r);
    CHECK(denied.ok && denied.allowed == 0 && !denied.has_lease && denied.retry_after_ms >= 1 &&
          denied.retry_after_ms <= lease_ms);

    /* A waiter: admitted when the first dead lease expires, never before. */
    waiter w = waiter_send("RL.ACQUIRE lr:dead %d %d WAIT 5000", LIMIT, lease_ms);
    CHECK(waiter_poll(&w, 5000));
    CHECK(w.reply.ok && w.reply.allowed == 1 && w.reply.has_lease);
    if (!CHECK(w.received >= first_sent + lease_ms * 1000LL - ROUNDING_US))
        fprintf(stderr, "     admitted %lld µs after the first dead lease was asked for (its lease: %d ms)\n",
                (long long)(w.received - first_sent), lease_ms);
    waiter_close(&w);

    /* After the last dead lease's expiry: only the waiter's lease is left, and the four others are free. */
    while (now_us() < last_received + lease_ms * 1000LL + ROUNDING_US) sleep_ms(10);
    listed_ids("lr:dead", got, sizeof got);
    CHECK_STR(got, w.reply.lease);
    r = cmd(c, "RL.ACQUIRE lr:dead %d %d COST %d", LIMIT, lease_ms, LIMIT - 1);
    acquire_reply rest = acquire_of(r);
    freeReplyObject(r);
    CHECK(rest.ok && rest.allowed == 1 && rest.remaining == 0);
    CHECK(cmd_int(c, "DEL lr:dead") == 1);
}

/* 4. first in, first out -------------------------------------------------------------------------------------------- */

#define QUEUE 100
#define LEAVES_EVERY 25  /* waiter i leaves the queue (disconnects) when i % LEAVES_EVERY == 12 */
#define EXPIRES_EVERY 10 /* every 10th slot is freed by RL.RENEW to 300 ms, and its expiry */

static void test_fifo(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    CHECK(cmd_int(c, "DEL lr:fifo") >= 0);
    /* The five slots, held by leases this test frees one at a time (oldest first). */
    char held[QUEUE + LIMIT][ID_MAX];
    int oldest = 0, newest = 0;
    for (int i = 0; i < LIMIT; i++) {
        snprintf(held[newest], ID_MAX, "holder-%d", i);
        redisReply *r = cmd(c, "RL.ACQUIRE lr:fifo %d 60000 ID %s", LIMIT, held[newest]);
        acquire_reply a = acquire_of(r);
        freeReplyObject(r);
        CHECK(a.ok && a.allowed == 1 && strcmp(a.lease, held[newest]) == 0);
        newest++;
    }
    /* The queue, in a known order: each waiter is confirmed waiting before the next is sent. */
    static waiter w[QUEUE];
    for (int i = 0; i < QUEUE; i++) {
        w[i] = waiter_send("RL.ACQUIRE lr:fifo %d 60000 WAIT 60000", LIMIT);
        if (!CHECK(wait_for_waiting(c, i + 1))) break;
    }
    int stay = 0;
    for (int i = 0; i < QUEUE; i++) {
        if (i % LEAVES_EVERY == 12) waiter_close(&w[i]);
        else stay++;
    }
    CHECK(wait_for_waiting(c, stay));

    int expected = 0, in_order = 1, served = 0, extra = 0, early = 0;
    for (int step = 0; step < stay; step++) {
        while (expected < QUEUE && w[expected].closed) expected++;
        int64_t freed_at = now_us(), not_before = 0;
        if (step % EXPIRES_EVERY == 3) { /* the oldest lease ends by itself in 300 ms */
            CHECK_EQ(cmd_int(c, "RL.RENEW lr:fifo %s 300", held[oldest]), 1);
            not_before = freed_at + 300 * 1000LL - ROUNDING_US;
        } else {
            CHECK_EQ(cmd_int(c, "RL.RELEASE lr:fifo %s", held[oldest]), 1);
        }
        oldest++;
        /* One slot is free: exactly one waiter is admitted, and it must be the next in arrival order. */
        int who = -1;
        for (int tries = 0; tries < 500 && who < 0; tries++)
            for (int i = 0; i < QUEUE && who < 0; i++)
                if (!w[i].answered && waiter_poll(&w[i], i == expected ? 10 : 0)) who = i;
        if (who < 0) {
            CHECK(who >= 0); /* a freed slot admitted a waiter */
            break;
        }
        if (who != expected || !w[who].reply.ok || w[who].reply.allowed != 1) {
            in_order = 0;
            fprintf(stderr, "     step %d: waiter %d answered (allowed %lld), expected %d\n", step, who,
                    w[who].reply.allowed, expected);
        }
        if (not_before && w[who].received < not_before) early++;
        for (int i = 0; i < QUEUE; i++)
            if (i != who && !w[i].answered && waiter_poll(&w[i], 0)) extra++;
        snprintf(held[newest++], ID_MAX, "%s", w[who].reply.lease);
        waiter_close(&w[who]); /* it leaves; its lease stays until freed in turn */
        served++;
        if (who == expected) expected++;
    }
    CHECK(in_order);
    CHECK_EQ(served, stay);
    CHECK_EQ(extra, 0);
    CHECK_EQ(early, 0); /* a slot freed by expiry came back no earlier than the expiry */
    CHECK(wait_for_waiting(c, 0));
    /* The last five admitted still hold the slots: their clients are gone. */
    redisReply *r = cmd(c, "RL.LEASES lr:fifo");
    CHECK(reply_is_array(r, LIMIT));
    freeReplyObject(r);
    for (int i = 0; i < QUEUE; i++) waiter_close(&w[i]);
    CHECK(cmd_int(c, "DEL lr:fifo") == 1);
}

int main(void) {
    static const suite_test tests[] = {test_dead_slots_return, test_fifo, test_race, test_race_wait, NULL};
    return server_suite("integration_leases_race", &srv, &c, tests);
}
