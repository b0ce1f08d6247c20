/* integration_policy_store.c -- policies under load and across every way a server keeps its data, on real
 * redis-servers: what integration_policy.c (which compares RL.CHECK with RL.ALL call for call, on the frozen
 * test clock) does not prove.
 *
 *   1. Replacement under concurrent traffic, on the real clock. 20 clients (threads, each its own
 *      connection) loop on RL.CHECK over a few keys while another connection replaces the policies every
 *      100 ms, up and down among four versions of each. A client cannot know which version decided its call,
 *      so each check is a bound that holds whatever the order, and each is chosen so that a module that gave
 *      a key a full budget at each replacement would break it (the test shows that, too, from the traffic it
 *      recorded): the model and the bounds are stated where they are checked.
 *   2. The store across persistence: a deterministic store (three policies, one replaced mid-way, keys in a
 *      lock, SHADOW) is built at fixed test-clock instants, then continued by a fixed sequence of calls. The
 *      continuation after DEBUG RELOAD, SAVE and a restart, an AOF replayed as written and after
 *      BGREWRITEAOF, a replica's full sync and stream, REPLICAOF NO ONE and FAILOVER must answer, reply for
 *      reply, what it answers with no such event. FLUSHALL keeps the policies. With aof-use-rdb-preamble no,
 *      a rewritten AOF keeps the keys and loses the policies (the documented known limit): asserted exactly,
 *      and the keys then continue exactly once the policies are set again.
 * The closing line is "integration_policy_store: N passed, N failed". */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "effect_checks.h"
#include "lock_checks.h"
#include "server.h"

#define T0 1700000000000LL /* a test-clock instant (ms): 2023-11-14 22:13:20 UTC */

/* --- replies as text ---------------------------------------------------------------------------------------- */

/* text[used..] = piece (len bytes), growing text as needed. */
static void text_append(char **text, size_t *used, size_t *size, const char *piece, size_t len) {
    if (*used + len + 1 > *size) {
        *size = (*used + len + 1) * 2;
        *text = realloc(*text, *size);
    }
    memcpy(*text + *used, piece, len);
    *used += len;
    (*text)[*used] = '\0';
}

/* A reply as one line appended to *text (malloc'd, grown): integers, [arrays], strings, (nil), -errors. */
static void reply_append(const redisReply *r, char **text, size_t *used, size_t *size) {
    char number[32];
    switch (r->type) {
    case REDIS_REPLY_INTEGER:
        text_append(text, used, size, number, (size_t)snprintf(number, sizeof number, "%lld", r->integer));
        return;
    case REDIS_REPLY_NIL: text_append(text, used, size, "(nil)", 5); return;
    case REDIS_REPLY_ERROR:
        text_append(text, used, size, "-", 1);
        text_append(text, used, size, r->str, strlen(r->str));
        return;
    case REDIS_REPLY_ARRAY:
        text_append(text, used, size, "[", 1);
        for (size_t i = 0; i < r->elements; i++) {
            if (i) text_append(text, used, size, " ", 1);
            reply_append(r->element[i], text, used, size);
        }
        text_append(text, used, size, "]", 1);
        return;
    default: text_append(text, used, size, r->str, strlen(r->str));
    }
}

/* A growing text of replies, one "line -> reply" per command, to compare two runs whole. */
typedef struct transcript {
    char *text;
    size_t used, size;
} transcript;

static void transcript_add(transcript *t, const char *line, const redisReply *r) {
    text_append(&t->text, &t->used, &t->size, line, strlen(line));
    text_append(&t->text, &t->used, &t->size, " -> ", 4);
    reply_append(r, &t->text, &t->used, &t->size);
    text_append(&t->text, &t->used, &t->size, "\n", 1);
}

/* Run line (split on spaces) on ctx and add it and its reply to t. */
static void transcript_run(transcript *t, redisContext *ctx, const char *line) {
    redisReply *r = cmdline(ctx, "%s", line);
    transcript_add(t, line, r);
    freeReplyObject(r);
}

static void transcript_free(transcript *t) {
    free(t->text);
    *t = (transcript){0};
}

/* One check: two transcripts are the same; else the first line that differs is printed. */
static int check_same_transcript(const transcript *got, const transcript *want, const char *what) {
    const char *g = got->text ? got->text : "", *w = want->text ? want->text : "";
    if (CHECK(strcmp(g, w) == 0)) return 1;
    while (*g && *g == *w) g++, w++;
    while (g > got->text && g[-1] != '\n') g--, w--;
    fprintf(stderr, "     %s: first difference\n     got:  %.*s\n     want: %.*s\n", what, (int)strcspn(g, "\n"), g,
            (int)strcspn(w, "\n"), w);
    return 0;
}

/* Every policy as lines "name -> [its GET words]" (malloc'd). */
static char *policies_text(redisContext *ctx) {
    transcript t = {0};
    redisReply *list = cmd(ctx, "RL.POLICY LIST");
    for (size_t i = 0; list->type == REDIS_REPLY_ARRAY && i < list->elements; i++) {
        redisReply *g = cmd(ctx, "RL.POLICY GET %s", list->element[i]->str);
        transcript_add(&t, list->element[i]->str, g);
        freeReplyObject(g);
    }
    freeReplyObject(list);
    return t.text ? t.text : strdup("");
}

static void clock_set(redisContext *ctx, long long ms) { CHECK(cmd_status_is(ctx, "OK", "RL.CLOCK SET %lld", ms)); }

/* === 1. replacement under concurrent traffic ================================================================ */

/* Two policies, each replaced every 100 ms among four versions that keep their one limit's name and kind:
 *
 *   race-window: LIMIT win WINDOW L 1000 FIXED, L = 40, 80, 20, 60 (up and down, in that order, round)
 *   race-bucket: LIMIT burst TOKEN C n P, (C, n, P) = (30, 10, 1000), (60, 30, 1000), (15, 5, 1000), (40, 10, 500):
 *                capacities and refill periods up and down; the fastest refill is 30 tokens per 1000 ms
 *
 * Two policies, not one with both limits: all or nothing, one limit would hide the other's excess.
 * Every call costs 1. A client records each call's send and answer instants on the wall clock (the server's
 * real clock too: it decides the call somewhere between them) and the reply. */
#define RACE_CLIENTS 20
#define RACE_KEYS 3     /* per policy: each key has 3 or 4 clients */
#define RACE_VERSIONS 4
#define RACE_TICKS 30   /* replacements after the first SET, 100 ms apart: 3 s of traffic */
#define RACE_WINDOW_MS 1000

static const long long window_limit[RACE_VERSIONS] = {40, 80, 20, 60};
static const long long bucket_capacity[RACE_VERSIONS] = {30, 60, 15, 40};
static const long long bucket_tokens[RACE_VERSIONS] = {10, 30, 5, 10};
static const long long bucket_period_ms[RACE_VERSIONS] = {1000, 1000, 1000, 500};
#define WINDOW_MAX_LIMIT 80
#define BUCKET_MAX_CAPACITY 60
#define BUCKET_FASTEST_TOKENS 30 /* per BUCKET_FASTEST_MS: no version refills faster */
#define BUCKET_FASTEST_MS 1000

static int64_t wall_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

typedef struct race_call {
    int64_t sent_us, answered_us;
    int allowed;
    long long limit, remaining;
} race_call;

typedef struct race_client {
    int port, policy, key; /* policy 0: race-window, 1: race-bucket */
    race_call *calls;
    size_t n, cap;
    long long bad_replies;
    char first_bad[160];
    pthread_t thread;
} race_client;

static volatile int race_stop;
static const char *const race_policy[2] = {"race-window", "race-bucket"};

static void *race_client_run(void *arg) {
    race_client *me = arg;
    redisContext *ctx = port_connect(me->port);
    char key[32];
    snprintf(key, sizeof key, "race:%d:%d", me->policy, me->key);
    while (!race_stop) {
        race_call call = {.sent_us = wall_us()};
        redisReply *r = redisCommand(ctx, "RL.CHECK %s %s", race_policy[me->policy], key);
        call.answered_us = wall_us();
        long long f[6];
        /* RL.CHECK's reply: allowed, retry, reset, then the one limit's six fields. */
        if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 4 && r->element[0]->type == REDIS_REPLY_INTEGER &&
            rl_fields(r->element[3], f) && f[0] == r->element[0]->integer) {
            call.allowed = (int)f[0];
            call.limit = f[1];
            call.remaining = f[2];
            if (me->n == me->cap) {
                me->cap = me->cap ? me->cap * 2 : 4096;
                me->calls = realloc(me->calls, me->cap * sizeof *me->calls);
            }
            me->calls[me->n++] = call;
        } else if (me->bad_replies++ == 0) {
            snprintf(me->first_bad, sizeof me->first_bad, "%s", !r ? ctx->errstr : r->str ? r->str : "(not a reply of one limit)");
        }
        if (r) freeReplyObject(r);
        else break; /* the connection is gone */
    }
    redisFree(ctx);
    return NULL;
}

/* One replacement: the version set, and the wall-clock instants around its SET (it took effect in between). */
typedef struct race_set {
    int version;
    int64_t sent_us, answered_us;
} race_set;

static void race_set_version(redisContext *ctx, int policy, int v, race_set *out) {
    out->version = v;
    out->sent_us = wall_us();
    if (policy == 0)
        CHECK(cmd_status_is(ctx, "OK", "RL.POLICY SET race-window LIMIT win WINDOW %lld %d FIXED", window_limit[v],
                            RACE_WINDOW_MS));
    else
        CHECK(cmd_status_is(ctx, "OK", "RL.POLICY SET race-bucket LIMIT burst TOKEN %lld %lld %lld", bucket_capacity[v],
                            bucket_tokens[v], bucket_period_ms[v]));
    out->answered_us = wall_us();
}

/* The calls of one key, from every client that called it, in one array. */
typedef struct key_calls {
    race_call *calls;
    size_t n;
} key_calls;

static key_calls gather(race_client *clients, int policy, int key) {
    key_calls k = {0};
    for (int i = 0; i < RACE_CLIENTS; i++)
        if (clients[i].policy == policy && clients[i].key == key) k.n += clients[i].n;
    k.calls = malloc((k.n ? k.n : 1) * sizeof *k.calls);
    size_t at = 0;
    for (int i = 0; i < RACE_CLIENTS; i++)
        if (clients[i].policy == policy && clients[i].key == key) {
            memcpy(k.calls + at, clients[i].calls, clients[i].n * sizeof *k.calls);
            at += clients[i].n;
        }
    return k;
}

/* Which replacement interval a call surely fell in: interval i runs from SET i's answer to SET i+1's sending
 * (the last to the end of the traffic), under version sets[i].version. -1 when the call overlapped a SET. */
static int interval_of(const race_call *c, const race_set *sets, int nsets) {
    for (int i = 0; i < nsets; i++) {
        int64_t from = sets[i].answered_us, to = i + 1 < nsets ? sets[i + 1].sent_us : INT64_MAX;
        if (c->sent_us >= from && c->answered_us <= to) return i;
    }
    return -1;
}

/* Which fixed window (of RACE_WINDOW_MS, epoch-aligned) a call surely fell in; -1 if it straddled a boundary. */
static long long window_of(const race_call *c) {
    long long w = RACE_WINDOW_MS * 1000LL, a = c->sent_us / w, b = c->answered_us / w;
    return a == b ? a : -1;
}

static int version_of_limit(long long limit, const long long *values) {
    for (int v = 0; v < RACE_VERSIONS; v++)
        if (values[v] == limit) return v;
    return -1;
}

/* Every reply is one of the versions' (no call saw a torn or unknown policy), and an admitted one left
 * 0 .. limit-1: one check per key. */
static void check_replies_are_versions(const key_calls *k, const long long *limits, const char *what) {
    long long bad = 0;
    for (size_t i = 0; i < k->n; i++) {
        const race_call *c = &k->calls[i];
        int ok = version_of_limit(c->limit, limits) >= 0 &&
                 (c->allowed ? c->remaining >= 0 && c->remaining < c->limit : c->remaining >= 0 && c->remaining <= c->limit);
        if (!ok && bad++ < 3)
            fprintf(stderr, "     %s: reply allowed %d limit %lld remaining %lld\n", what, c->allowed, c->limit, c->remaining);
    }
    CHECK_EQ(bad, 0);
}

/* race-window, one key.
 *
 * Model: with every version's window of the same 1000 ms on the same epoch-aligned grid, a version keeps the
 * key's count (same name, same kind: the state is kept and read under the new limit) and admits a call iff
 * count + 1 <= its L. So whatever the order of calls and replacements, the count of a window never exceeds
 * the largest L in force during it, and the units admitted in any window are at most max(L) = 80.
 * (A window length that changed would not keep that bound: the stored count moves to the window holding the
 * stored window's start, so a FIXED count may be forgotten mid-window; the versions keep the length.)
 *
 * The check counts the admitted calls that surely fell in each window (a call that straddled a boundary is
 * left out, so the count is at most the true one): <= 80.
 *
 * Against a module that reset the count at each replacement: in a window, each replacement interval would
 * start from 0 and admit min(calls in it, L of its version); the calls surely in both (interval, window)
 * give a lower bound of what that module would have admitted from this same traffic. The check: in every
 * window the traffic covered whole, that lower bound is > 80, so such a module fails the first check. */
static void check_window_key(const key_calls *k, const race_set *sets, int nsets, int key, long long *worst) {
    char what[48];
    snprintf(what, sizeof what, "race-window key %d", key);
    check_replies_are_versions(k, window_limit, what);
    int64_t first = INT64_MAX, last = 0;
    for (size_t i = 0; i < k->n; i++) {
        if (k->calls[i].sent_us < first) first = k->calls[i].sent_us;
        if (k->calls[i].answered_us > last) last = k->calls[i].answered_us;
    }
    long long w_us = RACE_WINDOW_MS * 1000LL, w_first = first / w_us, w_last = last / w_us;
    if (!CHECK(k->n > 0 && w_last - w_first < 64)) return;
    long long admitted[64] = {0}, in_segment[64][RACE_TICKS + 1] = {{0}}, denied = 0;
    for (size_t i = 0; i < k->n; i++) {
        const race_call *c = &k->calls[i];
        long long w = window_of(c);
        denied += !c->allowed;
        if (w < 0) continue;
        admitted[w - w_first] += c->allowed;
        int s = interval_of(c, sets, nsets);
        if (s >= 0) in_segment[w - w_first][s]++;
    }
    int full_windows = 0, over = 0, reset_short = 0;
    for (long long w = w_first; w <= w_last; w++) {
        long long here = admitted[w - w_first];
        if (here > *worst) *worst = here;
        if (here > WINDOW_MAX_LIMIT && over++ < 3)
            fprintf(stderr, "     %s: %lld admitted in window %lld, more than the largest limit %d\n", what, here, w,
                    WINDOW_MAX_LIMIT);
        if (w * w_us < first || (w + 1) * w_us > last) continue; /* the traffic covered only part of it */
        full_windows++;
        long long reset_module = 0;
        for (int s = 0; s < nsets; s++) {
            long long fit = window_limit[sets[s].version];
            reset_module += in_segment[w - w_first][s] < fit ? in_segment[w - w_first][s] : fit;
        }
        if (reset_module <= WINDOW_MAX_LIMIT && reset_short++ < 3)
            fprintf(stderr, "     %s: window %lld: a resetting module would admit only %lld here\n", what, w, reset_module);
    }
    CHECK_EQ(over, 0);
    CHECK(full_windows >= 2);
    CHECK_EQ(reset_short, 0);
    CHECK(denied > 0); /* the limit bound the traffic */
}

/* race-bucket, one key.
 *
 * Model: a version keeps the key's tokens (same name and kind), capped at its capacity, and refills the time
 * since the previous write at its own rate. Over any span [a, b] of the server's clock, the tokens taken are
 * at most the tokens held at the span's first decision (<= the largest capacity, 60) plus what was refilled
 * between its decisions (<= the fastest rate, 30 per 1000 ms, times b - a), unless a state starts fresh
 * mid-span: the documented idle rule (a bucket found full under the capacity that wrote it, i.e. idle,
 * starts fresh under the new one, which may be larger). The traffic keeps every bucket drained, so that
 * never happens here, and the test checks it: a call that finds a bucket full answers remaining = limit - 1,
 * and on each key exactly one does, the key's very first call.
 *
 * The check: for every pair of admitted calls x, y, the admitted calls sent at or after x's sending and
 * answered at or before y's answer (surely decided within [x sent, y answered]) number at most
 * 60 + 30 * (y answered - x sent) / 1000 ms.
 *
 * Against a module that refilled a bucket at each replacement: each interval would start full and admit
 * min(calls in it, C of its version); the sum over the intervals, from the calls surely in each, is a lower
 * bound of what it would have admitted, and the check is that it exceeds the bound above over the whole
 * traffic. */
static int cmp_answered(const void *a, const void *b) {
    int64_t x = ((const race_call *)a)->answered_us, y = ((const race_call *)b)->answered_us;
    return x < y ? -1 : x > y;
}

static long long bucket_bound_units(int64_t span_us) { /* 60 + 30 * span / 1000 ms, rounded down */
    return BUCKET_MAX_CAPACITY + (long long)(span_us * BUCKET_FASTEST_TOKENS / (BUCKET_FASTEST_MS * 1000LL));
}

static void check_bucket_key(const key_calls *k, const race_set *sets, int nsets, int key, long long *worst_margin) {
    char what[48];
    snprintf(what, sizeof what, "race-bucket key %d", key);
    check_replies_are_versions(k, bucket_capacity, what);
    race_call *adm = malloc((k->n ? k->n : 1) * sizeof *adm);
    size_t na = 0;
    long long fills = 0, denied = 0, per_interval[RACE_TICKS + 1] = {0};
    int64_t first = INT64_MAX, last = 0;
    for (size_t i = 0; i < k->n; i++) {
        const race_call *c = &k->calls[i];
        if (c->sent_us < first) first = c->sent_us;
        if (c->answered_us > last) last = c->answered_us;
        denied += !c->allowed;
        int s = interval_of(c, sets, nsets);
        if (s >= 0) per_interval[s]++;
        if (!c->allowed) continue;
        adm[na++] = *c;
        fills += c->remaining == c->limit - 1;
    }
    if (!CHECK(fills == 1)) fprintf(stderr, "     %s: %lld calls found the bucket full (only the first may)\n", what, fills);
    qsort(adm, na, sizeof *adm, cmp_answered);
    long long over = 0;
    for (size_t x = 0; x < na; x++) {
        long long inside = 0;
        for (size_t y = 0; y < na; y++) { /* in answer order: the spans [x sent, y answered] grow */
            if (adm[y].sent_us < adm[x].sent_us) continue;
            inside++;
            long long bound = bucket_bound_units(adm[y].answered_us - adm[x].sent_us);
            if (bound - inside < *worst_margin) *worst_margin = bound - inside;
            if (inside > bound && over++ < 3)
                fprintf(stderr, "     %s: %lld admitted within %lld us, the bound is %lld\n", what, inside,
                        (long long)(adm[y].answered_us - adm[x].sent_us), bound);
        }
    }
    CHECK_EQ(over, 0);
    long long reset_module = 0;
    for (int s = 0; s < nsets; s++) {
        long long fit = bucket_capacity[sets[s].version];
        reset_module += per_interval[s] < fit ? per_interval[s] : fit;
    }
    long long whole = bucket_bound_units(last - first);
    if (!CHECK(reset_module > whole))
        fprintf(stderr, "     %s: a refilling module would admit only %lld, the bound is %lld\n", what, reset_module, whole);
    CHECK(denied > 0 && na > 0);
    free(adm);
}

/* A policy's INFO line "ratelimit_policy_<name>:calls=..,admitted=..,denied=..,shadow_denied=.." read into
 * out[4]; 1 if found. */
static int policy_counters(redisContext *ctx, const char *name, long long out[4]) {
    redisReply *r = cmd(ctx, "INFO ratelimit");
    char field[96];
    snprintf(field, sizeof field, "\nratelimit_policy_%s:", name);
    const char *p = r->type == REDIS_REPLY_STRING ? strstr(r->str, field) : NULL;
    int found = p && sscanf(p + strlen(field), "calls=%lld,admitted=%lld,denied=%lld,shadow_denied=%lld", &out[0],
                            &out[1], &out[2], &out[3]) == 4;
    freeReplyObject(r);
    return found;
}

static void test_replacement_race(void) {
    server *s = server_start(NULL); /* its clock is the real one: nothing here sets RL.CLOCK */
    redisContext *ctx = server_connect(s);
    race_set sets[2][RACE_TICKS + 1];
    race_set_version(ctx, 0, 0, &sets[0][0]);
    race_set_version(ctx, 1, 0, &sets[1][0]);
    static race_client clients[RACE_CLIENTS];
    race_stop = 0;
    for (int i = 0; i < RACE_CLIENTS; i++) {
        clients[i] = (race_client){.port = s->port, .policy = i % 2, .key = (i / 2) % RACE_KEYS};
        pthread_create(&clients[i].thread, NULL, race_client_run, &clients[i]);
    }
    for (int t = 1; t <= RACE_TICKS; t++) {
        sleep_ms(100);
        race_set_version(ctx, 0, t % RACE_VERSIONS, &sets[0][t]);
        race_set_version(ctx, 1, (t + 2) % RACE_VERSIONS, &sets[1][t]); /* C: 30, then 40, 30, 60, 15, ... */
    }
    sleep_ms(100);
    race_stop = 1;
    long long calls[2] = {0, 0}, admitted[2] = {0, 0}, bad = 0;
    for (int i = 0; i < RACE_CLIENTS; i++) {
        pthread_join(clients[i].thread, NULL);
        bad += clients[i].bad_replies;
        if (clients[i].bad_replies) fprintf(stderr, "     client %d: %s\n", i, clients[i].first_bad);
        calls[clients[i].policy] += (long long)clients[i].n;
        for (size_t c = 0; c < clients[i].n; c++) admitted[clients[i].policy] += clients[i].calls[c].allowed;
    }
    CHECK_EQ(bad, 0); /* every call answered, in the shape of a one-limit policy */

    long long worst_window = 0, worst_margin = LLONG_MAX;
    for (int key = 0; key < RACE_KEYS; key++) {
        key_calls w = gather(clients, 0, key), b = gather(clients, 1, key);
        check_window_key(&w, sets[0], RACE_TICKS + 1, key, &worst_window);
        check_bucket_key(&b, sets[1], RACE_TICKS + 1, key, &worst_margin);
        free(w.calls);
        free(b.calls);
    }
    printf("replacement race: %d replacements of each policy, 100 ms apart; race-window %lld calls, %lld admitted "
           "(at most %lld in a window, bound %d); race-bucket %lld calls, %lld admitted (closest to its bound: %lld "
           "units under)\n",
           RACE_TICKS, calls[0], admitted[0], worst_window, WINDOW_MAX_LIMIT, calls[1], admitted[1], worst_margin);

    /* The per-policy counters, kept across replacements, counted every call once. */
    for (int p = 0; p < 2; p++) {
        long long k[4];
        if (!CHECK(policy_counters(ctx, race_policy[p], k))) continue;
        CHECK_EQ(k[0], calls[p]);
        CHECK_EQ(k[1], admitted[p]);
        CHECK_EQ(k[2], calls[p] - admitted[p]);
        CHECK_EQ(k[3], 0);
    }
    /* The last SET is the policy now. */
    redisReply *g = cmd(ctx, "RL.POLICY GET race-window");
    char *words = reply_words(g), want[96];
    snprintf(want, sizeof want, "LIMIT win WINDOW %lld %d FIXED ", window_limit[RACE_TICKS % RACE_VERSIONS], RACE_WINDOW_MS);
    CHECK_STR(words, want);
    free(words);
    freeReplyObject(g);
    for (int i = 0; i < RACE_CLIENTS; i++) free(clients[i].calls);
    redisFree(ctx);
    server_stop(s);
}

/* === 2. the store across persistence, replication and failover ================================================ */

/* The store: three policies (one replaced mid-way: a limit kept, one removed, one added; one SHADOW; one with a
 * LOCKOUT that the setup triggers), and four keys checked under them, all at fixed test-clock instants, so
 * that building it twice gives the same store. Phase 1 and phase 2 are split for the replica, which gets the
 * first by full sync and the second by the replication stream. */
#define STORE_API_V1 "LIMIT second TOKEN 20 2 1000 LIMIT gone WINDOW 5 1000 FIXED"
#define STORE_API "LIMIT second TOKEN 10 2 1000 LIMIT minute WINDOW 30 60000 SUBWINDOWS 6"
#define STORE_PACE "SHADOW LIMIT drip LEAKY 5 1 500 NODELAY LIMIT day QUOTA 100 DAY OFFSET -300 LIMIT smooth SMOOTH 2.5 MAXWAIT 300"
#define STORE_LOGIN "LIMIT burst TOKEN 3 1 10000 LOCKOUT 20000 LIMIT hour WINDOW 20 3600000 FIXED"
static const char *const store_keys[] = {"s:a", "s:b", "s:p", "s:l"};
#define STORE_NKEYS 4

static void store_phase1(redisContext *ctx, transcript *t) {
    transcript_run(t, ctx, "FLUSHALL");
    transcript_run(t, ctx, "RL.POLICY FLUSH");
    transcript_run(t, ctx, "RL.POLICY SET api " STORE_API_V1);
    transcript_run(t, ctx, "RL.POLICY SET pace " STORE_PACE);
    transcript_run(t, ctx, "RL.POLICY SET login " STORE_LOGIN);
    for (int i = 0; i < 6; i++) {
        clock_set(ctx, T0 + i * 130);
        transcript_run(t, ctx, "RL.CHECK api s:a COST 2");
        transcript_run(t, ctx, "RL.CHECK pace s:p COST 3");
        transcript_run(t, ctx, "RL.CHECK login s:l"); /* three admitted, the fourth denied: locked for 20 s */
    }
}

static void store_phase2(redisContext *ctx, transcript *t) {
    transcript_run(t, ctx, "RL.POLICY SET api " STORE_API); /* "second" kept, "gone" removed, "minute" added */
    for (int i = 6; i < 10; i++) {
        clock_set(ctx, T0 + i * 130);
        transcript_run(t, ctx, "RL.CHECK api s:a");
        transcript_run(t, ctx, "RL.CHECK api s:b COST 3");
        transcript_run(t, ctx, "RL.CHECK pace s:p");
    }
    transcript_run(t, ctx, "RL.POLICY SET tmp LIMIT x TOKEN 1 1 1000");
    transcript_run(t, ctx, "RL.POLICY DEL tmp");
}

static transcript store_setup(redisContext *ctx) {
    transcript t = {0};
    store_phase1(ctx, &t);
    store_phase2(ctx, &t);
    return t;
}

/* The policies as phase 2 leaves them, set again (after a flush, or on a server that lost them). */
static void store_policies_again(redisContext *ctx) {
    CHECK(cmd_status_is(ctx, "OK", "RL.POLICY SET api " STORE_API));
    CHECK(cmd_status_is(ctx, "OK", "RL.POLICY SET pace " STORE_PACE));
    CHECK(cmd_status_is(ctx, "OK", "RL.POLICY SET login " STORE_LOGIN));
}

/* The continuation: the policies, then ten rounds of calls 2.5 s apart (through the lock's end, the token
 * refills, the sub-windows' turnover), writes and reads, a key never checked before included. */
static transcript store_continue(redisContext *ctx) {
    transcript t = {0};
    char *policies = policies_text(ctx);
    transcript_add(&t, "policies", &(redisReply){.type = REDIS_REPLY_STATUS, .str = policies});
    free(policies);
    for (int step = 0; step < 10; step++) {
        clock_set(ctx, T0 + 3000 + step * 2500LL);
        char line[64];
        snprintf(line, sizeof line, "RL.CHECK api s:a COST %d", step % 3 * 3);
        transcript_run(&t, ctx, line);
        transcript_run(&t, ctx, "RL.CHECK_RO api s:b");
        transcript_run(&t, ctx, "RL.CHECK pace s:p COST 2");
        transcript_run(&t, ctx, "RL.CHECK login s:l");
        transcript_run(&t, ctx, "RL.CHECK_RO login s:l COST 0");
        transcript_run(&t, ctx, "RL.CHECK api s:new COST 4");
    }
    return t;
}

/* What RL.CHECK_RO answers for every key at a few instants before the continuation's (it writes nothing). */
static transcript store_probe(redisContext *ctx) {
    transcript t = {0};
    for (int i = 0; i < 4; i++) {
        clock_set(ctx, T0 + 1500 + i * 777LL);
        transcript_run(&t, ctx, "RL.CHECK_RO api s:a COST 2");
        transcript_run(&t, ctx, "RL.CHECK_RO api s:b");
        transcript_run(&t, ctx, "RL.CHECK_RO pace s:p COST 3");
        transcript_run(&t, ctx, "RL.CHECK_RO login s:l");
        transcript_run(&t, ctx, "RL.CHECK_RO api s:none");
    }
    return t;
}

static transcript setup_ref, continue_ref, probe_ref;

/* Build the store on ctx and check that it was built as the reference was (one check). */
static void store_build(redisContext *ctx, const char *what) {
    transcript t = store_setup(ctx);
    check_same_transcript(&t, &setup_ref, what);
    transcript_free(&t);
}

/* One check: the continuation on ctx is the reference's. */
static void check_continues(redisContext *ctx, const char *what) {
    transcript t = store_continue(ctx);
    check_same_transcript(&t, &continue_ref, what);
    transcript_free(&t);
}

/* The reference: the store built and continued with nothing in between; it admits and denies, and locks. */
static void store_reference(redisContext *ctx) {
    setup_ref = store_setup(ctx);
    probe_ref = store_probe(ctx);
    continue_ref = store_continue(ctx);
    CHECK(strstr(setup_ref.text, "-ERR") == NULL && strstr(continue_ref.text, "-ERR") == NULL);
    CHECK(strstr(continue_ref.text, "RL.CHECK login s:l -> [0 ") != NULL); /* the lock holds for a while */
    CHECK(strstr(continue_ref.text, "RL.CHECK login s:l -> [1 ") != NULL); /* then ends */
    CHECK(strstr(continue_ref.text, "RL.CHECK api s:a COST 6 -> [1 ") != NULL);
    CHECK(strstr(continue_ref.text, "RL.CHECK api s:a COST 6 -> [0 ") != NULL); /* "minute" runs out */
}

static void test_reload_restart_flushall(server *s, redisContext **ctx) {
    store_build(*ctx, "setup before DEBUG RELOAD");
    CHECK(cmd_status_is(*ctx, "OK", "DEBUG RELOAD"));
    check_continues(*ctx, "after DEBUG RELOAD");

    store_build(*ctx, "setup before SAVE");
    CHECK(cmd_status_is(*ctx, "OK", "SAVE"));
    *ctx = server_shutdown_restart(s, *ctx); /* SHUTDOWN NOSAVE: what loads is SAVE's RDB */
    check_continues(*ctx, "after SAVE and a restart");

    /* FLUSHALL: the keys go, the policies stay, exactly: the continuation is that of the same policies set on an
     * empty server. */
    store_build(*ctx, "setup before FLUSHALL");
    char *before = policies_text(*ctx);
    CHECK(cmd_status_is(*ctx, "OK", "FLUSHALL"));
    CHECK_EQ(cmd_int(*ctx, "DBSIZE"), 0);
    char *after = policies_text(*ctx);
    CHECK_STR(after, before);
    transcript flushed = store_continue(*ctx);
    CHECK(cmd_status_is(*ctx, "OK", "FLUSHALL"));
    CHECK(cmd_status_is(*ctx, "OK", "RL.POLICY FLUSH"));
    store_policies_again(*ctx);
    transcript fresh = store_continue(*ctx);
    check_same_transcript(&flushed, &fresh, "after FLUSHALL");
    transcript_free(&flushed);
    transcript_free(&fresh);
    free(before);
    free(after);
}

/* 1 if CONFIG GET name answers value. */
static int config_is(redisContext *ctx, const char *name, const char *value) {
    redisReply *r = cmd(ctx, "CONFIG GET %s", name);
    int yes = r->type == REDIS_REPLY_ARRAY && r->elements == 2 && strcmp(r->element[1]->str, value) == 0;
    freeReplyObject(r);
    return yes;
}

/* appendonly yes with the default preamble: the AOF as written (kill -9 right after the setup), then rewritten
 * (BGREWRITEAOF: the base is an RDB, the policies its aux data). */
static void test_aof_preamble(void) {
    server *s = server_start(server_aof_always);
    redisContext *ctx = server_connect(s);
    CHECK(config_is(ctx, "aof-use-rdb-preamble", "yes")); /* the default */
    for (int round = 0; round < 2; round++) {
        store_build(ctx, round ? "setup before BGREWRITEAOF" : "setup before kill -9");
        ctx = aof_replay_round(s, ctx, round);
        check_continues(ctx, round ? "after BGREWRITEAOF (RDB preamble) and a restart" : "after an AOF replay");
    }
    redisFree(ctx);
    server_stop(s);
}

/* DUMP of every store key, to show that a restart kept them byte for byte. */
typedef struct store_dumps {
    char *d[STORE_NKEYS];
    size_t len[STORE_NKEYS];
    long long expire[STORE_NKEYS];
} store_dumps;

static store_dumps dumps_of(redisContext *ctx) {
    store_dumps x;
    for (int i = 0; i < STORE_NKEYS; i++) {
        x.d[i] = dump_key(ctx, store_keys[i], &x.len[i]);
        x.expire[i] = cmd_int(ctx, "PEXPIRETIME %s", store_keys[i]);
    }
    return x;
}

/* The known limit (docs/operations.md, docs/policies.md): with aof-use-rdb-preamble no, the AOF as written
 * replays the RL.POLICY commands, but a rewrite makes a command file of the keys alone. After a restart on it
 * the keys are all there, byte for byte, and no policy is: RL.CHECK and RL.CHECK_RO answer the no-such-policy
 * error. Set again, the policies take the keys on exactly where they were. */
static void test_aof_no_preamble(void) {
    static const char *const args[] = {"--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", "no",
                                       NULL};
    server *s = server_start(args);
    redisContext *ctx = server_connect(s);
    CHECK(config_is(ctx, "aof-use-rdb-preamble", "no"));
    store_build(ctx, "setup (no preamble) before kill -9");
    ctx = aof_replay_round(s, ctx, 0);
    check_continues(ctx, "after an AOF replay without preamble");

    store_build(ctx, "setup (no preamble) before BGREWRITEAOF");
    store_dumps before = dumps_of(ctx);
    ctx = aof_replay_round(s, ctx, 1);
    store_dumps after = dumps_of(ctx);
    CHECK_EQ(cmd_int(ctx, "DBSIZE"), STORE_NKEYS);
    for (int i = 0; i < STORE_NKEYS; i++) {
        if (!CHECK(before.d[i] && after.d[i] && before.len[i] == after.len[i] &&
                   memcmp(before.d[i], after.d[i], before.len[i]) == 0))
            fprintf(stderr, "     %s changed across the rewrite\n", store_keys[i]);
        CHECK(before.expire[i] > 0 && after.expire[i] == before.expire[i]);
        free(before.d[i]);
        free(after.d[i]);
    }
    redisReply *list = cmd(ctx, "RL.POLICY LIST");
    CHECK(list->type == REDIS_REPLY_ARRAY && list->elements == 0); /* the policies are gone */
    freeReplyObject(list);
    clock_set(ctx, T0 + 3000); /* (were a policy there, the calls below would not write at the real time) */
    CHECK(cmd_status_is(ctx, "ERR policy 'api': no such policy", "RL.CHECK api s:a"));
    CHECK(cmd_status_is(ctx, "ERR policy 'login': no such policy", "RL.CHECK_RO login s:l"));
    CHECK(cmd_status_is(ctx, "ERR policy 'pace': no such policy", "RL.CHECK pace s:p COST 2"));
    store_policies_again(ctx);
    check_continues(ctx, "after a rewrite without preamble, once the policies are set again");
    redisFree(ctx);
    server_stop(s);
}

/* Two checks: the replica holds the primary's policies, and answers every probe as the primary does at the
 * same test-clock instants. */
static void check_replica_same(redisContext *primary, redisContext *replica, const char *what) {
    char *a = policies_text(primary), *b = policies_text(replica);
    if (!CHECK(strcmp(a, b) == 0)) fprintf(stderr, "     %s: primary's policies\n%s     replica's\n%s", what, a, b);
    free(a), free(b);
    transcript p = store_probe(primary), r = store_probe(replica);
    check_same_transcript(&r, &p, what);
    transcript_free(&p);
    transcript_free(&r);
}

/* One check: RL.POLICY GET name answers the same on both (nil on both when neither has it). */
static void check_same_get(redisContext *primary, redisContext *replica, const char *name) {
    transcript a = {0}, b = {0};
    transcript_run(&a, primary, name);
    transcript_run(&b, replica, name);
    check_same_transcript(&b, &a, name);
    transcript_free(&a);
    transcript_free(&b);
}

/* A replica gets phase 1 by full sync and phase 2 by the stream; later SET, DEL and FLUSH follow; then
 * REPLICAOF NO ONE makes it a primary that continues the store exactly. */
static void test_replica_promoted(void) {
    server *ps = server_start(NULL), *rs = server_start(NULL);
    redisContext *p = server_connect(ps), *r = server_connect(rs);
    transcript t = {0};
    store_phase1(p, &t);
    CHECK(cmd_status_is(r, "OK", "REPLICAOF 127.0.0.1 %d", ps->port));
    CHECK(replica_wait_synced(r));
    check_replica_caught_up(p);
    char *a = policies_text(p), *b = policies_text(r);
    CHECK_STR(b, a); /* by the full sync */
    free(a), free(b);
    store_phase2(p, &t);
    check_same_transcript(&t, &setup_ref, "setup with a replica attached mid-way");
    transcript_free(&t);
    check_replica_caught_up(p);
    check_replica_same(p, r, "replica after full sync and stream");
    transcript probe = store_probe(r);
    check_same_transcript(&probe, &probe_ref, "the replica's probes");
    transcript_free(&probe);

    /* Later SET, DEL and FLUSH reach it. */
    CHECK(cmd_status_is(p, "OK", "RL.POLICY SET extra LIMIT w WINDOW 4 2000 SLIDING"));
    check_replica_caught_up(p);
    check_same_get(p, r, "RL.POLICY GET extra");
    CHECK_EQ(cmd_int(p, "RL.POLICY DEL extra"), 1);
    check_replica_caught_up(p);
    redisReply *g = cmd(r, "RL.POLICY GET extra");
    CHECK(g->type == REDIS_REPLY_NIL);
    freeReplyObject(g);
    CHECK(cmd_status_is(p, "OK", "RL.POLICY FLUSH"));
    check_replica_caught_up(p);
    redisReply *list = cmd(r, "RL.POLICY LIST");
    CHECK(list->type == REDIS_REPLY_ARRAY && list->elements == 0);
    freeReplyObject(list);
    CHECK_EQ(cmd_int(r, "DBSIZE"), STORE_NKEYS); /* the keys stay */
    store_policies_again(p);
    check_replica_caught_up(p);
    check_replica_same(p, r, "replica after FLUSH and SET again");

    CHECK(cmd_status_is(r, "OK", "REPLICAOF NO ONE"));
    check_continues(r, "the replica after REPLICAOF NO ONE");
    redisFree(p);
    redisFree(r);
    server_stop(rs);
    server_stop(ps);
}

/* INFO replication: 1 if ctx is a primary and no failover is under way. */
static int primary_settled(redisContext *ctx) {
    redisReply *r = cmd(ctx, "INFO replication");
    int yes = r->type == REDIS_REPLY_STRING && strstr(r->str, "role:master") &&
              (!strstr(r->str, "master_failover_state:") || strstr(r->str, "master_failover_state:no-failover"));
    freeReplyObject(r);
    return yes;
}

/* After FAILOVER on from: to is the primary, from its replica with the link up (up to 10 s). */
static int failed_over(redisContext *from, redisContext *to) {
    for (int i = 0; i < 1000; i++) {
        if (primary_settled(to) && !primary_settled(from) && replica_wait_synced(from)) return 1;
        sleep_ms(10);
    }
    return 0;
}

/* The whole store built through the stream, then FAILOVER (the primary hands over to its replica): the new
 * primary continues exactly, and the old one, now its replica, follows it. */
static void test_failover(void) {
    server *ps = server_start(NULL);
    server *rs = replica_start(ps);
    redisContext *p = server_connect(ps), *r = server_connect(rs);
    store_build(p, "setup before FAILOVER");
    check_replica_caught_up(p);
    check_replica_same(p, r, "replica before FAILOVER");
    CHECK(cmd_status_is(p, "OK", "FAILOVER"));
    CHECK(failed_over(p, r));
    check_continues(r, "the new primary after FAILOVER");
    check_replica_caught_up(r);
    check_replica_same(r, p, "the old primary, now a replica");
    redisFree(p);
    redisFree(r);
    server_stop(rs);
    server_stop(ps);
}

static void test_store(void) {
    server *s = server_start(NULL);
    redisContext *ctx = server_connect(s);
    store_reference(ctx);
    test_reload_restart_flushall(s, &ctx);
    redisFree(ctx);
    server_stop(s);
    test_aof_preamble();
    test_aof_no_preamble();
    test_replica_promoted();
    test_failover();
    transcript_free(&setup_ref);
    transcript_free(&continue_ref);
    transcript_free(&probe_ref);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_replacement_race();
    test_store();
    return check_summary("integration_policy_store");
}
