/* integration_effects.c -- skipping the replicated effects while nothing can receive them (module/effects.c)
 * never costs a replica or the AOF a write.
 *
 * While a server has no AOF, no replication backlog and no replica, the module's writes build no effect
 * (RL.SETSTATE, DEL, ZADD...), and call ReplicateVerbatim, which then propagates nothing. The danger is a
 * consumer appearing while the module still skips: it would miss effects, or, worse, receive an RL.*
 * command verbatim and decide it again on its own clock. So every test here brings a consumer in while a
 * feeder thread keeps writing, on real redis-server processes, and ends by comparing every key, byte for
 * byte (DUMP, a sorted set's members and scores, and the absolute expiry), on every node:
 *
 *   1. the plain state: writes skip (INFO ratelimit_effects_replicated:0) and still count as changes for
 *      save points (rdb_changes_since_last_save);
 *   2. a replica attaching under load, disk-based sync;
 *   3. a replica attaching under load, diskless sync with repl-diskless-sync-delay: the backlog exists from
 *      the SYNC on, the fork seconds later, and writes in between are in the RDB, not the stream;
 *   4. CONFIG SET appendonly yes under load, then a restart from the AOF;
 *   5. a restart from an RDB: alone (the module skips again), and as a primary whose RDB carries
 *      replication info (its replica resyncs partially from the backlog the load keeps);
 *   6. a replica promoted (REPLICAOF NO ONE), its old primary made its replica, writes on the new primary.
 *
 * The feeder uses the real clock and limits far from exhaustion that refill one unit in 864 s, so most
 * calls write and no key expires during a test; some calls give units back (REFUND) so that limiters go
 * idle and their keys are deleted (the DEL effect).
 * The closing line is "integration_effects: N passed, N failed". */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "server.h"

#define NKEYS 200

/* --- the load ---------------------------------------------------------------------------------------- */

/* Call i of the feeder: every kind of write, on NKEYS keys per kind. */
static void feed_line(char *line, size_t n, const char *prefix, long long i) {
    long long k = (i / 7) % NKEYS;
    switch (i % 7) {
    case 0: snprintf(line, n, "RL.TOKEN %st:%lld 1000000 100 86400000", prefix, k); break;
    case 1: snprintf(line, n, "RL.LEAKY %sl:%lld 1000000 100 86400000", prefix, k); break;
    case 2: snprintf(line, n, "RL.WINDOW %sw:%lld 1000000 86400000 SLIDING", prefix, k); break;
    case 3: snprintf(line, n, "RL.SLIDINGLOG %ss:%lld 50 86400000", prefix, k); break;
    case 4: snprintf(line, n, "CL.THROTTLE %sc:%lld 999999 100 86400", prefix, k); break;
    case 5: snprintf(line, n, "RL.TOKEN %sr:%lld 10 10 86400000", prefix, k % 20); break;
    default: snprintf(line, n, "RL.TOKEN %sr:%lld 10 10 86400000 REFUND 1", prefix, k % 20); break; /* idle: DEL */
    }
}

/* n calls, pipelined in batches; returns how many were not an ordinary reply (0 expected). */
static long long feed(redisContext *c, const char *prefix, long long *next, long long n) {
    long long bad = 0;
    char line[160];
    while (n > 0) {
        long long batch = n < 50 ? n : 50;
        for (long long j = 0; j < batch; j++) {
            feed_line(line, sizeof line, prefix, (*next)++);
            cmdline_append(c, "%s", line);
        }
        for (long long j = 0; j < batch; j++) {
            redisReply *r = next_reply(c);
            bad += r->type == REDIS_REPLY_ERROR;
            freeReplyObject(r);
        }
        n -= batch;
    }
    return bad;
}

typedef struct feeder {
    int port;
    const char *prefix;
    atomic_int stop;
    long long calls, bad;
    pthread_t thread;
} feeder;

static void *feeder_main(void *p) {
    feeder *f = p;
    redisContext *c = port_connect(f->port);
    long long next = 0;
    while (!atomic_load(&f->stop)) {
        f->bad += feed(c, f->prefix, &next, 100);
        f->calls += 100;
    }
    redisFree(c);
    return NULL;
}

static void feeder_start(feeder *f, const server *s, const char *prefix) {
    f->port = s->port;
    f->prefix = prefix;
    atomic_store(&f->stop, 0);
    f->calls = f->bad = 0;
    pthread_create(&f->thread, NULL, feeder_main, f);
}

static void feeder_stop(feeder *f) {
    atomic_store(&f->stop, 1);
    pthread_join(f->thread, NULL);
    CHECK(f->calls >= 100);
    CHECK_EQ(f->bad, 0);
}

/* --- comparing nodes --------------------------------------------------------------------------------- */

/* Every key's state as one string: name, type, PEXPIRETIME, then its DUMP, or for a sorted set its members
 * and scores (DUMP also carries a set's encoding, which a reload may choose differently), length-prefixed. */
typedef struct snap {
    char *buf;
    size_t len, cap;
    size_t keys;
} snap;

static void snap_add(snap *s, const char *p, size_t n) {
    while (s->len + n + 16 > s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4096;
        s->buf = realloc(s->buf, s->cap);
    }
    memcpy(s->buf + s->len, &n, sizeof n);
    s->len += sizeof n;
    memcpy(s->buf + s->len, p, n);
    s->len += n;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static snap take_snap(redisContext *c) {
    snap s = {0};
    redisReply *keys = cmd(c, "KEYS *");
    char **names = calloc(keys->elements + 1, sizeof *names);
    for (size_t i = 0; i < keys->elements; i++) names[i] = keys->element[i]->str;
    qsort(names, keys->elements, sizeof *names, cmp_str);
    for (size_t i = 0; i < keys->elements; i++) {
        char num[32];
        redisReply *t = cmd(c, "TYPE %s", names[i]);
        snap_add(&s, names[i], strlen(names[i]));
        snap_add(&s, t->str, t->len);
        snprintf(num, sizeof num, "%lld", cmd_int(c, "PEXPIRETIME %s", names[i]));
        snap_add(&s, num, strlen(num));
        if (strcmp(t->str, "zset") == 0) {
            redisReply *z = cmd(c, "ZRANGE %s 0 -1 WITHSCORES", names[i]);
            for (size_t j = 0; j < z->elements; j++) snap_add(&s, z->element[j]->str, z->element[j]->len);
            freeReplyObject(z);
        } else {
            size_t len;
            char *d = dump_key(c, names[i], &len);
            snap_add(&s, d ? d : "", d ? len : 0);
            free(d);
        }
        freeReplyObject(t);
    }
    s.keys = keys->elements;
    free(names);
    freeReplyObject(keys);
    return s;
}

/* 1 if two snapshots hold at least min_keys keys, the same in the same states. */
static int same_snaps(const snap *a, const snap *b, size_t min_keys) {
    return a->keys >= min_keys && a->len == b->len && memcmp(a->buf, b->buf, a->len) == 0;
}

/* 1 if both nodes hold the same keys in the same states (and there are some). */
static int same_state(redisContext *a, redisContext *b, const char *what) {
    snap sa = take_snap(a), sb = take_snap(b);
    int ok = same_snaps(&sa, &sb, 1);
    if (!ok) {
        fprintf(stderr, "     %s: %zu keys (%zu bytes) vs %zu keys (%zu bytes)\n", what, sa.keys, sa.len, sb.keys, sb.len);
        redisReply *ka = cmd(a, "KEYS *"), *kb = cmd(b, "KEYS *");
        int shown = 0;
        for (size_t i = 0; i < ka->elements && shown < 5; i++) {
            int found = 0;
            for (size_t j = 0; j < kb->elements && !found; j++) found = strcmp(ka->element[i]->str, kb->element[j]->str) == 0;
            if (!found) fprintf(stderr, "     only on the first: %s\n", ka->element[i]->str), shown++;
        }
        freeReplyObject(ka);
        freeReplyObject(kb);
    }
    free(sa.buf);
    free(sb.buf);
    return ok;
}

static long long effects_state(redisContext *c) { return info_field(c, "ratelimit", "ratelimit_effects_replicated"); }

/* After the feeder stopped: WAIT for n replicas to have everything. WAIT waits for the offset after this
 * connection's last write as the server records it, which Redis 7.0 does not move for what a module
 * propagates; a plain SET moves it past everything before. */
static void wait_replicas(redisContext *c, int n) {
    CHECK(cmd_status_is(c, "OK", "SET barrier 1"));
    CHECK_EQ(cmd_int(c, "WAIT %d 10000", n), n);
}

/* SAVE, once no child (the replication fork just done) is in the way. */
static int save(redisContext *c) {
    for (int i = 0; i < 1000; i++) {
        if (cmd_status_is(c, "OK", "SAVE")) return 1;
        sleep_ms(10);
    }
    return 0;
}

/* A server started with args, connected as *c, and fed n calls under prefix (*next counts them from 0):
 * one check, that every call had an ordinary reply. */
static server *start_fed(const char *const *args, redisContext **c, const char *prefix, long long *next, long long n) {
    server *s = server_start(args);
    *c = server_connect(s);
    *next = 0;
    CHECK_EQ(feed(*c, prefix, next, n), 0);
    return s;
}

/* --- the tests --------------------------------------------------------------------------------------- */

static void test_skipping(void) {
    server *s = server_start(NULL);
    redisContext *c = server_connect(s);
    long long next = 0;
    long long changes = info_field(c, "persistence", "rdb_changes_since_last_save");
    CHECK_EQ(feed(c, "p:", &next, 700), 0);
    CHECK_EQ(effects_state(c), 0);
    /* Each write still counts for the save points (the refunds' deletions too). */
    CHECK(info_field(c, "persistence", "rdb_changes_since_last_save") - changes >= 600);
    redisFree(c);
    server_stop(s);
}

static void test_replica_attaches(int diskless) {
    const char *const disk[] = {"--repl-diskless-sync", "no", NULL};
    const char *const delayed[] = {"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "2", NULL};
    redisContext *pc;
    long long next;
    server *p = start_fed(diskless ? delayed : disk, &pc, "a:", &next, 2000);
    CHECK_EQ(effects_state(pc), 0);

    feeder f;
    feeder_start(&f, p, "a:");
    char port[16];
    snprintf(port, sizeof port, "%d", p->port);
    const char *const rargs[] = {"--replicaof", "127.0.0.1", port, NULL};
    server *r = server_start(rargs);
    if (diskless) {
        /* The replica waits for the delayed fork: the backlog exists, and the module still skips (the
         * window effects.c explains). Seen once, so that this test covers it. */
        int seen = 0;
        for (int i = 0; i < 300 && !seen; i++) {
            redisReply *info = cmd(pc, "INFO replication");
            seen = info->str && strstr(info->str, "state=wait_bgsave") && strstr(info->str, "repl_backlog_active:1") &&
                   effects_state(pc) == 0;
            freeReplyObject(info);
            if (!seen) sleep_ms(10);
        }
        CHECK(seen);
    }
    redisContext *rc = server_connect(r);
    CHECK(replica_wait_synced(rc));
    sleep_ms(200); /* more writes after the sync */
    feeder_stop(&f);
    CHECK_EQ(effects_state(pc), 1);
    wait_replicas(pc, 1);
    CHECK(same_state(pc, rc, diskless ? "replica after a delayed diskless sync" : "replica after a disk sync"));
    redisFree(rc);
    redisFree(pc);
    server_stop(r);
    server_stop(p);
}

static void test_aof_at_run_time(void) {
    const char *const args[] = {"--appendonly", "no", NULL};
    redisContext *c;
    long long next;
    server *s = start_fed(args, &c, "f:", &next, 2000);
    CHECK_EQ(effects_state(c), 0);
    feeder f;
    feeder_start(&f, s, "f:");
    sleep_ms(50);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET appendonly yes"));
    CHECK(aof_rewrite_wait(c));
    sleep_ms(100); /* writes after the rewrite, into the AOF's increment */
    feeder_stop(&f);
    CHECK_EQ(effects_state(c), 1);
    snap before = take_snap(c);
    redisFree(c);
    /* Restart from the AOF alone: no RDB is written (SHUTDOWN NOSAVE), and the restart has AOF on. */
    server_shutdown(s);
    free(s->args[1]);
    s->args[1] = strdup("yes");
    server_restart(s);
    c = server_connect(s);
    snap after = take_snap(c);
    CHECK(same_snaps(&before, &after, 101));
    free(before.buf);
    free(after.buf);
    redisFree(c);
    server_stop(s);
}

static void test_restart_from_rdb(void) {
    /* Alone: the RDB holds no replication info, the load keeps no backlog, and the module skips again. */
    redisContext *c;
    long long next;
    server *s = start_fed(NULL, &c, "d:", &next, 2000);
    CHECK(save(c));
    snap before = take_snap(c);
    c = server_shutdown_restart(s, c);
    snap after = take_snap(c);
    CHECK(same_snaps(&before, &after, 101));
    free(before.buf);
    free(after.buf);
    CHECK_EQ(feed(c, "d:", &next, 700), 0);
    CHECK_EQ(effects_state(c), 0);
    redisFree(c);
    server_stop(s);

    /* A primary with a replica: its RDB carries the replication ID and offset, so the load keeps a backlog
     * and the replica, reconnecting, continues from it (partial resync). Every write after the restart must
     * reach it as an effect. */
    const char *const quiet[] = {"--repl-ping-replica-period", "60", NULL}; /* no PING moves the offset */
    server *p = server_start(quiet);
    redisContext *pc = server_connect(p);
    next = 0;
    CHECK_EQ(feed(pc, "e:", &next, 1000), 0);
    server *r = replica_start(p);
    redisContext *rc = server_connect(r);
    CHECK_EQ(feed(pc, "e:", &next, 1000), 0);
    wait_replicas(pc, 1);
    CHECK(save(pc));
    /* kill -9: SHUTDOWN would first send the replica a GETACK, past the offset the RDB records. */
    pc = server_kill9_restart(p, pc);
    CHECK_EQ(feed(pc, "e:", &next, 1400), 0); /* perhaps before the replica is back: the backlog keeps them */
    CHECK_EQ(effects_state(pc), 1);
    CHECK(replica_wait_synced(rc));
    CHECK_EQ(feed(pc, "e:", &next, 700), 0);
    wait_replicas(pc, 1);
    CHECK_EQ(info_field(pc, "stats", "sync_partial_ok"), 1);
    CHECK(same_state(pc, rc, "replica after its primary restarted from an RDB"));
    redisFree(rc);
    redisFree(pc);
    server_stop(r);
    server_stop(p);
}

static void test_promotion(void) {
    redisContext *pc;
    long long next;
    server *p = start_fed(NULL, &pc, "m:", &next, 1000);
    server *r = replica_start(p);
    redisContext *rc = server_connect(r);
    CHECK_EQ(feed(pc, "m:", &next, 1000), 0);
    wait_replicas(pc, 1);
    CHECK(same_state(pc, rc, "replica before the promotion"));

    /* The replica becomes the primary; the old primary its replica; the load moves to the new primary. */
    CHECK(cmd_status_is(rc, "OK", "REPLICAOF NO ONE"));
    feeder f;
    feeder_start(&f, r, "m:");
    char port[16];
    snprintf(port, sizeof port, "%d", r->port);
    CHECK(cmd_status_is(pc, "OK", "REPLICAOF 127.0.0.1 %s", port));
    CHECK(replica_wait_synced(pc));
    sleep_ms(200);
    feeder_stop(&f);
    CHECK_EQ(effects_state(rc), 1);
    wait_replicas(rc, 1);
    CHECK(same_state(rc, pc, "old primary, now a replica of the promoted one"));
    redisFree(rc);
    redisFree(pc);
    server_stop(r);
    server_stop(p);
}

int main(void) {
    test_skipping();
    test_replica_attaches(0);
    test_replica_attaches(1);
    test_aof_at_run_time();
    test_restart_from_rdb();
    test_promotion();
    return check_summary("integration_effects");
}
