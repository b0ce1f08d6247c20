/* integration_reliability.c -- the module under stress and faults, against real redis-server processes:
 *
 *   1. many clients on one key: 50 concurrent connections admit exactly what the model says, for every
 *      algorithm, with the clock frozen and with a controller thread stepping it while clients hammer;
 *   2. durability of every kind of key (concurrency leases too: acquired with and without an ID, released,
 *      renewed, set by RL.SETSTATE): AOF (appendfsync always) + kill -9, BGREWRITEAOF + kill -9, kill -9
 *      during a rewrite, SAVE + SHUTDOWN NOSAVE, DEBUG RELOAD;
 *   3. replication to two replicas, and a replica restarted while the primary keeps deciding;
 *   4. ACL key patterns and command rules;
 *   5. maxmemory with noeviction: OOM errors for every call that would write, the server stays up;
 *   6. the clock stepping backwards: never more lenient than a clock that held still, never a key
 *      without a TTL, no extra grants (three failing checks record the ways it does grant extra; the
 *      sliding log, whose entries above now count as now, is bound by the same calls without the steps
 *      back instead of a held clock);
 *   7. idle keys expire on the real clock.
 *
 * Every part starts and stops its own servers. The closing line is
 * "integration_reliability: N passed, N failed". */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "server.h"

#define T0 1700000000000LL /* a frozen test-clock instant (ms); a multiple of every window used here */
#define HOUR_MS 3600000LL  /* the extra TTL keys get while the clock is frozen */
#define NCLIENTS 50

/* Figures for the final report. */
static long long stat_calls, stat_faults, stat_servers;

/* --- small tools --------------------------------------------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnd(rng *r) { /* splitmix64: deterministic, good enough for schedules */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static long long rnd_in(rng *r, long long lo, long long hi) { /* inclusive */
    return lo + (long long)(rnd(r) % (uint64_t)(hi - lo + 1));
}

static server *start(const char *const *extra) {
    stat_servers++;
    return server_start(extra);
}

static void ok_cmd(redisContext *c, const char *line) {
    redisReply *r = cmdline(c, "%s", line);
    if (!CHECK(reply_is_status(r, "OK"))) fprintf(stderr, "     %s -> %s\n", line, r->str ? r->str : "(not a string)");
    freeReplyObject(r);
}

static void clock_set(redisContext *c, long long ms) {
    char line[64];
    snprintf(line, sizeof line, "RL.CLOCK SET %lld", ms);
    ok_cmd(c, line);
}

/* --- key and database snapshots -------------------------------------------------------------------------
 * A key's state: DUMP for the module's types and plain types, and for a sorted set (the sliding log) its
 * members and scores, since DUMP also carries the encoding (listpack or skiplist), which a reload or a
 * replica may choose differently for the same set. Plus the absolute expiry. */

typedef struct kstate {
    char *key;
    char type[16];
    char *data;
    size_t len;
    long long pexpiretime;
} kstate;

typedef struct dbsnap {
    kstate *k;
    size_t n;
} dbsnap;

static void buf_add(char **buf, size_t *len, size_t *cap, const char *s, size_t n) {
    while (*len + n + 8 > *cap) {
        *cap = *cap ? *cap * 2 : 256;
        *buf = realloc(*buf, *cap);
    }
    memcpy(*buf + *len, &n, sizeof n); /* length-prefixed, so no two different lists serialize alike */
    *len += sizeof n;
    memcpy(*buf + *len, s, n);
    *len += n;
}

static void key_state(redisContext *c, const char *key, kstate *out) {
    memset(out, 0, sizeof *out);
    out->key = strdup(key);
    redisReply *t = cmd(c, "TYPE %s", key);
    snprintf(out->type, sizeof out->type, "%s", t->str ? t->str : "?");
    freeReplyObject(t);
    if (strcmp(out->type, "zset") == 0) {
        redisReply *z = cmd(c, "ZRANGE %s 0 -1 WITHSCORES", key);
        size_t cap = 0;
        for (size_t i = 0; z->type == REDIS_REPLY_ARRAY && i < z->elements; i++)
            buf_add(&out->data, &out->len, &cap, z->element[i]->str, z->element[i]->len);
        freeReplyObject(z);
    } else if (strcmp(out->type, "none") != 0) {
        out->data = dump_key(c, key, &out->len);
    }
    out->pexpiretime = cmd_int(c, "PEXPIRETIME %s", key);
}

static int kstate_equal(const kstate *a, const kstate *b) {
    return strcmp(a->type, b->type) == 0 && a->len == b->len && a->pexpiretime == b->pexpiretime &&
           (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static int cmp_kstate(const void *a, const void *b) {
    return strcmp(((const kstate *)a)->key, ((const kstate *)b)->key);
}

static dbsnap db_snapshot(redisContext *c) {
    redisReply *keys = cmd(c, "KEYS *");
    dbsnap s = {calloc(keys->elements + 1, sizeof(kstate)), keys->elements};
    for (size_t i = 0; i < keys->elements; i++) key_state(c, keys->element[i]->str, &s.k[i]);
    freeReplyObject(keys);
    qsort(s.k, s.n, sizeof *s.k, cmp_kstate);
    return s;
}

static void db_free(dbsnap *s) {
    for (size_t i = 0; i < s->n; i++) {
        free(s->k[i].key);
        free(s->k[i].data);
    }
    free(s->k);
    s->k = NULL;
    s->n = 0;
}

/* 1 if both hold the same keys in the same states; says which key differs first. */
static int db_equal(const dbsnap *a, const dbsnap *b, const char *what) {
    if (a->n != b->n) {
        fprintf(stderr, "     %s: %zu keys vs %zu keys\n", what, a->n, b->n);
        for (size_t i = 0, j = 0; i < a->n || j < b->n;) { /* both sorted by key: show the difference */
            int d = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->k[i].key, b->k[j].key);
            if (d <= 0 && d != 0) {
                fprintf(stderr, "       only in the first: %s (%s)\n", a->k[i].key, a->k[i].type);
                i++;
            } else if (d > 0) {
                fprintf(stderr, "       only in the second: %s (%s)\n", b->k[j].key, b->k[j].type);
                j++;
            } else {
                i++;
                j++;
            }
        }
        return 0;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (strcmp(a->k[i].key, b->k[i].key) != 0 || !kstate_equal(&a->k[i], &b->k[i])) {
            fprintf(stderr, "     %s: key %s differs (type %s/%s, expiry %lld/%lld, %zu/%zu bytes)\n", what,
                    a->k[i].key, a->k[i].type, b->k[i].type, a->k[i].pexpiretime, b->k[i].pexpiretime, a->k[i].len,
                    b->k[i].len);
            return 0;
        }
    }
    return 1;
}

/* --- mixed calls on every kind of key ---------------------------------------------------------------- */

typedef struct family {
    const char *cmd, *tag, *params;
} family;

static const family families[] = {
    {"RL.TOKEN", "tok", "20 3 1000"},
    {"RL.TOKEN", "tint", "10 5 2000 INTERVAL"},
    {"RL.LEAKY", "leak", "8 2 1000"},
    {"RL.LEAKY", "lnd", "8 2 1000 NODELAY"},
    {"RL.WINDOW", "wfx", "15 1000 FIXED"},
    {"RL.WINDOW", "wsl", "15 1000 SLIDING"},
    {"RL.WINDOW", "wsub", "15 1200 SUBWINDOWS 6"},
    {"RL.SLIDINGLOG", "log", "6 800"},
    {"RL.SLIDINGLOG", "lgap", "6 800 MINGAP 40"},
    {"RL.SMOOTH", "smb", "5.5 MAXBURST 2000 MAXWAIT 1500"},
    {"RL.SMOOTH", "smw", "2.25 WARMUP 3000 COLDFACTOR 2.5"},
    {"RL.ACQUIRE", "acq", "5 20000"}, /* its calls sometimes name their lease; RL.RELEASE and RL.RENEW come too */
};
#define NFAMILIES ((int)(sizeof families / sizeof families[0]))

/* The lease ids a mixer's calls name: a few of its own, and the ones the module made (kept from replies). */
#define MADE_IDS 16
typedef struct made_id {
    char key[48], id[64];
} made_id;

typedef struct mixer {
    rng r;
    const char *prefix;
    int nkeys;
    long long clock_ms; /* the frozen clock, as this mixer moved it */
    long long calls, bad;
    char pending[256][48]; /* the key of each RL.ACQUIRE appended and not yet drained ("" for other commands) */
    int npending;
    made_id made[MADE_IDS];
    unsigned nmade;
    long long leases, released; /* leases taken, and releases or renewals that found theirs */
} mixer;

/* The six common fields of a limiter's reply: six integers, or RL.ACQUIRE's seven (the lease last: a bulk
 * string or nil). Returns 1 and the lease (NULL when nil) if the reply has that shape. */
static int common_fields(const redisReply *r, long long f[6], const redisReply **lease) {
    *lease = NULL;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 7) {
        const redisReply *l = r->element[6];
        if (l->type != REDIS_REPLY_STRING && l->type != REDIS_REPLY_NIL) return 0;
        redisReply six = *r;
        six.elements = 6;
        if (l->type == REDIS_REPLY_STRING) *lease = l;
        return rl_fields(&six, f);
    }
    return rl_fields(r, f);
}

static void mixer_note(mixer *m, const char *key) {
    if (m->npending < 256) snprintf(m->pending[m->npending], sizeof m->pending[0], "%s", key ? key : "");
    m->npending++;
}

/* A lease id for a call on key: one of the mixer's own names, or one the module made on that key. */
static void lease_id(mixer *m, const char *key, char *out, size_t n) {
    if (rnd(&m->r) % 2 && m->nmade) {
        for (int tries = 0; tries < 4; tries++) {
            const made_id *made = &m->made[rnd(&m->r) % (m->nmade < MADE_IDS ? m->nmade : MADE_IDS)];
            if (strcmp(made->key, key) == 0) {
                snprintf(out, n, "%s", made->id);
                return;
            }
        }
    }
    snprintf(out, n, "j%d", (int)(rnd(&m->r) % 4));
}

/* A lease key's state by hand (the layout of module/lease_type.c, little-endian): 'C', the count, each lease (end µs, acquired µs, units, id length, id), the expiry (ms, far in the future). */
static void append_lease_state(mixer *m, redisContext *c, const char *key) {
    unsigned char b[128];
    size_t n = 0;
    b[n++] = 'C';
    int count = 1 + (int)(rnd(&m->r) % 3);
    for (int k = 0; k < 4; k++) b[n++] = (unsigned char)((uint64_t)count >> (8 * k));
    uint64_t end = (uint64_t)m->clock_ms * 1000;
    for (int i = 0; i < count; i++) {
        end += (uint64_t)rnd_in(&m->r, 1, 2000000);
        uint64_t lease[] = {end, (uint64_t)m->clock_ms * 1000, 1};
        for (int k = 0; k < 8; k++) b[n++] = (unsigned char)(lease[0] >> (8 * k));
        for (int k = 0; k < 8; k++) b[n++] = (unsigned char)(lease[1] >> (8 * k));
        for (int k = 0; k < 4; k++) b[n++] = (unsigned char)(lease[2] >> (8 * k));
        b[n++] = 2;
        b[n++] = 's';
        b[n++] = (unsigned char)('0' + i);
    }
    uint64_t expiry = 4102444800000ULL;
    for (int k = 0; k < 8; k++) b[n++] = (unsigned char)(expiry >> (8 * k));
    redisAppendCommand(c, "RL.SETSTATE %s %b", key, (const char *)b, n);
}

/* Append one mixed call (sometimes preceded by a clock advance) to the pipeline; returns how many
 * commands were appended. */
static int mixer_append(mixer *m, redisContext *c) {
    int n = 0;
    if (rnd(&m->r) % 3 == 0) {
        long long step = rnd_in(&m->r, 0, 300);
        cmdline_append(c, "RL.CLOCK ADVANCE %lld", step);
        mixer_note(m, NULL);
        m->clock_ms += step;
        n++;
    }
    if (rnd(&m->r) % 20 == 0) {
        /* RL.SETSTATE sent by a client (replicated verbatim): a valid state of each kind, with or without
         * an absolute expiry (far in the future in real time). */
        int k = (int)(rnd(&m->r) % 8);
        if (rnd(&m->r) % 4 == 0) { /* leases, on a key the lease calls use */
            char key[64];
            snprintf(key, sizeof key, "%s:acq:%d", m->prefix, (int)(rnd(&m->r) % (uint64_t)m->nkeys));
            append_lease_state(m, c, key);
            mixer_note(m, NULL);
            m->calls++;
            return n + 1;
        }
        long long us = m->clock_ms * 1000;
        if (k >= 6) { /* RL.SMOOTH's six words: bursty 5.5/s over 2 s, 3.0 stored (its binary64 bits) */
            cmdline_append(c, "RL.SETSTATE %s:set:%d SMOOTH 1 5500000 2000 0 4613937818241073152 %lld%s", m->prefix, k,
                           us + rnd_in(&m->r, 0, 1000000), k == 6 ? " PXAT 4102444800000" : "");
            mixer_note(m, NULL);
            m->calls++;
            return n + 1;
        }
        static const char *const kinds[] = {"TOKEN", "LEAKY", "WINDOW"};
        long long w0 = k % 3 == 2 ? 0 : us + rnd_in(&m->r, 0, 5000000), w1 = rnd_in(&m->r, 0, 9);
        cmdline_append(c, "RL.SETSTATE %s:set:%d %s %lld %lld%s", m->prefix, k, kinds[k % 3], w0, w1,
                       k < 3 ? " PXAT 4102444800000" : "");
        mixer_note(m, NULL);
        m->calls++;
        return n + 1;
    }
    const family *f = &families[rnd(&m->r) % NFAMILIES];
    int key = (int)(rnd(&m->r) % (uint64_t)m->nkeys);
    int lease = strcmp(f->cmd, "RL.ACQUIRE") == 0;
    char keyname[48], id[64];
    snprintf(keyname, sizeof keyname, "%s:%s:%d", m->prefix, f->tag, key);
    if (lease && rnd(&m->r) % 3 == 0) { /* give a lease back, or renew one (found or not) */
        lease_id(m, keyname, id, sizeof id);
        if (rnd(&m->r) % 2) cmdline_append(c, "RL.RELEASE %s %s", keyname, id);
        else cmdline_append(c, "RL.RENEW %s %s %lld", keyname, id, rnd_in(&m->r, 100, 3000));
        mixer_note(m, NULL);
        m->calls++;
        return n + 1;
    }
    long long cost = rnd_in(&m->r, strcmp(f->cmd, "RL.SMOOTH") == 0 || lease ? 1 : 0, 3); /* some need COST >= 1 */
    id[0] = '\0';
    if (lease && rnd(&m->r) % 2) {
        memcpy(id, " ID ", 4);
        lease_id(m, keyname, id + 4, sizeof id - 4);
    }
    cmdline_append(c, "%s %s %s COST %lld%s%s", f->cmd, keyname, f->params, cost, id, rnd(&m->r) % 10 == 0 ? " DRYRUN" : "");
    mixer_note(m, lease ? keyname : NULL);
    m->calls++;
    return n + 1;
}

/* Read n replies: each must be OK (a clock step, a state set), a six-field reply (seven for RL.ACQUIRE, whose
 * lease id, when the module made it, is kept for later calls), or 0 or 1 (RL.RELEASE, RL.RENEW). */
static void mixer_drain(mixer *m, redisContext *c, int n) {
    for (int i = 0; i < n; i++) {
        redisReply *r = next_reply(c);
        long long f[6];
        const redisReply *lease;
        const char *key = i < m->npending && i < 256 ? m->pending[i] : "";
        int ok = reply_is_status(r, "OK") || (r->type == REDIS_REPLY_INTEGER && (r->integer == 0 || r->integer == 1));
        if (!ok && common_fields(r, f, &lease)) ok = key[0] ? r->elements == 7 : r->elements == 6;
        if (ok && key[0] && lease) {
            m->leases++;
            if (lease->len < sizeof m->made[0].id && !(lease->len == 2 && lease->str[0] == 'j')) {
                made_id *made = &m->made[m->nmade++ % MADE_IDS];
                snprintf(made->key, sizeof made->key, "%s", key);
                snprintf(made->id, sizeof made->id, "%.*s", (int)lease->len, lease->str);
            }
        }
        if (r->type == REDIS_REPLY_INTEGER && r->integer == 1) m->released++;
        if (!ok) {
            m->bad++;
            if (m->bad < 5) fprintf(stderr, "     unexpected reply: %s\n", r->str ? r->str : "(not a string)");
        }
        freeReplyObject(r);
    }
    m->npending = 0;
}

static void mixer_run(mixer *m, redisContext *c, int calls) {
    while (calls > 0) {
        int batch = calls < 100 ? calls : 100, pending = 0;
        for (int i = 0; i < batch; i++) pending += mixer_append(m, c);
        mixer_drain(m, c, pending);
        calls -= batch;
    }
}

/* What every key would answer now (COST 1 DRYRUN changes nothing): to check that a reloaded limiter
 * decides as the original. */
static long long *probe_all(redisContext *c, const mixer *m) {
    long long *out = calloc((size_t)(NFAMILIES * m->nkeys * 6), sizeof *out);
    for (int fi = 0; fi < NFAMILIES; fi++)
        for (int k = 0; k < m->nkeys; k++) {
            cmdline_append(c, "%s %s:%s:%d %s COST 1 DRYRUN", families[fi].cmd, m->prefix, families[fi].tag, k,
                           families[fi].params);
        }
    for (int i = 0; i < NFAMILIES * m->nkeys; i++) {
        redisReply *r = next_reply(c);
        const redisReply *lease;
        if (!common_fields(r, out + 6 * i, &lease)) out[6 * i] = -99;
        freeReplyObject(r);
    }
    return out;
}

static int probes_equal(const long long *a, const long long *b, const mixer *m) {
    return memcmp(a, b, (size_t)(NFAMILIES * m->nkeys * 6) * sizeof *a) == 0;
}

/* === 1. many clients, one key ============================================================================ */

typedef struct hammer_arg {
    int port;
    int argc;
    const char **argv;
    size_t *lens;
    int attempts;
    long long cost;      /* for the consistency check of denied replies */
    long long admitted, admitted_cost, denied_inconsistent, errors;
    long long *waits;    /* wait_ms of admitted replies (RL.LEAKY shaping), may be NULL */
    long long nwaits;
} hammer_arg;

static void *hammer_thread(void *p) {
    hammer_arg *a = p;
    redisContext *c = port_connect(a->port);
    for (int done = 0; done < a->attempts;) {
        int batch = a->attempts - done < 5 ? a->attempts - done : 5; /* small pipelines: more interleaving */
        for (int i = 0; i < batch; i++) redisAppendCommandArgv(c, a->argc, a->argv, a->lens);
        for (int i = 0; i < batch; i++) {
            redisReply *r = next_reply(c);
            rl_result f = rl_of(r);
            if (!f.ok) {
                a->errors++;
            } else if (f.allowed == 1) {
                a->admitted++;
                a->admitted_cost += a->cost;
                if (a->waits) a->waits[a->nwaits++] = f.wait_ms;
            } else if (f.remaining >= a->cost) {
                a->denied_inconsistent++; /* denied although the reply says the cost would fit */
            }
            freeReplyObject(r);
        }
        done += batch;
    }
    redisFree(c);
    return NULL;
}

/* NCLIENTS threads each send `attempts` copies of the line (with " COST n" per thread if costs). */
typedef struct hammer_result {
    long long admitted, admitted_cost, errors, denied_inconsistent, attempts;
    long long *waits;
    long long nwaits;
} hammer_result;

static hammer_result hammer(const server *s, const char *line, int attempts, int mixed_costs, int want_waits) {
    pthread_t th[NCLIENTS];
    hammer_arg args[NCLIENTS];
    char lines[NCLIENTS][256];
    const char *argvs[NCLIENTS][24];
    size_t lens[NCLIENTS][24];
    hammer_result res = {0};
    if (want_waits) res.waits = calloc((size_t)NCLIENTS * (size_t)attempts, sizeof *res.waits);
    long long *waits[NCLIENTS];
    for (int i = 0; i < NCLIENTS; i++) {
        long long cost = mixed_costs ? 1 + i % 4 : 1;
        snprintf(lines[i], sizeof lines[i], "%s COST %lld", line, cost);
        int n = split_words(lines[i], argvs[i], lens[i], 24);
        waits[i] = want_waits ? calloc((size_t)attempts, sizeof(long long)) : NULL;
        args[i] = (hammer_arg){.port = s->port, .argc = n, .argv = argvs[i], .lens = lens[i], .attempts = attempts,
                               .cost = cost, .waits = waits[i]};
    }
    for (int i = 0; i < NCLIENTS; i++) pthread_create(&th[i], NULL, hammer_thread, &args[i]);
    for (int i = 0; i < NCLIENTS; i++) {
        pthread_join(th[i], NULL);
        res.admitted += args[i].admitted;
        res.admitted_cost += args[i].admitted_cost;
        res.errors += args[i].errors;
        res.denied_inconsistent += args[i].denied_inconsistent;
        res.attempts += attempts;
        if (want_waits) {
            memcpy(res.waits + res.nwaits, waits[i], (size_t)args[i].nwaits * sizeof(long long));
            res.nwaits += args[i].nwaits;
        }
        free(waits[i]);
    }
    stat_calls += res.attempts;
    return res;
}

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* The clients send line attempts times each: no errors, exactly `admitted` admitted (two checks), and
 * with wait_step_ms > 0 the waits are 0, wait_step_ms, 2 wait_step_ms, ..., each given to exactly one
 * client (a third). */
static void check_admits_exactly(const server *s, const char *line, int attempts, long long admitted,
                                 long long wait_step_ms) {
    hammer_result h = hammer(s, line, attempts, 0, wait_step_ms > 0);
    CHECK_EQ(h.errors, 0);
    CHECK_EQ(h.admitted, admitted);
    if (wait_step_ms <= 0) return;
    qsort(h.waits, (size_t)h.nwaits, sizeof *h.waits, cmp_ll);
    int waits_ok = h.nwaits == admitted;
    for (long long i = 0; waits_ok && i < h.nwaits; i++) waits_ok = h.waits[i] == wait_step_ms * i;
    if (!CHECK(waits_ok)) fprintf(stderr, "     %s: the waits are not 0, %lld, ... one each\n", line, wait_step_ms);
    free(h.waits);
}

static void test_many_clients_frozen(void) {
    server *s = start(NULL);
    redisContext *c = server_connect(s);

    /* Token bucket, real clock, a refill of 1 token per 10^9 ms: exactly the capacity is admitted. */
    check_admits_exactly(s, "RL.TOKEN mc:tok 1000 1 1000000000", 60, 1000, 0);
    rl_result r = rl(c, "RL.TOKEN mc:tok 1000 1 1000000000 COST 0 DRYRUN");
    CHECK_EQ(r.remaining, 0);

    /* Mixed costs 1..4: what was taken plus what is left is the capacity; no denial while it fit. */
    hammer_result h = hammer(s, "RL.TOKEN mc:tokc 1000 1 1000000000", 40, 1, 0);
    r = rl(c, "RL.TOKEN mc:tokc 1000 1 1000000000 COST 0 DRYRUN");
    CHECK_EQ(h.errors, 0);
    CHECK_EQ(h.admitted_cost + r.remaining, 1000);
    CHECK_EQ(h.denied_inconsistent, 0);

    clock_set(c, T0);
    /* Fixed and sliding windows on a frozen clock: one window, exactly the limit. */
    check_admits_exactly(s, "RL.WINDOW mc:wfx 777 60000 FIXED", 40, 777, 0);
    check_admits_exactly(s, "RL.WINDOW mc:wsl 777 60000 SLIDING", 40, 777, 0);

    /* Leaky bucket policing: exactly the capacity. */
    check_admits_exactly(s, "RL.LEAKY mc:lnd 600 1 1000 NODELAY", 40, 600, 0);

    /* Leaky bucket shaping, 1 unit per 10 ms: exactly the capacity, and the waits are 0, 10, ..., 2990,
     * each given to exactly one client. */
    check_admits_exactly(s, "RL.LEAKY mc:lsh 300 1 10", 20, 300, 10);

    /* Sliding log: exactly the limit admitted; the log holds limit + 1 units, all at the frozen instant, in
     * the one member of that instant (weight 301, running total 300). */
    check_admits_exactly(s, "RL.SLIDINGLOG mc:log 300 10000", 20, 300, 0);
    CHECK_EQ(cmd_int(c, "ZCARD mc:log"), 1);
    redisReply *z = cmd(c, "ZRANGE mc:log 0 -1 WITHSCORES");
    int scores_ok = z->type == REDIS_REPLY_ARRAY && z->elements == 2 &&
                    strcmp(z->element[0]->str, "1700000000000000-0:301:300:0") == 0 &&
                    strcmp(z->element[1]->str, "1700000000000000") == 0;
    CHECK(scores_ok);
    freeReplyObject(z);
    r = rl(c, "RL.SLIDINGLOG mc:log 300 10000 COST 0 DRYRUN");
    CHECK(r.ok && r.allowed == 0 && r.remaining == 0);

    /* Guava's RateLimiter at 10/s with nothing stored (MAXBURST 0), MAXWAIT 29999 ms: every reservation
     * gets its own ticket, 100 ms after the one before, so exactly 300 are granted, with waits 0, 100, ...,
     * 29900, each given to exactly one client. */
    check_admits_exactly(s, "RL.SMOOTH mc:sm 10 MAXBURST 0 MAXWAIT 29999", 20, 300, 100);

    redisFree(c);
    server_stop(s);
}

/* --- the clock stepped by a controller while 50 clients hammer five limiters ----------------------------
 * Each client sends MULTI, RL.CLOCK GET, the five commands, EXEC: the transaction runs atomically, so GET
 * tells the exact instant of the five decisions. Attempts at one instant are interchangeable (cost 1), so
 * the exact number each limiter must admit at each instant follows from the number of attempts there;
 * a small model of each algorithm computes it, and it must match the replies instant by instant. */

#define STEP_TOK_C 20 /* token bucket: 20, 1 token per 10 ms */
#define STEP_TOK_P 10
#define STEP_LK_C 15 /* leaky NODELAY: 15, 1 unit per 7 ms */
#define STEP_LK_P 7
#define STEP_W_L 25 /* windows: 25 per 100 ms */
#define STEP_W_W 100
#define STEP_LOG_L 10 /* sliding log: 10 per 50 ms */
#define STEP_LOG_W 50
#define STEP_NALG 5

static const char *const step_cmds[STEP_NALG] = {
    "RL.TOKEN st:tok 20 1 10", "RL.LEAKY st:lnd 15 1 7 NODELAY", "RL.WINDOW st:wfx 25 100 FIXED",
    "RL.WINDOW st:wsl 25 100 SLIDING", "RL.SLIDINGLOG st:log 10 50"};

typedef struct step_rec {
    long long t;
    unsigned char allowed[STEP_NALG];
} step_rec;

typedef struct step_client {
    int port;
    atomic_int *stop;
    step_rec *recs;
    long long n, cap, errors;
} step_client;

static void *step_client_thread(void *p) {
    step_client *a = p;
    redisContext *c = port_connect(a->port);
    while (!atomic_load(a->stop)) {
        cmdline_append(c, "MULTI");
        cmdline_append(c, "RL.CLOCK GET");
        for (int i = 0; i < STEP_NALG; i++) cmdline_append(c, "%s", step_cmds[i]);
        cmdline_append(c, "EXEC");
        for (int i = 0; i < STEP_NALG + 2; i++) freeReplyObject(next_reply(c)); /* OK, QUEUED... */
        redisReply *x = next_reply(c);
        if (!reply_is_array(x, STEP_NALG + 1) || x->element[0]->type != REDIS_REPLY_INTEGER) {
            a->errors++;
        } else {
            if (a->n == a->cap) {
                a->cap = a->cap ? 2 * a->cap : 1024;
                a->recs = realloc(a->recs, (size_t)a->cap * sizeof *a->recs);
            }
            step_rec *rec = &a->recs[a->n++];
            rec->t = x->element[0]->integer;
            for (int i = 0; i < STEP_NALG; i++) {
                rl_result f = rl_of(x->element[i + 1]);
                if (!f.ok) a->errors++;
                rec->allowed[i] = (unsigned char)(f.allowed == 1);
            }
        }
        freeReplyObject(x);
    }
    redisFree(c);
    return NULL;
}

static int cmp_rec(const void *a, const void *b) {
    long long x = ((const step_rec *)a)->t, y = ((const step_rec *)b)->t;
    return x < y ? -1 : x > y;
}

typedef struct step_model {
    long long last_t;
    int started;
    long long tok;           /* token bucket: tokens * P (ms units) */
    long long lk;            /* leaky: level * P */
    long long wfx_k, wfx_c;  /* fixed window: index, count */
    long long wsl_k, wsl_c, wsl_p;
    long long *log;          /* sliding log: every attempt's time */
    long long nlog, caplog;
} step_model;

/* Expected admissions at instant t for n attempts, per algorithm. */
static void step_model_run(step_model *m, long long t, long long n, long long expect[STEP_NALG]) {
    if (!m->started) {
        m->started = 1;
        m->tok = STEP_TOK_C * STEP_TOK_P;
        m->lk = 0;
        m->wfx_k = m->wsl_k = t / STEP_W_W;
        m->wfx_c = m->wsl_c = m->wsl_p = 0;
    } else {
        long long dt = t - m->last_t;
        m->tok += dt;
        if (m->tok > STEP_TOK_C * STEP_TOK_P) m->tok = STEP_TOK_C * STEP_TOK_P;
        m->lk = m->lk > dt ? m->lk - dt : 0;
    }
    m->last_t = t;
    long long k = t / STEP_W_W, e = t % STEP_W_W;
    if (k != m->wfx_k) m->wfx_k = k, m->wfx_c = 0;
    if (k == m->wsl_k + 1) {
        m->wsl_p = m->wsl_c;
        m->wsl_c = 0;
    } else if (k != m->wsl_k) {
        m->wsl_p = m->wsl_c = 0;
    }
    m->wsl_k = k;
    long long in_window = 0;
    for (long long i = 0; i < m->nlog; i++) in_window += m->log[i] > t - STEP_LOG_W;
    memset(expect, 0, STEP_NALG * sizeof *expect);
    for (long long a = 0; a < n; a++) {
        if (m->tok >= STEP_TOK_P) m->tok -= STEP_TOK_P, expect[0]++;
        if (m->lk + STEP_LK_P <= STEP_LK_C * STEP_LK_P) m->lk += STEP_LK_P, expect[1]++;
        if (m->wfx_c + 1 <= STEP_W_L) m->wfx_c++, expect[2]++;
        if (m->wsl_p * (STEP_W_W - e) + (m->wsl_c + 1) * STEP_W_W <= STEP_W_L * STEP_W_W) m->wsl_c++, expect[3]++;
        if (in_window + 1 <= STEP_LOG_L) expect[4]++;
        in_window++; /* a blocked attempt is logged too */
        if (m->nlog == m->caplog) {
            m->caplog = m->caplog ? 2 * m->caplog : 1024;
            m->log = realloc(m->log, (size_t)m->caplog * sizeof *m->log);
        }
        m->log[m->nlog++] = t;
    }
}

typedef struct controller_arg {
    int port;
    atomic_int *stop;
    long long steps;
} controller_arg;

static void *controller_thread(void *p) {
    controller_arg *a = p;
    redisContext *c = port_connect(a->port);
    rng r = {42};
    for (int i = 0; i < 400; i++) {
        redisReply *x = cmd(c, "RL.CLOCK ADVANCE %lld", rnd_in(&r, 1, 25));
        freeReplyObject(x);
        a->steps++;
        sleep_ms(2);
    }
    atomic_store(a->stop, 1);
    redisFree(c);
    return NULL;
}

static void test_many_clients_stepped_clock(void) {
    server *s = start(NULL);
    redisContext *c = server_connect(s);
    clock_set(c, T0);
    atomic_int stop = 0;
    step_client clients[NCLIENTS];
    pthread_t th[NCLIENTS], ctl;
    controller_arg ca = {s->port, &stop, 0};
    for (int i = 0; i < NCLIENTS; i++) {
        clients[i] = (step_client){.port = s->port, .stop = &stop};
        pthread_create(&th[i], NULL, step_client_thread, &clients[i]);
    }
    pthread_create(&ctl, NULL, controller_thread, &ca);
    pthread_join(ctl, NULL);
    long long total = 0, errors = 0;
    for (int i = 0; i < NCLIENTS; i++) {
        pthread_join(th[i], NULL);
        total += clients[i].n;
        errors += clients[i].errors;
    }
    step_rec *all = malloc((size_t)(total + 1) * sizeof *all);
    long long n = 0;
    for (int i = 0; i < NCLIENTS; i++) {
        memcpy(all + n, clients[i].recs, (size_t)clients[i].n * sizeof *all);
        n += clients[i].n;
        free(clients[i].recs);
    }
    qsort(all, (size_t)n, sizeof *all, cmp_rec);
    stat_calls += n * STEP_NALG + ca.steps;
    CHECK_EQ(errors, 0);
    CHECK(n > 1000);

    /* Instant by instant, each limiter admitted exactly what its model admits. */
    step_model m = {0};
    long long mismatches[STEP_NALG] = {0}, admitted[STEP_NALG] = {0}, instants = 0;
    for (long long i = 0; i < n;) {
        long long j = i, got[STEP_NALG] = {0}, expect[STEP_NALG];
        while (j < n && all[j].t == all[i].t) {
            for (int a = 0; a < STEP_NALG; a++) got[a] += all[j].allowed[a];
            j++;
        }
        step_model_run(&m, all[i].t, j - i, expect);
        for (int a = 0; a < STEP_NALG; a++) {
            admitted[a] += got[a];
            if (got[a] != expect[a]) {
                if (mismatches[a]++ < 3)
                    fprintf(stderr, "     %s at +%lld ms: %lld attempts, admitted %lld, model %lld\n", step_cmds[a],
                            all[i].t - T0, j - i, got[a], expect[a]);
            }
        }
        instants++;
        i = j;
    }
    for (int a = 0; a < STEP_NALG; a++) {
        if (!CHECK(mismatches[a] == 0)) fprintf(stderr, "     %s: %lld instants differ from the model\n", step_cmds[a], mismatches[a]);
        CHECK(admitted[a] > 0);
    }
    CHECK(instants > 100);

    /* The sliding log's promise, read from the admitted instants: no window of 50 ms holds more than 10. */
    long long *adm = malloc((size_t)(admitted[4] + 1) * sizeof *adm), na = 0, worst = 0;
    for (long long i = 0; i < n; i++)
        if (all[i].allowed[4]) adm[na++] = all[i].t;
    for (long long i = 0, lo = 0; i < na; i++) {
        while (adm[lo] <= adm[i] - STEP_LOG_W) lo++;
        if (i - lo + 1 > worst) worst = i - lo + 1;
    }
    CHECK(worst <= STEP_LOG_L);
    CHECK(cmd_int(c, "ZCARD st:log") <= STEP_LOG_L + 1);
    printf("  stepped clock: %d clients, %lld transactions (x%d limiters), %lld clock steps, %lld instants\n",
           NCLIENTS, n, STEP_NALG, ca.steps, instants);
    free(adm);
    free(all);
    free(m.log);
    redisFree(c);
    server_stop(s);
}

/* === 2. durability ====================================================================================== */

/* Snapshot and probes before a fault, then the restart, then the same again. */
typedef struct before_fault {
    dbsnap snap;
    long long *probes;
} before_fault;

static before_fault take_before(redisContext *c, const mixer *m) {
    before_fault b = {db_snapshot(c), probe_all(c, m)};
    CHECK(b.snap.n > 20); /* the run left live keys of many kinds */
    return b;
}

static void compare_after(redisContext *c, mixer *m, before_fault *b, const char *what) {
    clock_set(c, m->clock_ms); /* a restarted server is back on the real clock */
    dbsnap after = db_snapshot(c);
    CHECK(db_equal(&b->snap, &after, what));
    long long *probes = probe_all(c, m);
    if (!CHECK(probes_equal(b->probes, probes, m))) fprintf(stderr, "     %s: a reloaded limiter decides differently\n", what);
    free(probes);
    db_free(&after);
    db_free(&b->snap);
    free(b->probes);
}

/* The faults test_durability injects. */
typedef enum { KILL9, KILL9_IN_REWRITE, SHUTDOWN_NOSAVE, DEBUG_RELOAD } fault;

/* Snapshot and probes, the fault (KILL9_IN_REWRITE: kill -9 right after BGREWRITEAOF, while the rewrite
 * may still run), then every key and every probe the same as before. Returns the connection to use. */
static redisContext *survives(server *s, redisContext *c, mixer *m, fault f, const char *what) {
    before_fault b = take_before(c, m);
    if (f == KILL9_IN_REWRITE) freeReplyObject(cmd(c, "BGREWRITEAOF"));
    if (f == KILL9 || f == KILL9_IN_REWRITE) c = server_kill9_restart(s, c);
    if (f == SHUTDOWN_NOSAVE) c = server_shutdown_restart(s, c);
    if (f == DEBUG_RELOAD) CHECK(cmd_status_is(c, "OK", "DEBUG RELOAD"));
    stat_faults++;
    compare_after(c, m, &b, what);
    return c;
}

static void test_durability(void) {
    mixer m = {.r = {7}, .prefix = "d", .nkeys = 6, .clock_ms = T0};
    server *s = start(server_aof_always);
    redisContext *c = server_connect(s);
    clock_set(c, m.clock_ms);

    /* AOF, appendfsync always: kill -9 right after the last reply. */
    mixer_run(&m, c, 700);
    c = survives(s, c, &m, KILL9, "AOF after kill -9");

    /* BGREWRITEAOF, more calls on top of the rewritten base, kill -9. */
    mixer_run(&m, c, 500);
    freeReplyObject(cmd(c, "BGREWRITEAOF"));
    if (!CHECK(aof_rewrite_wait(c))) fprintf(stderr, "     AOF rewrite did not finish\n");
    mixer_run(&m, c, 200);
    c = survives(s, c, &m, KILL9, "rewritten AOF after kill -9");

    /* kill -9 while a rewrite may still be running: the old AOF is still whole. */
    mixer_run(&m, c, 300);
    c = survives(s, c, &m, KILL9_IN_REWRITE, "AOF after kill -9 during a rewrite");
    CHECK(m.bad == 0);
    redisFree(c);
    server_stop(s);

    /* RDB: SAVE, SHUTDOWN NOSAVE, restart; then DEBUG RELOAD. */
    mixer r = {.r = {8}, .prefix = "d", .nkeys = 6, .clock_ms = T0};
    s = start(NULL);
    c = server_connect(s);
    clock_set(c, r.clock_ms);
    mixer_run(&r, c, 700);
    CHECK(cmd_status_is(c, "OK", "SAVE"));
    c = survives(s, c, &r, SHUTDOWN_NOSAVE, "RDB after SAVE and SHUTDOWN NOSAVE");
    mixer_run(&r, c, 400);
    c = survives(s, c, &r, DEBUG_RELOAD, "DEBUG RELOAD");
    CHECK(r.bad == 0);
    CHECK(m.leases + r.leases > 60 && m.released + r.released > 10); /* the lease family ran */
    stat_calls += m.calls + r.calls;
    printf("  durability: %lld calls (%lld leases taken, %lld released or renewed), 3 kill -9, 1 shutdown, 1 DEBUG RELOAD\n",
           m.calls + r.calls, m.leases + r.leases, m.released + r.released);
    redisFree(c);
    server_stop(s);
}

/* === 3. replication ====================================================================================== */

typedef struct feeder_arg {
    int port;
    atomic_int *stop;
    mixer *m;
} feeder_arg;

static void *feeder_thread(void *p) {
    feeder_arg *a = p;
    redisContext *c = port_connect(a->port);
    while (!atomic_load(a->stop)) mixer_run(a->m, c, 20);
    redisFree(c);
    return NULL;
}

static void test_replication(void) {
    server *p = start(NULL);
    redisContext *pc = server_connect(p);

    /* Primary on a frozen clock, replicas on the real one. The first calls come before the replicas
     * exist: they get those keys by the full sync (the types' RDB form), the rest as commands. */
    mixer m = {.r = {11}, .prefix = "r", .nkeys = 12, .clock_ms = T0 + 86400000};
    clock_set(pc, m.clock_ms);
    mixer_run(&m, pc, 1000);
    stat_servers += 2;
    server *r1 = replica_start(p), *r2 = replica_start(p);
    redisContext *c1 = server_connect(r1), *c2 = server_connect(r2);
    dbsnap sp = db_snapshot(pc), s1 = db_snapshot(c1), s2 = db_snapshot(c2);
    CHECK(sp.n > 20 && db_equal(&sp, &s1, "replica 1 after the full sync"));
    CHECK(db_equal(&sp, &s2, "replica 2 after the full sync"));
    db_free(&sp);
    db_free(&s1);
    db_free(&s2);
    mixer_run(&m, pc, 2000);
    CHECK_EQ(cmd_int(pc, "WAIT 2 5000"), 2);
    sp = db_snapshot(pc);
    s1 = db_snapshot(c1);
    s2 = db_snapshot(c2);
    CHECK(sp.n > 50);
    CHECK(db_equal(&sp, &s1, "replica 1"));
    CHECK(db_equal(&sp, &s2, "replica 2"));
    db_free(&sp);
    db_free(&s1);
    db_free(&s2);

    /* Replica 1 goes down and comes back (full resync) while the primary keeps deciding. */
    atomic_int stop = 0;
    feeder_arg fa = {p->port, &stop, &m};
    pthread_t feeder;
    long long calls_before = m.calls;
    pthread_create(&feeder, NULL, feeder_thread, &fa);
    sleep_ms(100);
    redisFree(c1);
    server_shutdown(r1);
    stat_faults++;
    sleep_ms(150);
    server_restart(r1);
    c1 = server_connect(r1);
    CHECK(replica_wait_synced(c1));
    sleep_ms(150);
    atomic_store(&stop, 1);
    pthread_join(feeder, NULL);
    CHECK(m.calls - calls_before > 100);
    /* WAIT waits for this connection's last write; the feeder wrote on its own, so write here first. */
    CHECK(cmd_status_is(pc, "OK", "SET r:barrier 1"));
    CHECK_EQ(cmd_int(pc, "WAIT 2 5000"), 2);
    sp = db_snapshot(pc);
    s1 = db_snapshot(c1);
    s2 = db_snapshot(c2);
    CHECK(db_equal(&sp, &s1, "restarted replica"));
    CHECK(db_equal(&sp, &s2, "replica 2 after the restart"));
    CHECK(m.bad == 0);
    CHECK(m.leases > 30 && m.released > 10);
    stat_calls += m.calls;
    printf("  replication: %lld calls (%lld leases taken, %lld released or renewed) on %zu keys, 1 primary + 2 replicas, "
           "1 replica restart under %lld calls\n",
           m.calls, m.leases, m.released, sp.n, m.calls - calls_before);
    db_free(&sp);
    db_free(&s1);
    db_free(&s2);
    redisFree(pc);
    redisFree(c1);
    redisFree(c2);
    server_stop(r1);
    server_stop(r2);
    server_stop(p);
}

/* === 4. ACL ============================================================================================== */

static const char *const acl_calls[] = {
    "RL.TOKEN %s:tok 10 1 1000", "RL.TOKEN %s:tok 10 1 1000 DRYRUN", "RL.LEAKY %s:leak 10 1 1000",
    "RL.WINDOW %s:win 10 1000", "RL.SLIDINGLOG %s:log 10 1000", "RL.SETSTATE %s:set TOKEN 0 0",
};
#define NACL ((int)(sizeof acl_calls / sizeof acl_calls[0]))

static redisReply *acl_call(redisContext *c, int i, const char *prefix) {
    char line[128];
    snprintf(line, sizeof line, acl_calls[i], prefix);
    return cmdline(c, "%s", line);
}

static int reply_ok(const redisReply *r) { return rl_of(r).ok || reply_is_status(r, "OK"); }

static int reply_noperm(const redisReply *r) {
    return r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOPERM", 6) == 0;
}

static redisContext *connect_as(const server *s, const char *user) {
    redisContext *c = server_connect(s);
    CHECK(cmd_status_is(c, "OK", "AUTH %s pw", user));
    return c;
}

static void test_acl(void) {
    server *s = start(NULL);
    redisContext *admin = server_connect(s);
    CHECK(cmd_status_is(admin, "OK", "ACL SETUSER tenant1 on >pw ~tenant1:* +@all"));
    CHECK(cmd_status_is(admin, "OK", "ACL SETUSER tenant3 on >pw ~* -@all +rl.token +rl.window"));
    CHECK(cmd_status_is(admin, "OK", "ACL SETUSER tenant4 on >pw %%R~ro:* +@all"));
    /* tenant2's keys exist and must not change. */
    for (int i = 0; i < NACL; i++) {
        redisReply *r = acl_call(admin, i, "tenant2");
        CHECK(reply_ok(r));
        freeReplyObject(r);
    }
    dbsnap before = db_snapshot(admin);

    redisContext *t1 = connect_as(s, "tenant1");
    for (int i = 0; i < NACL; i++) {
        redisReply *ok = acl_call(t1, i, "tenant1");
        if (!CHECK(reply_ok(ok))) fprintf(stderr, "     %s on tenant1: %s\n", acl_calls[i], ok->str ? ok->str : "?");
        freeReplyObject(ok);
        redisReply *no = acl_call(t1, i, "tenant2");
        if (!CHECK(reply_noperm(no))) fprintf(stderr, "     %s on tenant2: %s\n", acl_calls[i], no->str ? no->str : "(array)");
        freeReplyObject(no);
    }
    CHECK(cmd_status_is(t1, "PONG", "PING"));

    /* Command rules: tenant3 may run RL.TOKEN and RL.WINDOW only. */
    redisContext *t3 = connect_as(s, "tenant3");
    for (int i = 0; i < NACL; i++) {
        redisReply *r = acl_call(t3, i, "tenant3");
        int allowed = strncmp(acl_calls[i], "RL.TOKEN", 8) == 0 || strncmp(acl_calls[i], "RL.WINDOW", 9) == 0;
        CHECK(allowed ? reply_ok(r) : reply_noperm(r));
        freeReplyObject(r);
    }
    /* A read-only key pattern: the commands declare their key read-write, so even DRYRUN is refused. */
    redisContext *t4 = connect_as(s, "tenant4");
    for (int i = 0; i < NACL; i++) {
        redisReply *r = acl_call(t4, i, "ro");
        CHECK(reply_noperm(r));
        freeReplyObject(r);
    }
    CHECK_EQ(cmd_int(admin, "EXISTS ro:tok ro:leak ro:win ro:log ro:set"), 0);

    /* Filter tenant2's keys out of the admin's view now (tenant1/3 created their own). */
    dbsnap after = db_snapshot(admin);
    size_t same = 0, t2 = 0;
    for (size_t i = 0; i < before.n; i++) {
        if (strncmp(before.k[i].key, "tenant2:", 8) != 0) continue;
        t2++;
        for (size_t j = 0; j < after.n; j++)
            if (strcmp(after.k[j].key, before.k[i].key) == 0 && kstate_equal(&after.k[j], &before.k[i])) same++;
    }
    CHECK_EQ(t2, 5); /* tok, leak, win, log, set (DRYRUN made nothing) */
    CHECK_EQ(same, t2);
    db_free(&before);
    db_free(&after);
    stat_calls += 4 * NACL;
    redisFree(t1);
    redisFree(t3);
    redisFree(t4);
    redisFree(admin);
    server_stop(s);
}

/* === 5. maxmemory ======================================================================================== */

static void test_maxmemory(void) {
    const char *args[] = {"--maxmemory", "2mb", "--maxmemory-policy", "noeviction", NULL};
    server *s = start(args);
    redisContext *c = server_connect(s);
    clock_set(c, T0);
    /* Keys made before memory runs out. */
    const char *pre[] = {"RL.TOKEN mm:tok 10 1 1000", "RL.LEAKY mm:leak 10 1 1000", "RL.WINDOW mm:win 10 1000",
                         "RL.SLIDINGLOG mm:log 10 1000"};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) CHECK(rl(c, "%s", pre[i]).ok);

    static char big[64 * 1024];
    memset(big, 'x', sizeof big);
    int oom = 0, sets = 0;
    for (; sets < 200 && !oom; sets++) {
        redisReply *r = cmd(c, "SET mm:fill:%d %b", sets, big, sizeof big);
        oom = r->type == REDIS_REPLY_ERROR && strncmp(r->str, "OOM", 3) == 0;
        freeReplyObject(r);
    }
    CHECK(oom);
    stat_faults++;
    dbsnap before = db_snapshot(c);

    /* Every call that would write (integration_oom has the calls that write nothing, which still answer). */
    const char *calls[] = {"RL.TOKEN mm:tok 10 1 1000",       "RL.TOKEN mm:new1 10 1 1000",
                           "RL.LEAKY mm:leak 10 1 1000",
                           "RL.LEAKY mm:new2 10 1 1000 BLOCK", "RL.WINDOW mm:win 10 1000 FIXED",
                           "RL.WINDOW mm:new3 10 1000",        "RL.SLIDINGLOG mm:log 10 1000",
                           "RL.SLIDINGLOG mm:new4 10 1000",    "RL.SETSTATE mm:new5 TOKEN 0 0",
                           "RL.SETSTATE mm:tok TOKEN 0 0"};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        redisReply *r = cmdline(c, "%s", calls[i]);
        if (!CHECK(r->type == REDIS_REPLY_ERROR && strncmp(r->str, "OOM", 3) == 0))
            fprintf(stderr, "     %s -> %s\n", calls[i], r->str ? r->str : "(not an error)");
        freeReplyObject(r);
        CHECK(cmd_status_is(c, "PONG", "PING"));
    }
    CHECK(cmd_int(c, "RL.CLOCK GET") == T0); /* not a write: still answers */
    CHECK(rl(c, "RL.TOKEN mm:tok 10 1 1000 DRYRUN").remaining == 8); /* nor is a look */
    dbsnap after = db_snapshot(c);
    CHECK(db_equal(&before, &after, "keys under OOM"));
    db_free(&before);
    db_free(&after);
    /* Memory freed: the limiters work again. */
    for (int i = 0; i < sets; i++) freeReplyObject(cmd(c, "DEL mm:fill:%d", i));
    CHECK(rl(c, "RL.TOKEN mm:tok 10 1 1000").ok);
    CHECK(rl(c, "RL.SLIDINGLOG mm:new4 10 1000").ok);
    stat_calls += (long long)(sizeof calls / sizeof calls[0]) + 6;
    redisFree(c);
    server_stop(s);
}

/* === 6. the clock going backwards ======================================================================== */

typedef struct bvariant {
    const char *cmd, *params;
    long long period;
    int maxcost;
} bvariant;

static const bvariant bvariants[] = {
    {"RL.TOKEN", "5 1 100", 100, 3},         {"RL.TOKEN", "5 2 200 INTERVAL", 200, 3},
    {"RL.LEAKY", "5 1 100", 100, 3},         {"RL.LEAKY", "5 1 100 NODELAY", 100, 3},
    {"RL.WINDOW", "6 300 FIXED", 300, 3},    {"RL.WINDOW", "6 300 SLIDING", 300, 3},
    {"RL.SLIDINGLOG", "4 300", 300, 2},      {"RL.SLIDINGLOG", "4 300 MINGAP 50", 300, 2},
};
#define NBVARIANTS ((int)(sizeof bvariants / sizeof bvariants[0]))
#define BSTEPS 250
#define BSEEDS 8

typedef struct bresult {
    long long adm_b, adm_f, adm_h; /* admitted units: with steps back, shifted, held */
    long long lenient;             /* calls after a step back more lenient than at the held instant */
    long long ttl_bad, bad;
} bresult;

/* One schedule of BSTEPS calls at times b[i] with steps back (15% of the steps go back by up to two
 * periods) on key B, and the same calls on two keys without the steps back:
 *   - F, shifted: each call keeps its distance from the one before, f[i] = f[i-1] + max(0, b[i] - b[i-1]);
 *   - H, held: the clock stays where it had got to, h[i] = max(b[0..i]).
 * Before each call on B, a DRYRUN of it at h[i] (what a clock that did not go back would decide with the
 * same stored state): the call at b[i] must not be more lenient (admitted while the DRYRUN is not, or
 * more remaining). After each call on B, its PTTL must be its reset_after_ms plus the frozen clock's
 * extra hour, never -1. With unit costs the admitted counts compare (with mixed costs a denial can make
 * room for a larger request later, so counts do not). */
static void backwards_run(redisContext *c, const bvariant *v, int variant, int seed, int unit, bresult *res) {
    rng r = {(uint64_t)(1000 * variant + seed + (unit ? 0 : 500))};
    long long b = T0 + 10000000LL * (seed + 1) + (unit ? 0 : 5000000LL), f = b, h = b, prev_b = b;
    long long cost[BSTEPS];
    char key[64];
    snprintf(key, sizeof key, "bk:%d:%d:%d", variant, seed, unit);
    for (int i = 0; i < BSTEPS; i++) {
        if (i > 0) {
            if (rnd(&r) % 100 < 15)
                b -= rnd_in(&r, 1, 2 * v->period); /* the step back */
            else
                b += rnd_in(&r, 0, v->period / 2);
            f += b > prev_b ? b - prev_b : 0;
            prev_b = b;
            if (b > h) h = b;
        }
        cost[i] = unit ? 1 : rnd_in(&r, 1, v->maxcost);
        const long long at[3] = {h, b, f};
        const char *suffix[3] = {"b", "b", "f"};
        for (int k = 0; k < 4; k++) {
            cmdline_append(c, "RL.CLOCK SET %lld", k == 3 ? h : at[k]);
            cmdline_append(c, "%s %s:%s %s COST %lld%s", v->cmd, key, k == 3 ? "h" : suffix[k], v->params, cost[i],
                           k == 0 ? " DRYRUN" : "");
            if (k == 1) cmdline_append(c, "PTTL %s:b", key);
        }
    }
    for (int i = 0; i < BSTEPS; i++) {
        rl_result fr[4];
        long long pttl = LLONG_MIN;
        int ok = 1;
        for (int k = 0; k < 4; k++) {
            redisReply *x = next_reply(c);
            ok &= reply_is_status(x, "OK");
            freeReplyObject(x);
            x = next_reply(c);
            fr[k] = rl_of(x);
            ok &= fr[k].ok;
            freeReplyObject(x);
            if (k == 1) {
                x = next_reply(c);
                pttl = x->type == REDIS_REPLY_INTEGER ? x->integer : LLONG_MIN;
                freeReplyObject(x);
            }
        }
        if (!ok) {
            res->bad++;
            continue;
        }
        const rl_result *dry = &fr[0], *rb = &fr[1];
        res->adm_b += rb->allowed ? cost[i] : 0;
        res->adm_f += fr[2].allowed ? cost[i] : 0;
        res->adm_h += fr[3].allowed ? cost[i] : 0;
        if ((rb->allowed && !dry->allowed) || (rb->allowed == dry->allowed && rb->remaining > dry->remaining)) {
            if (res->lenient++ < 3)
                fprintf(stderr, "     %s %s step %d: allowed %lld remaining %lld, at the held instant %lld / %lld\n",
                        v->cmd, v->params, i, rb->allowed, rb->remaining, dry->allowed, dry->remaining);
        }
        long long reset = rb->reset_after_ms;
        int ttl_ok = reset == 0 ? pttl == -2 : (pttl > 0 && pttl <= HOUR_MS + reset + 1 && pttl >= HOUR_MS + reset - 2000);
        if (!ttl_ok && res->ttl_bad++ < 3)
            fprintf(stderr, "     %s %s step %d: reset_after_ms %lld, PTTL %lld\n", v->cmd, v->params, i, reset, pttl);
    }
}

/* The same calls on two keys, the first at offsets at_a, the second at at_b (ms from base). Returns the
 * admitted units on the first minus those on the second. The two commands differ only in their key. */
typedef struct tcall {
    long long at_a, at_b, cost;
} tcall;

static long long compare_calls(redisContext *c, const char *cmd, const char *key_a, const char *key_b,
                               const char *params, long long base, const tcall *calls, int n) {
    long long a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        clock_set(c, base + calls[i].at_a);
        rl_result ra = rl(c, "%s %s %s COST %lld", cmd, key_a, params, calls[i].cost);
        clock_set(c, base + calls[i].at_b);
        rl_result rb = rl(c, "%s %s %s COST %lld", cmd, key_b, params, calls[i].cost);
        CHECK(ra.ok && rb.ok);
        a += ra.allowed ? calls[i].cost : 0;
        b += rb.allowed ? calls[i].cost : 0;
    }
    return a - b;
}

static void test_clock_backwards(void) {
    server *s = start(NULL);
    redisContext *c = server_connect(s);
    long long total_calls = 0;
    for (int v = 0; v < NBVARIANTS; v++) {
        bresult unit = {0}, mixed = {0};
        long long extra_shifted = 0, extra_held = 0;
        for (int seed = 0; seed < BSEEDS; seed++) {
            bresult one = {0};
            backwards_run(c, &bvariants[v], v, seed, 1, &one);
            extra_shifted += one.adm_b > one.adm_f;
            extra_held += one.adm_b > one.adm_h;
            unit.adm_b += one.adm_b;
            unit.adm_f += one.adm_f;
            unit.adm_h += one.adm_h;
            unit.lenient += one.lenient;
            unit.ttl_bad += one.ttl_bad;
            unit.bad += one.bad;
            backwards_run(c, &bvariants[v], v, seed, 0, &mixed);
            total_calls += 2 * 4 * BSTEPS;
        }
        const char *name = bvariants[v].cmd, *params = bvariants[v].params;
        CHECK_EQ(unit.bad + mixed.bad, 0);
        CHECK_EQ(unit.ttl_bad + mixed.ttl_bad, 0);
        /* Each call after a step back decides no more leniently than at the held instant. */
        CHECK_EQ(unit.lenient + mixed.lenient, 0);
        /* No extra grants compared with the same calls without the steps back (shifted). */
        if (!CHECK(extra_shifted == 0)) fprintf(stderr, "     %s %s: more admitted than without the steps back\n", name, params);
        /* Nor compared with a clock that holds still instead of going back. Except the sliding log, by its
         * rule: an entry logged after the clock's time counts as logged now (so that no member in the future
         * can lock a key), so after a step back its entries leave the window sooner than on a held clock;
         * it is bound by the shifted schedule above instead (docs/commands.md, "Limits, errors and edge
         * cases"). */
        if (strcmp(name, "RL.SLIDINGLOG") != 0 && !CHECK(extra_held == 0))
            fprintf(stderr, "     %s %s: %lld of %d schedules admit more than with a held clock (%lld vs %lld in all)\n",
                    name, params, extra_held, BSEEDS, unit.adm_b, unit.adm_h);
        CHECK(unit.adm_b > 0 && mixed.adm_b > 0);
    }

    /* The smallest case of that trade-off: limit 2 per 100 ms, attempts at 0, 200, 150 (the step back),
     * 260. At 150 the entry at 200 counts as 150 and the attempt is logged at 150: both leave at 250, so
     * the attempt at 260 is admitted: 4, where a clock held at 200 admits 3 (and the same calls without
     * the step back, at 0, 200, 200, 310, also 4). */
    static const tcall slog[] = {{0, 0, 1}, {200, 200, 1}, {150, 200, 1}, {260, 260, 1}};
    long long extra = compare_calls(c, "RL.SLIDINGLOG", "held:log:b", "held:log:h", "2 100", T0, slog, 4);
    if (!CHECK(extra == 1)) fprintf(stderr, "     RL.SLIDINGLOG: %lld more admitted after the step back\n", extra);

    /* The documented boundary of the rule (docs/commands.md, "Limits, errors and edge cases"): a limiter
     * that went idle holds no key, so a step back to before that instant meets a new limiter, which may
     * grant one fresh burst the held clock would not. Capacity 1 per 100 ms: a call at 0, a COST 0 call at
     * 100 (idle: the key is deleted), then calls at 50 (the step back) and 150 admit 3 units; with the
     * clock held at 100, 2. Every cell algorithm behaves so; the extra is exactly that one burst (1). */
    static const tcall idle[] = {{0, 0, 1}, {100, 100, 0}, {50, 100, 1}, {150, 150, 1}};
    /* The sliding-window counter is idle two windows after its count: at 200 here. */
    static const tcall idle_sliding[] = {{0, 0, 1}, {200, 200, 0}, {50, 200, 1}, {250, 250, 1}};
    static const struct {
        const char *cmd, *params;
    } idle_cmds[] = {{"RL.TOKEN", "1 1 100"},         {"RL.TOKEN", "1 1 100 INTERVAL"}, {"RL.LEAKY", "1 1 100 NODELAY"},
                     {"RL.LEAKY", "1 1 100"},         {"RL.WINDOW", "1 100 FIXED"},     {"RL.WINDOW", "1 100 SLIDING"}};
    int idle_as_new = 0;
    for (int i = 0; i < 6; i++) {
        char ka[32], kb[32];
        snprintf(ka, sizeof ka, "idle%d:b", i);
        snprintf(kb, sizeof kb, "idle%d:h", i);
        long long e = compare_calls(c, idle_cmds[i].cmd, ka, kb, idle_cmds[i].params, T0 + 1000000,
                                    i == 5 ? idle_sliding : idle, 4);
        if (!CHECK(e == 1))
            fprintf(stderr, "     %s %s: %lld more admitted after a step back past an idle (deleted) key\n",
                    idle_cmds[i].cmd, idle_cmds[i].params, e);
        idle_as_new += e == 1;
    }
    CHECK_EQ(idle_as_new, 6);
    total_calls += 8 * 7;

    stat_calls += total_calls;
    CHECK(cmd_status_is(c, "PONG", "PING"));
    printf("  clock backwards: %d variants x %d schedules x %d steps, unit and mixed costs (%lld calls)\n", NBVARIANTS,
           BSEEDS, BSTEPS, total_calls);
    redisFree(c);
    server_stop(s);
}

/* === 7. idle keys expire ================================================================================= */

static const char *const idle_calls[] = {
    "RL.TOKEN idle:tok:%d 3 1 50 COST %d",        "RL.TOKEN idle:tint:%d 3 3 100 INTERVAL COST %d",
    "RL.LEAKY idle:leak:%d 4 2 100 COST %d",      "RL.LEAKY idle:lnd:%d 4 2 100 NODELAY COST %d",
    "RL.WINDOW idle:wfx:%d 5 100 FIXED COST %d",  "RL.WINDOW idle:wsl:%d 5 100 SLIDING COST %d",
    "RL.SLIDINGLOG idle:log:%d 3 150 COST %d",    "RL.SLIDINGLOG idle:lgap:%d 3 150 MINGAP 20 COST %d",
};
#define NIDLE ((int)(sizeof idle_calls / sizeof idle_calls[0]))
#define IDLE_KEYS 1000

static void test_idle_expiry(void) {
    server *s = start(NULL);
    redisContext *c = server_connect(s);
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
    for (int i = 0; i < IDLE_KEYS; i++) {
        cmdline_append(c, idle_calls[i % NIDLE], i, 1 + i % 3);
        /* PTTL of the key just used: the key is the second word of the call. */
        char call[256], *save = NULL;
        snprintf(call, sizeof call, idle_calls[i % NIDLE], i, 1 + i % 3);
        strtok_r(call, " ", &save);
        cmdline_append(c, "PTTL %s", strtok_r(NULL, " ", &save));
    }
    long long bad = 0, ttl_bad = 0;
    for (int i = 0; i < IDLE_KEYS; i++) {
        redisReply *x = next_reply(c);
        rl_result f = rl_of(x);
        long long reset = f.reset_after_ms;
        freeReplyObject(x);
        x = next_reply(c);
        long long pttl = x->type == REDIS_REPLY_INTEGER ? x->integer : LLONG_MIN;
        freeReplyObject(x);
        if (!f.ok || reset <= 0) {
            bad++;
            continue;
        }
        /* On the real clock the key's PTTL is reset_after_ms (the command and PTTL are a few µs apart;
         * allow for a slow machine below, never above). */
        if (!(pttl <= reset + 1 && pttl > 0 && pttl >= reset - 50) && ttl_bad++ < 3)
            fprintf(stderr, "     key %d: reset_after_ms %lld, PTTL %lld\n", i, reset, pttl);
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(ttl_bad, 0);
    CHECK(cmd_int(c, "DBSIZE") > IDLE_KEYS / 2);
    /* Every reset is at most 300 ms away; Redis's active expiry must remove them all without any access. */
    long long size = -1;
    int polls = 0;
    for (; polls < 60; polls++) {
        size = cmd_int(c, "DBSIZE");
        if (size == 0) break;
        sleep_ms(50);
    }
    if (!CHECK(size == 0)) fprintf(stderr, "     %lld keys left after %d ms\n", size, polls * 50);
    /* And an expired limiter answers as a new one. */
    CHECK_EQ(rl(c, "RL.TOKEN idle:tok:0 3 1 50 COST 0 DRYRUN").remaining, 3);
    CHECK_EQ(rl(c, "RL.SLIDINGLOG idle:log:6 3 150 COST 0 DRYRUN").remaining, 3);
    stat_calls += IDLE_KEYS;
    printf("  idle expiry: %d keys of %d kinds, gone after ~%d ms\n", IDLE_KEYS, NIDLE, polls * 50);
    redisFree(c);
    server_stop(s);
}

/* A small state lives inline in the value pointer, any other in an allocation (module/cell_type.c): a key
 * moves between the two as its state changes, and every way a value leaves or enters the keyspace (COPY,
 * DUMP/RESTORE, DEBUG RELOAD, an RDB restart) keeps what it holds, whichever it is. A token bucket's
 * instant with no fraction of a µs (w1 = 0) is inline; with one (3 tokens per 1000 ms from new keep a
 * third of a µs) it is allocated; at 10 4 1000, w0 is when the bucket was empty, in µs, and w1 quarters of
 * a µs after it. Key names have one length, as MEMORY USAGE counts the name. */
static void test_value_encodings(void) {
    server *s = start(NULL);
    redisContext *c = server_connect(s);
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", 1700000000000LL));
    rl(c, "RL.TOKEN enc:tok1 10 1 1000 COST 3");
    rl(c, "RL.TOKEN enc:tok2 10 3 1000 COST 3");
    rl(c, "RL.LEAKY enc:leak 10 5 1000 COST 3");
    long long in = cmd_int(c, "MEMORY USAGE enc:tok1"), heap = cmd_int(c, "MEMORY USAGE enc:tok2");
    if (!CHECK(heap > in)) fprintf(stderr, "     MEMORY USAGE inline %lld, allocated %lld\n", in, heap);
    CHECK_EQ(cmd_int(c, "MEMORY USAGE enc:leak"), in);
    /* From inline to allocated and back in one key (RL.SETSTATE swaps the value), then the algorithm
     * reads each as the state it is: a fraction of a µs more to wait makes a whole ms more to reset. */
    const long long t = 1700000002000000LL;
    CHECK(cmd_status_is(c, "OK", "RL.SETSTATE enc:tok3 TOKEN %lld 0 PXAT 4102444800000", t));
    CHECK_EQ(cmd_int(c, "MEMORY USAGE enc:tok3"), in);
    CHECK_EQ(rl(c, "RL.TOKEN_RO enc:tok3 10 4 1000 COST 0").reset_after_ms, 4500);
    CHECK(cmd_status_is(c, "OK", "RL.SETSTATE enc:tok3 TOKEN %lld 1 PXAT 4102444800000", t));
    CHECK_EQ(cmd_int(c, "MEMORY USAGE enc:tok3"), heap);
    CHECK_EQ(rl(c, "RL.TOKEN_RO enc:tok3 10 4 1000 COST 0").reset_after_ms, 4501);
    CHECK(cmd_int(c, "PTTL enc:tok3") > 365LL * 24 * 3600 * 1000); /* swapping the value kept the expiry */
    CHECK(cmd_status_is(c, "OK", "RL.SETSTATE enc:tok3 TOKEN %lld 0 PXAT 4102444800000", t));
    CHECK_EQ(cmd_int(c, "MEMORY USAGE enc:tok3"), in);
    CHECK(cmd_status_is(c, "OK", "RL.SETSTATE enc:tok4 TOKEN %lld 2 PXAT 4102444800000", t));

    const char *keys[] = {"enc:tok1", "enc:tok2", "enc:leak", "enc:tok3", "enc:tok4"};
    const char *calls[] = {"RL.TOKEN %s 10 1 1000 COST 0 DRYRUN", "RL.TOKEN %s 10 3 1000 COST 0 DRYRUN",
                           "RL.LEAKY %s 10 5 1000 COST 0 DRYRUN", "RL.TOKEN %s 10 4 1000 COST 0 DRYRUN",
                           "RL.TOKEN %s 10 4 1000 COST 0 DRYRUN"};
    enum { NKEYS = 5 };
    rl_result before[NKEYS];
    char *digest[NKEYS];
    for (int i = 0; i < NKEYS; i++) {
        before[i] = rl(c, calls[i], keys[i]);
        redisReply *d = cmd(c, "DEBUG DIGEST-VALUE %s", keys[i]);
        digest[i] = strdup(d && d->type == REDIS_REPLY_ARRAY && d->elements == 1 ? d->element[0]->str : "?");
        freeReplyObject(d);
        /* COPY, and DUMP + RESTORE under another name: the same state, the same digest. */
        CHECK_EQ(cmd_int(c, "COPY %s %s:c", keys[i], keys[i]), 1);
        size_t len;
        char *dump = dump_key(c, keys[i], &len);
        /* (with the same expiry: a digest counts it) */
        long long expire_at = cmd_int(c, "PEXPIRETIME %s", keys[i]);
        CHECK(dump != NULL && expire_at > 0 &&
              cmd_status_is(c, "OK", "RESTORE %s:r %lld %b ABSTTL", keys[i], expire_at, dump, len));
        free(dump);
    }
    CHECK(cmd_status_is(c, "OK", "DEBUG RELOAD"));
    CHECK(cmd_status_is(c, "OK", "SAVE"));
    c = server_shutdown_restart(s, c);
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", 1700000000000LL));
    for (int i = 0; i < NKEYS; i++) {
        const char *suffix[] = {"", ":c", ":r"};
        for (int j = 0; j < 3; j++) {
            char key[64];
            snprintf(key, sizeof key, "%s%s", keys[i], suffix[j]);
            rl_result now = rl(c, calls[i], key);
            CHECK(now.ok && now.remaining == before[i].remaining && now.reset_after_ms == before[i].reset_after_ms);
            redisReply *d = cmd(c, "DEBUG DIGEST-VALUE %s", key);
            if (!CHECK(d && d->type == REDIS_REPLY_ARRAY && d->elements == 1 && strcmp(d->element[0]->str, digest[i]) == 0))
                fprintf(stderr, "     %s: digest %s, before %s\n", key, d && d->type == REDIS_REPLY_ARRAY && d->elements == 1 ? d->element[0]->str : "?", digest[i]);
            freeReplyObject(d);
        }
        free(digest[i]);
    }
    printf("  value encodings: MEMORY USAGE inline %lld, allocated %lld\n", in, heap);
    redisFree(c);
    server_stop(s);
}

int main(void) {
    test_many_clients_frozen();
    test_many_clients_stepped_clock();
    test_durability();
    test_replication();
    test_acl();
    test_maxmemory();
    test_clock_backwards();
    test_idle_expiry();
    test_value_encodings();
    printf("  totals: %lld calls, %lld faults injected, %lld servers started\n", stat_calls, stat_faults, stat_servers);
    return check_summary("integration_reliability");
}
