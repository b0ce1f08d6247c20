/* integration_cluster.c -- the module in a real Redis Cluster: 3 primaries + 3 replicas started with the
 * test harness (so a crashed test leaves no node behind) and joined with `redis-cli --cluster create`.
 *
 * - Slots: our CRC16/hash-tag computation agrees with CLUSTER KEYSLOT; COMMAND GETKEYS sees every RL.*
 *   key; an RL.* command sent to a node that does not own its key (another primary, a replica, a
 *   READONLY replica) answers exactly `MOVED slot host:port` of the owner, and keyless RL.CLOCK runs
 *   anywhere.
 * - Routing: one key in every one of the 16384 slots, through a small client that follows MOVED (hiredis
 *   0.14 has no cluster support), for every limiter command; the number of redirects, the keys per
 *   primary and the replicas' copies are exactly what the slot map says.
 * - Failover, three ways: CLUSTER FAILOVER on a replica; kill -9 of a primary then CLUSTER FAILOVER FORCE
 *   on its replica; kill -9 and the cluster's automatic failover. Each time limiters (RL.TOKEN, RL.LEAKY
 *   NODELAY, RL.WINDOW FIXED, RL.SLIDINGLOG, with negligible refill / long windows, and RL.ACQUIRE's leases
 *   of 11 days, never released: a promoted replica must hold every one) are half used, the
 *   writes are acknowledged with WAIT 1, the failover happens while a client keeps asking, and the
 *   grants over the whole run must be exactly the limit: never more (no acknowledged grant lost), never
 *   fewer. Then the old primary (restarted when killed) is a replica holding byte-for-byte the new
 *   primary's state. The graceful one runs with 20 clients waiting (WAIT) on the primary: every one gets an
 *   answer and the primary stays up.
 * - Policies, set on every primary as docs/operations.md says (`redis-cli --cluster call ... RL.POLICY SET ...
 *   --cluster-only-masters`): every primary answers OK and holds it, every replica gets it by replication,
 *   RL.CHECK works on a key of each primary's slots (reached through MOVED), and after the three failovers
 *   each promoted replica continues its key's state exactly; the nodes restarted after kill -9 get the
 *   policy back by their full sync.
 * - scripts/cluster.sh start/status/stop on free ports, and nothing left running after stop.
 *
 * Every node is stopped on every path (SHUTDOWN NOSAVE, then SIGKILL): at the end, from atexit when the
 * harness gives up, from a signal handler on SIGTERM/SIGINT/watchdog; the harness's PDEATHSIG covers a
 * crash. Prints "integration_cluster: N passed, N failed". */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "clients.h"
#include "lock_checks.h"
#include "server.h"

#define NNODES 6
#define NSLOTS 16384
#define WATCHDOG_S 170

static server *nodes[NNODES];
static redisContext *admin_c[NNODES];  /* the test's own connections, for checks */
static redisContext *client_c[NNODES]; /* the cluster client's connections */
static int slot_owner[NSLOTS];         /* the client's slot map: node index, -1 unknown */
static char slot_tag[NSLOTS][12];      /* a hash tag whose slot is the index */

static int sh_base;          /* scripts/cluster.sh cluster, if one is up */
static char sh_dir[256];     /* its data directory */
static char sh_stop_cmd[512];

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- Slots ----------------------------------------------------------------------------------------- */

static uint16_t crc16(const char *buf, size_t len) { /* CRC16-CCITT (XMODEM), as Redis Cluster */
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)((unsigned char)buf[i] << 8);
        for (int b = 0; b < 8; b++) crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

/* The slot of a key: only the part between the first '{' and the next '}' is hashed, if non-empty. */
static int key_slot(const char *key, size_t len) {
    size_t s, e;
    for (s = 0; s < len && key[s] != '{'; s++) {}
    if (s < len) {
        for (e = s + 1; e < len && key[e] != '}'; e++) {}
        if (e < len && e > s + 1) return crc16(key + s + 1, e - s - 1) & (NSLOTS - 1);
    }
    return crc16(key, len) & (NSLOTS - 1);
}

static void fill_slot_tags(void) {
    int found = 0;
    for (unsigned n = 0; found < NSLOTS; n++) {
        char tag[12];
        snprintf(tag, sizeof tag, "t%u", n);
        int s = crc16(tag, strlen(tag)) & (NSLOTS - 1);
        if (!slot_tag[s][0]) {
            memcpy(slot_tag[s], tag, sizeof tag);
            found++;
        }
    }
}

/* --- Processes: stop everything, on every path -------------------------------------------------------- */

static int alive(int i) { return nodes[i] && nodes[i]->pid > 0; }

/* SHUTDOWN NOSAVE, SIGKILL if the node is still there after 5 s; never exits (safe from atexit). With
 * replicas_only, only a node that says it is a replica (a primary's SHUTDOWN waits for lagging
 * replicas, so replicas go first). */
static void node_halt(server *s, int replicas_only) {
    if (s->pid <= 0) return;
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", s->port, tv);
    if (c && !c->err) {
        redisSetTimeout(c, tv);
        redisReply *r = NULL;
        if (replicas_only) {
            r = redisCommand(c, "ROLE");
            int replica = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 && r->element[0]->str &&
                          strcmp(r->element[0]->str, "slave") == 0;
            if (r) freeReplyObject(r);
            r = NULL;
            if (!replica) {
                redisFree(c);
                return;
            }
        }
        r = redisCommand(c, "SHUTDOWN NOSAVE");
        if (r) freeReplyObject(r);
    }
    if (c) redisFree(c);
    for (int waited = 0; waited < 5000; waited += 10) {
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
            s->pid = 0;
            return;
        }
        sleep_ms(10);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
}

static void drop(redisContext **c) {
    if (*c) redisFree(*c);
    *c = NULL;
}

static void run_quiet(const char *command) {
    if (system(command) != 0) fprintf(stderr, "     command failed: %s\n", command);
}

static void cluster_sh_stop(void) {
    if (!sh_base) return;
    run_quiet(sh_stop_cmd);
    sh_base = 0;
}

static void stop_all(void) {
    for (int i = 0; i < NNODES; i++) {
        drop(&admin_c[i]);
        drop(&client_c[i]);
    }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < NNODES; i++)
            if (nodes[i]) node_halt(nodes[i], pass == 0);
    for (int i = 0; i < NNODES; i++) {
        if (!nodes[i]) continue;
        char rm[300];
        snprintf(rm, sizeof rm, "rm -rf '%s'", nodes[i]->dir);
        run_quiet(rm);
        for (int a = 0; a < nodes[i]->nargs; a++) free(nodes[i]->args[a]);
        free(nodes[i]);
        nodes[i] = NULL;
    }
    cluster_sh_stop();
    if (sh_dir[0]) {
        char rm[300];
        snprintf(rm, sizeof rm, "rm -rf '%s'", sh_dir);
        run_quiet(rm);
        sh_dir[0] = 0;
    }
}

/* On a signal: the harness's nodes die with us (PDEATHSIG); scripts/cluster.sh's daemons do not, so stop
 * them here with async-signal-safe calls only. */
static void on_signal(int sig) {
    static const char msg[] = "integration_cluster: interrupted or out of time, stopping the nodes\n";
    if (write(2, msg, sizeof msg - 1) < 0) {}
    if (sh_base) {
        pid_t sp = fork();
        if (sp == 0) {
            execl("/bin/sh", "sh", "-c", sh_stop_cmd, (char *)NULL);
            _exit(127);
        }
        if (sp > 0) waitpid(sp, NULL, 0);
    }
    const char *rm[NNODES + 4] = {"rm", "-rf"};
    int n = 2;
    if (sh_dir[0]) rm[n++] = sh_dir;
    for (int i = 0; i < NNODES; i++) {
        if (!nodes[i]) continue;
        if (nodes[i]->pid > 0) {
            kill(nodes[i]->pid, SIGKILL);
            waitpid(nodes[i]->pid, NULL, 0);
        }
        rm[n++] = nodes[i]->dir;
    }
    rm[n] = NULL;
    pid_t p = fork();
    if (p == 0) {
        execvp("rm", (char *const *)rm);
        _exit(127);
    }
    if (p > 0) waitpid(p, NULL, 0);
    _exit(128 + sig);
}

/* --- Connections and plain commands ---------------------------------------------------------------- */

static redisContext *admin(int i) {
    if (!admin_c[i]) admin_c[i] = server_connect(nodes[i]);
    return admin_c[i];
}

/* A fresh connection to a replica that serves reads (READONLY); the caller frees it. */
static redisContext *readonly_conn(int i) {
    redisContext *c = server_connect(nodes[i]);
    freeReplyObject(cmd(c, "READONLY"));
    return c;
}

static int node_of_port(int port) {
    for (int i = 0; i < NNODES; i++)
        if (nodes[i] && nodes[i]->port == port) return i;
    return -1;
}

/* INFO replication of a node: role (1 primary, 0 replica) and, for a replica, its primary's node index
 * and whether the link is up. */
typedef struct repl_info {
    int primary, master, link_up, replicas; /* replicas: a primary's online replicas */
} repl_info;

static repl_info replication(int i) {
    repl_info ri = {0, -1, 0, 0};
    redisReply *r = cmd(admin(i), "INFO replication");
    if (r->type == REDIS_REPLY_STRING) {
        ri.primary = strstr(r->str, "role:master") != NULL;
        const char *p = strstr(r->str, "master_port:");
        if (p) ri.master = node_of_port(atoi(p + 12));
        ri.link_up = strstr(r->str, "master_link_status:up") != NULL;
        for (const char *q = strstr(r->str, "\nslave"); q; q = strstr(q + 1, "\nslave"))
            ri.replicas += strstr(q, "state=online") != NULL && strstr(q, "state=online") < strchr(q + 1, '\n');
    }
    freeReplyObject(r);
    return ri;
}

static int cluster_state_ok(int i) {
    redisReply *r = cmd(admin(i), "CLUSTER INFO");
    int ok = r->type == REDIS_REPLY_STRING && strstr(r->str, "cluster_state:ok") != NULL;
    freeReplyObject(r);
    return ok;
}

/* --- The slot map as a node sees it (CLUSTER SLOTS) ------------------------------------------------- */

typedef struct range {
    int start, end, master, replicas;
} range;

static int cmp_range(const void *a, const void *b) { return ((const range *)a)->start - ((const range *)b)->start; }

/* Fills ranges sorted by start; returns how many, or -1 if the reply was not a slot map. */
static int slot_ranges(redisReply *r, range *out, int max) {
    if (r->type != REDIS_REPLY_ARRAY) return -1;
    int n = 0;
    for (size_t i = 0; i < r->elements && n < max; i++) {
        redisReply *e = r->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3) return -1;
        out[n].start = (int)e->element[0]->integer;
        out[n].end = (int)e->element[1]->integer;
        out[n].master = node_of_port((int)e->element[2]->element[1]->integer);
        out[n].replicas = (int)e->elements - 3;
        n++;
    }
    qsort(out, (size_t)n, sizeof *out, cmp_range);
    return n;
}

/* Every running node says cluster_state:ok, all agree on the owners of all 16384 slots, each primary
 * has at least min_replicas online replicas, and every replica's link to its primary is up. (Not from
 * CLUSTER SLOTS: it lists a replica only once its replication offset is non-zero, i.e. after the first
 * write or the primary's first replication PING, 10 s on an idle cluster.) */
static int cluster_ready(int min_replicas) {
    range first[64], view[64];
    int nfirst = -1;
    for (int i = 0; i < NNODES; i++) {
        if (!alive(i)) continue;
        if (!cluster_state_ok(i)) return 0;
        redisReply *r = cmd(admin(i), "CLUSTER SLOTS");
        int n = slot_ranges(r, view, 64);
        freeReplyObject(r);
        int covered = 0;
        for (int k = 0; k < n; k++) {
            covered += view[k].end - view[k].start + 1;
            if (view[k].master < 0) return 0;
        }
        if (n < 0 || covered != NSLOTS) return 0;
        if (nfirst < 0) {
            memcpy(first, view, sizeof view);
            nfirst = n;
        } else {
            if (n != nfirst) return 0;
            for (int k = 0; k < n; k++)
                if (view[k].start != first[k].start || view[k].end != first[k].end || view[k].master != first[k].master)
                    return 0;
        }
        repl_info ri = replication(i);
        if (!ri.primary && !ri.link_up) return 0;
        if (ri.primary && ri.replicas < min_replicas) return 0;
    }
    return nfirst > 0;
}

static int wait_cluster_ready(int min_replicas, long timeout_ms) {
    long long deadline = now_ms() + timeout_ms;
    while (now_ms() < deadline) {
        if (cluster_ready(min_replicas)) return 1;
        sleep_ms(50);
    }
    return 0;
}

/* The true owner of each slot, from node i's CLUSTER SLOTS. */
static void true_owners(int i, int *owner) {
    range rs[64];
    redisReply *r = cmd(admin(i), "CLUSTER SLOTS");
    int n = slot_ranges(r, rs, 64);
    freeReplyObject(r);
    for (int s = 0; s < NSLOTS; s++) owner[s] = -1;
    for (int k = 0; k < n; k++)
        for (int s = rs[k].start; s <= rs[k].end; s++) owner[s] = rs[k].master;
}

/* The replica of primary p (first one found), or -1. */
static int replica_of(int p) {
    for (int i = 0; i < NNODES; i++) {
        if (i == p || !alive(i)) continue;
        repl_info ri = replication(i);
        if (!ri.primary && ri.master == p) return i;
    }
    return -1;
}

/* --- A minimal cluster client ------------------------------------------------------------------------
 * Sends a command to the node its slot map names (or a given start node), and follows what a cluster
 * answers: MOVED (update the map, retry there), ASK (ASKING, retry there once), CLUSTERDOWN / TRYAGAIN /
 * MASTERDOWN / LOADING (wait, retry), and a refused or broken connection (refresh the map from any node
 * that answers, retry). Gives up after 20 s. */

static struct {
    long moved, ask, waits, conn_errors;
} stats;
static int last_node; /* the node that gave the last answer */

static redisContext *client_conn(int i) {
    if (i < 0 || !nodes[i]) return NULL;
    if (!client_c[i]) {
        struct timeval tv = {1, 0};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", nodes[i]->port, tv);
        if (!c || c->err) {
            if (c) redisFree(c);
            return NULL;
        }
        redisSetTimeout(c, (struct timeval){10, 0});
        client_c[i] = c;
    }
    return client_c[i];
}

static void refresh_slot_map(void) {
    for (int i = 0; i < NNODES; i++) {
        redisContext *c = client_conn(i);
        if (!c) continue;
        redisReply *r = redisCommand(c, "CLUSTER SLOTS");
        if (!r) {
            drop(&client_c[i]);
            continue;
        }
        range rs[64];
        int n = slot_ranges(r, rs, 64);
        freeReplyObject(r);
        if (n <= 0) continue;
        for (int k = 0; k < n; k++)
            for (int s = rs[k].start; s <= rs[k].end; s++) slot_owner[s] = rs[k].master;
        return;
    }
}

/* The same for a command whose key is argv[key_at] (RL.CHECK's is its second argument). */
static redisReply *cluster_argv_key(int start, int argc, const char **argv, const size_t *lens, int key_at) {
    int slot = key_slot(argv[key_at], lens[key_at]);
    int target = start >= 0 ? start : slot_owner[slot];
    int asking = 0;
    long long deadline = now_ms() + 20000;
    while (now_ms() < deadline) {
        if (target < 0) target = 0;
        redisContext *c = client_conn(target);
        redisReply *r = NULL;
        if (c && asking) {
            r = redisCommand(c, "ASKING");
            if (r) freeReplyObject(r);
        }
        if (c) r = redisCommandArgv(c, argc, argv, lens);
        asking = 0;
        if (!r) { /* refused, reset or timed out: ask the cluster again where the slot is */
            stats.conn_errors++;
            drop(&client_c[target]);
            sleep_ms(20);
            refresh_slot_map();
            target = slot_owner[slot] >= 0 && slot_owner[slot] != target ? slot_owner[slot] : (target + 1) % NNODES;
            continue;
        }
        if (r->type == REDIS_REPLY_ERROR) {
            int s, port;
            char host[64];
            if (sscanf(r->str, "MOVED %d %63[^:]:%d", &s, host, &port) == 3) {
                stats.moved++;
                if (s >= 0 && s < NSLOTS) slot_owner[s] = node_of_port(port);
                target = node_of_port(port);
                freeReplyObject(r);
                continue;
            }
            if (sscanf(r->str, "ASK %d %63[^:]:%d", &s, host, &port) == 3) {
                stats.ask++;
                target = node_of_port(port);
                asking = 1;
                freeReplyObject(r);
                continue;
            }
            if (!strncmp(r->str, "CLUSTERDOWN", 11) || !strncmp(r->str, "TRYAGAIN", 8) ||
                !strncmp(r->str, "MASTERDOWN", 10) || !strncmp(r->str, "LOADING", 7)) {
                stats.waits++;
                freeReplyObject(r);
                sleep_ms(20);
                continue;
            }
        }
        last_node = target;
        return r;
    }
    return NULL;
}

static redisReply *cluster_argv(int start, int argc, const char **argv, const size_t *lens) {
    return cluster_argv_key(start, argc, argv, lens, 1);
}

/* An RL.* command line (split on spaces) through the cluster client, from its slot map (start -1) or
 * from a given node. */
static rl_result cluster_rl(int start, const char *fmt, ...) {
    words w;
    va_list ap;
    va_start(ap, fmt);
    words_vformat(&w, fmt, ap);
    va_end(ap);
    redisReply *r = cluster_argv(start, w.argc, w.argv, w.lens);
    rl_result res = rl_of(r);
    if (r)
        freeReplyObject(r);
    else
        snprintf(res.error, sizeof res.error, "no answer from the cluster");
    return res;
}

/* --- Starting the cluster -------------------------------------------------------------------------- */

static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    int port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 &&
        getsockname(fd, (struct sockaddr *)&addr, &len) == 0)
        port = ntohs(addr.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

static int port_free(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = fd >= 0 && bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
    if (fd >= 0) close(fd);
    return ok;
}

static int cluster_start(void) {
    for (int i = 0; i < NNODES; i++) {
        /* The bus port is given explicitly: port + 10000 may not exist for an ephemeral port. */
        char bus[16];
        snprintf(bus, sizeof bus, "%d", free_port());
        const char *args[] = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                              "--cluster-node-timeout", "1000", "--cluster-port", bus, NULL};
        nodes[i] = server_start(args);
    }
    char line[1024];
    int n = snprintf(line, sizeof line, "redis-cli --cluster create");
    for (int i = 0; i < NNODES; i++) n += snprintf(line + n, sizeof line - n, " 127.0.0.1:%d", nodes[i]->port);
    snprintf(line + n, sizeof line - n, " --cluster-replicas 1 --cluster-yes > '%s/create.log' 2>&1", nodes[0]->dir);
    long long t0 = now_ms();
    int rc = system(line);
    printf("redis-cli --cluster create: %lld ms\n", now_ms() - t0);
    if (!CHECK(rc == 0)) {
        char cat[300];
        snprintf(cat, sizeof cat, "cat '%s/create.log' >&2", nodes[0]->dir);
        run_quiet(cat);
    }
    for (int s = 0; s < NSLOTS; s++) slot_owner[s] = -1;
    return CHECK(wait_cluster_ready(1, 20000));
}

/* --- Slots and key specs ----------------------------------------------------------------------------- */

static void test_keyslot(void) {
    static const char *keys[] = {"user:42", "{user42}:rl", "{user42}:other", "a{b}c", "{}x", "{{a}}", "a{b", "}{a}",
                                 "{a}}", "x{}{y}", "rl:token:api", "\xc3\xa9t\xc3\xa9", "", "{user1000}.following"};
    int bad = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0] + 300; i++) {
        char gen[32];
        const char *k = i < sizeof keys / sizeof keys[0] ? keys[i] : gen;
        if (k == gen) snprintf(gen, sizeof gen, "key:%zu:%d", i, (int)(i * 7919 % 1000));
        long long slot = cmd_int(admin(0), "CLUSTER KEYSLOT %s", k);
        if (slot != key_slot(k, strlen(k))) {
            bad++;
            fprintf(stderr, "     CLUSTER KEYSLOT %s = %lld, ours %d\n", k, slot, key_slot(k, strlen(k)));
        }
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(key_slot("{user42}:rl", 11), key_slot("{user42}:other", 14));
    CHECK_EQ(cmd_int(admin(0), "CLUSTER KEYSLOT {user42}:rl"), cmd_int(admin(0), "CLUSTER KEYSLOT user42"));
    for (int s = 0; s < NSLOTS; s += 1000) CHECK_EQ(key_slot(slot_tag[s], strlen(slot_tag[s])), s);
}

static void test_getkeys(void) {
    static const char *lines[] = {"COMMAND GETKEYS RL.TOKEN {u1}:rl 10 1 1000 COST 2 DRYRUN",
                                  "COMMAND GETKEYS RL.LEAKY {u1}:rl 10 1 1000 NODELAY BLOCK",
                                  "COMMAND GETKEYS RL.WINDOW {u1}:rl 10 1000 FIXED",
                                  "COMMAND GETKEYS RL.SLIDINGLOG {u1}:rl 10 1000 MINGAP 5",
                                  "COMMAND GETKEYS RL.SETSTATE {u1}:rl TOKEN 0 0 PXAT 1"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        redisReply *r = cmdline(admin(0), "%s", lines[i]);
        int ok = r->type == REDIS_REPLY_ARRAY && r->elements == 1 && strcmp(r->element[0]->str, "{u1}:rl") == 0;
        if (!CHECK(ok)) fprintf(stderr, "     %s\n", lines[i]);
        freeReplyObject(r);
    }
}

/* RL.ALL and RL.RESET declare all their keys: keys in two slots answer CROSSSLOT on any node and change
 * nothing; keys sharing a hash tag run on the node that owns the tag (the client follows MOVED). */
static void test_multikey(void) {
    static const char *crossed[] = {"RL.ALL 2 {a}:x {b}:y LIMIT TOKEN 5 1 1000 LIMIT WINDOW 3 1000",
                                    "RL.RESET {a}:x {b}:y"};
    for (size_t i = 0; i < sizeof crossed / sizeof crossed[0]; i++)
        for (int n = 0; n < NNODES; n++) {
            redisReply *r = cmdline(admin(n), "%s", crossed[i]);
            int ok = r->type == REDIS_REPLY_ERROR && strncmp(r->str, "CROSSSLOT", 9) == 0;
            if (!CHECK(ok)) fprintf(stderr, "     node %d: %s -> %s\n", n, crossed[i], r->str ? r->str : "?");
            freeReplyObject(r);
        }
    const char *line[] = {"RL.ALL", "2", "{u7}:s", "{u7}:h", "LIMIT", "TOKEN", "5", "1", "1000", "LIMIT", "WINDOW", "3",
                          "60000"};
    size_t lens[13];
    for (int i = 0; i < 13; i++) lens[i] = strlen(line[i]);
    for (int k = 0; k < 4; k++) {
        redisReply *r = cluster_argv(-1, 13, line, lens);
        CHECK(r && r->type == REDIS_REPLY_ARRAY && r->elements == 5 && r->element[0]->integer == (k < 3));
        if (r) freeReplyObject(r);
    }
    const char *reset[] = {"RL.RESET", "{u7}:s", "{u7}:h"};
    size_t rlens[] = {8, 6, 6};
    redisReply *r = cluster_argv(-1, 3, reset, rlens);
    CHECK(r && r->type == REDIS_REPLY_INTEGER && r->integer == 2);
    if (r) freeReplyObject(r);
}

/* A command sent straight to a node that does not own its key answers MOVED to the owner, and runs
 * nothing there. */
static void test_moved(void) {
    static const char *commands[] = {"RL.TOKEN %s 10 1 1000",          "RL.TOKEN %s 10 1 1000 COST 2 DRYRUN",
                                     "RL.LEAKY %s 10 1 1000",          "RL.LEAKY %s 10 1 1000 NODELAY",
                                     "RL.WINDOW %s 10 60000 FIXED",    "RL.WINDOW %s 10 60000 SLIDING DRYRUN",
                                     "RL.SLIDINGLOG %s 10 60000",      "RL.SLIDINGLOG %s 10 60000 MINGAP 5 COST 0",
                                     "RL.ACQUIRE %s 10 60000 ID a",    "RL.RELEASE %s a",
                                     "RL.RENEW %s a 1000",             "RL.SETSTATE %s TOKEN 0 0"};
    int owner[NSLOTS];
    true_owners(0, owner);
    const char *tags[] = {"{user42}", "{moved-a}", "{moved-b}", "{moved-c}"};
    int bad = 0, answered = 0;
    for (size_t t = 0; t < sizeof tags / sizeof tags[0]; t++) {
        char key[64];
        snprintf(key, sizeof key, "%s:rl", tags[t]);
        int slot = key_slot(key, strlen(key));
        int own = owner[slot];
        char expected[128];
        snprintf(expected, sizeof expected, "MOVED %d 127.0.0.1:%d", slot, nodes[own]->port);
        for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++) {
            char line[256];
            snprintf(line, sizeof line, commands[k], key);
            for (int i = 0; i < NNODES; i++) {
                if (i == own) continue;
                redisReply *r = cmdline(admin(i), "%s", line);
                if (!(r->type == REDIS_REPLY_ERROR && strcmp(r->str, expected) == 0)) {
                    bad++;
                    fprintf(stderr, "     %s on node %d: %s (expected %s)\n", line, i, r->str ? r->str : "?", expected);
                }
                freeReplyObject(r);
            }
            /* A replica in READONLY mode still redirects: every RL.* command is a write command. */
            int rep = replica_of(own);
            redisContext *ro = readonly_conn(rep);
            redisReply *r = cmdline(ro, "%s", line);
            if (!(r->type == REDIS_REPLY_ERROR && strcmp(r->str, expected) == 0)) {
                bad++;
                fprintf(stderr, "     READONLY replica: %s: %s\n", line, r->str ? r->str : "?");
            }
            freeReplyObject(r);
            redisFree(ro);
            /* The owner runs it. */
            r = cmdline(admin(own), "%s", line);
            if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "MOVED", 5) == 0) bad++;
            else answered++;
            freeReplyObject(r);
            freeReplyObject(cmd(admin(own), "DEL %s", key));
        }
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(answered, (int)(sizeof tags / sizeof tags[0] * sizeof commands / sizeof commands[0]));
    /* Keyless RL.CLOCK (test-clock) runs on every node, replicas included. */
    for (int i = 0; i < NNODES; i++) CHECK(cmd_int(admin(i), "RL.CLOCK GET") > 1700000000000LL);
}

/* --- Every slot ------------------------------------------------------------------------------------- */

/* Parameters that keep the keys for minutes (reset_after_ms; the fixed window is epoch-aligned, so it
 * is a 31-year one that no test run straddles), so the key counts below hold. */
static const char *const slot_commands[4] = {"RL.TOKEN {%s}:rl 10 1 600000", "RL.LEAKY {%s}:rl 10 1 600000 NODELAY",
                                             "RL.WINDOW {%s}:rl 10 1000000000000 FIXED",
                                             "RL.SLIDINGLOG {%s}:rl 10 600000"};

/* One key in each of the 16384 slots (the four commands in turn), each sent first to a node chosen
 * without looking at the slot map (the six nodes in turn), so most answers are MOVED and followed. */
static void test_all_slots(void) {
    int owner[NSLOTS];
    true_owners(0, owner);
    long moved0 = stats.moved, expected_moved = 0;
    int bad[4] = {0, 0, 0, 0}, served_by_owner = 0;
    long long t0 = now_ms();
    for (int s = 0; s < NSLOTS; s++) {
        int start = s % NNODES;
        expected_moved += start != owner[s];
        rl_result r = cluster_rl(start, slot_commands[s % 4], slot_tag[s]);
        if (!(r.ok && r.allowed == 1 && r.limit == 10 && r.remaining == 9 && r.retry_after_ms == -1)) {
            if (bad[s % 4]++ < 3) fprintf(stderr, "     slot %d: %s %s\n", s, slot_commands[s % 4], r.error);
        }
        served_by_owner += last_node == owner[s];
    }
    long long elapsed = now_ms() - t0;
    for (int k = 0; k < 4; k++) CHECK_EQ(bad[k], 0);
    CHECK_EQ(served_by_owner, NSLOTS);
    CHECK_EQ(stats.moved - moved0, expected_moved);
    printf("all slots: 16384 keys (4096 per command) in %lld ms, %ld MOVED followed\n", elapsed, stats.moved - moved0);

    /* Each primary holds exactly the keys of its slots, and its replica the same after WAIT. */
    int per_node[NNODES] = {0};
    for (int s = 0; s < NSLOTS; s++) per_node[owner[s]]++;
    for (int i = 0; i < NNODES; i++) {
        if (client_c[i] && replication(i).primary) {
            redisReply *w = redisCommand(client_c[i], "WAIT 1 5000");
            CHECK(w && w->type == REDIS_REPLY_INTEGER && w->integer == 1);
            if (w) freeReplyObject(w);
        }
    }
    for (int i = 0; i < NNODES; i++) {
        repl_info ri = replication(i);
        int expected = ri.primary ? per_node[i] : per_node[ri.master];
        CHECK_EQ(cmd_int(admin(i), "DBSIZE"), expected);
    }
    /* Replicas hold byte-for-byte the primaries' values and expiry (RL.SETSTATE / ZADD effects). */
    int dumps_bad = 0, dumps = 0;
    redisContext *ro[NNODES] = {0};
    for (int s = 0; s < NSLOTS; s += 37) {
        int p = owner[s], rep = replica_of(p);
        if (rep < 0) {
            dumps_bad++;
            continue;
        }
        if (!ro[rep]) ro[rep] = readonly_conn(rep);
        char key[32];
        snprintf(key, sizeof key, "{%.11s}:rl", slot_tag[s]);
        size_t l1;
        char *d = dump_key(admin(p), key, &l1);
        if (!d || !same_dump(admin(p), ro[rep], key) ||
            cmd_int(admin(p), "PEXPIRETIME %s", key) != cmd_int(ro[rep], "PEXPIRETIME %s", key))
            dumps_bad++;
        free(d);
        dumps++;
    }
    for (int i = 0; i < NNODES; i++)
        if (ro[i]) redisFree(ro[i]);
    CHECK_EQ(dumps_bad, 0);
    CHECK(dumps > 400);
}

/* --- Policies ------------------------------------------------------------------------------------ */

/* Negligible refill (1 token per 11.6 days) and a 31-year window, so that what a key used shows exactly on
 * the real clock, across the failovers too. */
#define CLUSTER_POLICY "LIMIT burst TOKEN 10 1 1000000000 LIMIT win WINDOW 20 1000000000000 FIXED"
#define POLICY_CALLS 3 /* RL.CHECK ... COST 2 on each key before the failovers */

static char policy_key[3][32]; /* a key in a slot of each primary, in main's order of the primaries */

/* One check: node i holds the policy as set (RL.POLICY GET has no key: a replica answers it itself). */
static void check_policy_on(int i, const char *when) {
    redisReply *r = cmd(admin(i), "RL.POLICY GET api");
    char *words = r->type == REDIS_REPLY_ARRAY ? reply_words(r) : strdup("(not the policy)");
    if (!CHECK(strcmp(words, CLUSTER_POLICY " ") == 0))
        fprintf(stderr, "     node %d (%s) %s: RL.POLICY GET api = %s\n", i, replication(i).primary ? "primary" : "replica",
                when, words);
    free(words);
    freeReplyObject(r);
}

/* RL.CHECK api key COST 2 through the cluster client, sent first to node start (-1: the slot map's owner),
 * as [allowed, burst's remaining, win's remaining] ({-1, -1, -1} when it is not a reply of the two limits). */
typedef struct check_seen {
    long long allowed, burst_left, win_left;
} check_seen;

static check_seen policy_check(int start, const char *key) {
    const char *argv[] = {"RL.CHECK", "api", key, "COST", "2"};
    size_t lens[5];
    for (int i = 0; i < 5; i++) lens[i] = strlen(argv[i]);
    redisReply *r = cluster_argv_key(start, 5, argv, lens, 2);
    check_seen seen = {-1, -1, -1};
    long long burst[6], win[6];
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 5 && rl_fields(r->element[3], burst) &&
        rl_fields(r->element[4], win)) {
        seen = (check_seen){r->element[0]->integer, burst[2], win[2]};
    } else {
        fprintf(stderr, "     RL.CHECK api %s: %s\n", key, r && r->str ? r->str : "no RL.CHECK reply");
    }
    if (r) freeReplyObject(r);
    return seen;
}

/* The documented way: one redis-cli --cluster call, sent through any node, runs RL.POLICY SET on every
 * primary and on no replica; its output names each primary with OK. */
static void set_policy_everywhere(const int *prim) {
    char line[600], log[300];
    snprintf(log, sizeof log, "%s/policy-call.log", nodes[0]->dir);
    snprintf(line, sizeof line,
             "redis-cli --cluster call 127.0.0.1:%d RL.POLICY SET api %s --cluster-only-masters > '%s' 2>&1",
             nodes[prim[1]]->port, CLUSTER_POLICY, log);
    CHECK(system(line) == 0);
    FILE *f = fopen(log, "r");
    char out[4096] = "";
    if (f) {
        size_t n = fread(out, 1, sizeof out - 1, f);
        out[n] = 0;
        fclose(f);
    }
    int oks = 0;
    for (const char *p = strstr(out, ": OK"); p; p = strstr(p + 1, ": OK")) oks++;
    CHECK_EQ(oks, 3); /* the three primaries, and no replica (which would answer READONLY) */
    for (int k = 0; k < 3; k++) {
        char want[64];
        snprintf(want, sizeof want, "127.0.0.1:%d: OK", nodes[prim[k]]->port);
        if (!CHECK(strstr(out, want) != NULL)) fprintf(stderr, "     no \"%s\" in:\n%s", want, out);
    }
    CHECK(strstr(out, "READONLY") == NULL);
}

/* Before the failovers: the policy on every primary and, by replication, on every replica; RL.CHECK on a key
 * of each primary's slots, sent to another node first, admitted there with the state adding up; a replica in
 * READONLY mode answers RL.CHECK_RO with what its primary holds. */
static void test_policies(const int *prim) {
    set_policy_everywhere(prim);
    int owner[NSLOTS];
    true_owners(0, owner);
    long moved0 = stats.moved;
    for (int k = 0; k < 3; k++) {
        int p = prim[k], slot = NSLOTS - 1;
        while (slot > 0 && owner[slot] != p) slot--; /* the last slot of p's: no failover scenario's key */
        snprintf(policy_key[k], sizeof policy_key[k], "{%s}:pol", slot_tag[slot]);
        check_policy_on(p, "after --cluster call");
        for (int i = 1; i <= POLICY_CALLS; i++) {
            check_seen seen = policy_check((p + 1) % NNODES, policy_key[k]);
            if (!CHECK(seen.allowed == 1 && seen.burst_left == 10 - 2 * i && seen.win_left == 20 - 2 * i && last_node == p))
                fprintf(stderr, "     %s call %d: allowed %lld, left %lld and %lld, from node %d (owner %d)\n",
                        policy_key[k], i, seen.allowed, seen.burst_left, seen.win_left, last_node, p);
        }
        redisReply *w = cmd(admin(p), "WAIT 1 5000");
        CHECK(w->type == REDIS_REPLY_INTEGER && w->integer == 1);
        freeReplyObject(w);
        int rep = replica_of(p);
        if (!CHECK(rep >= 0)) continue;
        check_policy_on(rep, "by replication");
        redisContext *ro = readonly_conn(rep);
        redisReply *r = cmd(ro, "RL.CHECK_RO api %s COST 0", policy_key[k]);
        long long burst[6], win[6];
        int ok = r->type == REDIS_REPLY_ARRAY && r->elements == 5 && rl_fields(r->element[3], burst) &&
                 rl_fields(r->element[4], win);
        CHECK(ok && r->element[0]->integer == 1 && burst[2] == 10 - 2 * POLICY_CALLS && win[2] == 20 - 2 * POLICY_CALLS);
        freeReplyObject(r);
        redisFree(ro);
    }
    CHECK(stats.moved - moved0 >= 3); /* each key was reached through MOVED */
}

/* After the failovers: each key's slots are served by the replica promoted in its shard, which continues the
 * key's state (one more call of 2, nothing reset), and every node, the ones restarted empty after kill -9
 * included, holds the policy. */
static void test_policies_after_failovers(const int *promoted) {
    refresh_slot_map();
    for (int k = 0; k < 3; k++) {
        check_seen seen = policy_check(-1, policy_key[k]);
        int after = POLICY_CALLS + 1;
        if (!CHECK(seen.allowed == 1 && seen.burst_left == 10 - 2 * after && seen.win_left == 20 - 2 * after &&
                   last_node == promoted[k]))
            fprintf(stderr, "     %s after the failover: allowed %lld, left %lld and %lld, from node %d (promoted %d)\n",
                    policy_key[k], seen.allowed, seen.burst_left, seen.win_left, last_node, promoted[k]);
    }
    for (int i = 0; i < NNODES; i++) check_policy_on(i, "after the failovers");
    printf("policies: set on the 3 primaries by redis-cli --cluster call, on every replica by replication; each "
           "promoted replica continued its key (%d calls of 2 before, 1 after)\n", POLICY_CALLS);
}

/* --- Failover ------------------------------------------------------------------------------------- */

typedef struct limiter {
    const char *name, *fmt; /* fmt takes the hash tag and the scenario's label */
    long long limit;
} limiter;

static const limiter limiters[] = {
    {"RL.TOKEN", "RL.TOKEN {%s}:%s:tb 100 1 1000000000", 100},         /* 1 token per 11.6 days */
    {"RL.LEAKY NODELAY", "RL.LEAKY {%s}:%s:lb 80 1 1000000000 NODELAY", 80},
    {"RL.WINDOW FIXED", "RL.WINDOW {%s}:%s:fw 60 1000000000000 FIXED", 60}, /* a 31-year window */
    {"RL.SLIDINGLOG", "RL.SLIDINGLOG {%s}:%s:sl 50 3600000", 50},
    {"RL.ACQUIRE", "RL.ACQUIRE {%s}:%s:cc 40 1000000000", 40}, /* leases of 11.6 days, never released */
};
#define NLIM ((int)(sizeof limiters / sizeof limiters[0]))

typedef enum { FO_MANUAL, FO_KILL_FORCE, FO_KILL_AUTO } fo_kind;

static void key_of(char *out, size_t n, int l, const char *tag, const char *label) {
    /* "RL.X {tag}:label:xx ..." -> "{tag}:label:xx" */
    char line[256];
    snprintf(line, sizeof line, limiters[l].fmt, tag, label);
    char *k = strchr(line, ' ') + 1;
    *strchr(k, ' ') = 0;
    snprintf(out, n, "%s", k);
}

/* Wait until node i is a replica of p with its link up. */
static int wait_replica_of(int i, int p, long timeout_ms) {
    long long deadline = now_ms() + timeout_ms;
    while (now_ms() < deadline) {
        repl_info ri = replication(i);
        if (!ri.primary && ri.master == p && ri.link_up) return 1;
        sleep_ms(50);
    }
    return 0;
}

/* Locks (LOCKOUT, RL.BLOCK) on node p's slots before a failover: a window and a sliding log locked by LOCKOUT
 * (11.6 days, one strike each), and a key locked by hand before any call (a lock alone). */
static const char *const lock_lines[] = {"RL.WINDOW {%s}:%s:lw 1 1000000000000 FIXED LOCKOUT 1000000000",
                                         "RL.SLIDINGLOG {%s}:%s:ll 1 3600000 LOCKOUT 1000000000"};
static const char *const lock_suffixes[] = {"lw", "ll", "lk"};

static void lock_keys(int p, const char *tag, const char *label) {
    for (int i = 0; i < 2; i++) {
        char line[160];
        snprintf(line, sizeof line, lock_lines[i], tag, label);
        CHECK(rl(admin(p), "%s", line).allowed == 1);
        rl_result denied = rl(admin(p), "%s", line); /* the second locks */
        CHECK(denied.allowed == 0 && denied.retry_after_ms >= 1000000000 - 60000);
    }
    CHECK(cmd_status_is(admin(p), "OK", "RL.BLOCK {%s}:%s:lk 1000000000", tag, label));
}

/* After the failover, the new primary (rep) holds every lock, as its replica (ro) does: each call denied, the
 * strikes kept, the state byte for byte the same on both. */
static void locks_kept(int rep, redisContext *ro, const char *tag, const char *label) {
    for (int i = 0; i < 3; i++) {
        char key[96];
        snprintf(key, sizeof key, "{%s}:%s:%s", tag, label, lock_suffixes[i]);
        redisReply *info = redisCommand(admin(rep), "RL.LOCKINFO %s", key);
        int ok = info && info->type == REDIS_REPLY_ARRAY && info->elements == 2;
        CHECK(ok && info->element[0]->integer > 1000000000 - 600000);
        CHECK(ok && info->element[1]->integer == (i < 2 ? 1 : 0));
        if (info) freeReplyObject(info);
        CHECK(same_dump(admin(rep), ro, key));
        if (i < 2) {
            char line[160];
            snprintf(line, sizeof line, lock_lines[i], tag, label);
            CHECK(rl(admin(rep), "%s", line).allowed == 0);
        } else {
            CHECK(rl(admin(rep), "RL.TOKEN %s 10 1 1000", key).allowed == 0);
        }
    }
}

static void failover_scenario(fo_kind kind, int p, const char *label) {
    static const char *names[] = {"CLUSTER FAILOVER (graceful)", "kill -9 + CLUSTER FAILOVER FORCE",
                                  "kill -9 + automatic failover"};
    int rep = replica_of(p);
    if (!CHECK(rep >= 0)) return;
    int owner[NSLOTS];
    true_owners(p, owner);
    const char *tag = NULL;
    for (int s = 0; s < NSLOTS && !tag; s++)
        if (owner[s] == p) tag = slot_tag[s];
    refresh_slot_map();

    long long admitted[NLIM] = {0}, attempts[NLIM] = {0}, after[NLIM] = {0}, last_remaining[NLIM];
    int errors = 0, elsewhere = 0;
    for (int l = 0; l < NLIM; l++) last_remaining[l] = -1;
    /* Half of each limit, acknowledged by the replica. */
    for (int l = 0; l < NLIM; l++) {
        for (long long i = 0; i < limiters[l].limit / 2; i++) {
            rl_result r = cluster_rl(-1, limiters[l].fmt, tag, label);
            attempts[l]++;
            if (r.ok) admitted[l] += r.allowed;
            else errors++;
            elsewhere += last_node != p;
        }
    }
    CHECK_EQ(elsewhere, 0);
    lock_keys(p, tag, label);
    redisReply *w = redisCommand(client_conn(p), "WAIT 1 5000");
    CHECK(w && w->type == REDIS_REPLY_INTEGER && w->integer == 1);
    if (w) freeReplyObject(w);

    /* A graceful failover pauses the primary's writes: clients waiting with WAIT on it then (one token every
     * 50 ms, so their turns keep coming, and their key's TTL keeps lapsing) must all get an answer, and the
     * primary must not write from a timer meanwhile (that aborted it: module/wait.c, "Writes held"). */
    load *waiters = NULL;
    volatile int waiters_port = nodes[p]->port;
    char wait_line[128];
    snprintf(wait_line, sizeof wait_line, "RL.TOKEN {%s}:%s:wait 1 1 50 WAIT 5000", tag, label);
    if (kind == FO_MANUAL) {
        waiters = load_start(&waiters_port, 20, wait_line);
        sleep_ms(300);
    }

    long long t0 = now_ms();
    if (kind == FO_MANUAL) {
        CHECK(cmd_status_is(admin(rep), "OK", "CLUSTER FAILOVER"));
    } else {
        drop(&admin_c[p]);
        server_kill9(nodes[p]);
        if (kind == FO_KILL_FORCE) CHECK(cmd_status_is(admin(rep), "OK", "CLUSTER FAILOVER FORCE"));
    }

    /* Keep asking, round robin, through the failover: twice each limit in all, and at least 20 answers
     * per limiter from the promoted replica. */
    long long first_served = -1, deadline = now_ms() + 30000;
    for (;;) {
        int more = 0;
        for (int l = 0; l < NLIM; l++) more |= attempts[l] < 2 * limiters[l].limit || after[l] < 20;
        if (!more || now_ms() > deadline) break;
        for (int l = 0; l < NLIM; l++) {
            rl_result r = cluster_rl(-1, limiters[l].fmt, tag, label);
            attempts[l]++;
            if (!r.ok) {
                if (errors++ < 5) fprintf(stderr, "     %s: %s\n", limiters[l].name, r.error);
                continue;
            }
            admitted[l] += r.allowed;
            last_remaining[l] = r.remaining;
            if (last_node == rep) {
                after[l]++;
                if (first_served < 0) first_served = now_ms() - t0;
            }
        }
    }
    CHECK_EQ(errors, 0);
    printf("failover %s: %s, promoted replica served after %lld ms\n", label, names[kind], first_served);
    if (waiters) {
        waiters_port = nodes[rep]->port;
        sleep_ms(300);
        load_counts w = load_stop(waiters);
        printf("  20 clients on RL.TOKEN ... WAIT 5000 through it: %lld requests, %lld admitted, %lld errors (first: %s), "
               "%lld dropped, %lld hung\n",
               w.sent, w.admitted, w.errors, w.first_error, w.dropped, w.hung);
        CHECK(w.admitted > 0);
        CHECK_EQ(w.dropped + w.hung, 0); /* every request got an answer */
        CHECK(cmd_status_is(admin(p), "PONG", "PING"));
    }
    for (int l = 0; l < NLIM; l++) {
        printf("  %-17s admitted %3lld of %3lld attempts (limit %3lld), %lld answers from the new primary\n",
               limiters[l].name, admitted[l], attempts[l], limiters[l].limit, after[l]);
        if (!CHECK(admitted[l] <= limiters[l].limit))
            fprintf(stderr, "     %s over-admitted across the failover: %lld > %lld\n", limiters[l].name, admitted[l],
                    limiters[l].limit);
        CHECK_EQ(admitted[l], limiters[l].limit);
        CHECK(after[l] >= 20);
        CHECK_EQ(last_remaining[l], 0);
    }
    CHECK(replication(rep).primary);

    /* The old primary (restarted after kill -9: empty, its nodes.conf kept) is now the new primary's
     * replica and holds exactly its state. */
    if (kind != FO_MANUAL) {
        server_restart(nodes[p]);
        drop(&client_c[p]);
    }
    CHECK(wait_replica_of(p, rep, 15000));
    w = redisCommand(client_conn(rep), "WAIT 1 5000");
    CHECK(w && w->type == REDIS_REPLY_INTEGER && w->integer == 1);
    if (w) freeReplyObject(w);
    redisContext *ro = readonly_conn(p);
    for (int l = 0; l < NLIM; l++) {
        char key[64];
        key_of(key, sizeof key, l, tag, label);
        size_t len;
        char *d = dump_key(admin(rep), key, &len);
        CHECK(d != NULL);
        CHECK(same_dump(admin(rep), ro, key));
        CHECK_EQ(cmd_int(ro, "PEXPIRETIME %s", key), cmd_int(admin(rep), "PEXPIRETIME %s", key));
        free(d);
        /* And the new primary still refuses: the limit is spent. */
        rl_result r = cluster_rl(-1, limiters[l].fmt, tag, label);
        CHECK(r.ok && r.allowed == 0 && last_node == rep);
    }
    locks_kept(rep, ro, tag, label);
    redisFree(ro);
    CHECK(wait_cluster_ready(1, 20000));
}

/* --- scripts/cluster.sh ------------------------------------------------------------------------------ */

static int pid_running(int pid) { /* exists and is not a zombie waiting for init */
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static void test_cluster_sh(void) {
    srand((unsigned)(time(NULL) ^ getpid()));
    int base = 0;
    for (int attempt = 0; attempt < 100 && !base; attempt++) {
        int b = 20000 + rand() % 9000, ok = 1;
        for (int i = 0; i < NNODES && ok; i++) ok = port_free(b + i) && port_free(b + i + 10000);
        if (ok) base = b;
    }
    if (!CHECK(base > 0)) return;
    snprintf(sh_dir, sizeof sh_dir, "/tmp/rl-cluster-sh-XXXXXX");
    if (!CHECK(mkdtemp(sh_dir) != NULL)) return;
    snprintf(sh_stop_cmd, sizeof sh_stop_cmd, "RL_CLUSTER_DIR='%s/data' scripts/cluster.sh stop %d >/dev/null 2>&1",
             sh_dir, base);
    sh_base = base;
    char line[700];
    snprintf(line, sizeof line, "RL_CLUSTER_DIR='%s/data' scripts/cluster.sh start %d > '%s/start.log' 2>&1", sh_dir,
             base, sh_dir);
    long long t0 = now_ms();
    int rc = system(line);
    if (!CHECK(rc == 0)) {
        snprintf(line, sizeof line, "cat '%s/start.log' >&2", sh_dir);
        run_quiet(line);
        cluster_sh_stop();
        return;
    }
    long long started = now_ms() - t0;
    snprintf(line, sizeof line, "RL_CLUSTER_DIR='%s/data' scripts/cluster.sh status %d > /dev/null 2>&1", sh_dir, base);
    CHECK(system(line) == 0);

    /* redis-cli -c follows MOVED: every limiter answers through the first node. */
    static const struct {
        const char *args, *expected;
    } calls[] = {{"RL.TOKEN {user42}:rl 10 1 1000", "1 10 9 -1 1000 0"},
                 {"RL.WINDOW {user43}:rl 10 60000 FIXED COST 3", "1 10 7 -1"},
                 {"RL.LEAKY {user44}:rl 5 1 1000 NODELAY", "1 5 4 -1 1000 0"},
                 {"RL.SLIDINGLOG {user45}:rl 3 1000", "1 3 2 -1 1000 0"}};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        snprintf(line, sizeof line, "redis-cli -c -p %d %s | tr '\\n' ' '", base, calls[i].args);
        FILE *p = popen(line, "r");
        char out[256] = "";
        if (p) {
            size_t n = fread(out, 1, sizeof out - 1, p);
            out[n] = 0;
            pclose(p);
        }
        if (!CHECK(strncmp(out, calls[i].expected, strlen(calls[i].expected)) == 0))
            fprintf(stderr, "     %s -> \"%s\"\n", calls[i].args, out);
    }
    /* The nodes' pids, then stop: all gone, ports closed, data removed. */
    int pids[NNODES] = {0};
    for (int i = 0; i < NNODES; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/data/%d/redis.pid", sh_dir, base + i);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%d", &pids[i]) != 1) pids[i] = 0;
            fclose(f);
        }
        CHECK(pids[i] > 0 && pid_running(pids[i]));
    }
    t0 = now_ms();
    snprintf(line, sizeof line, "RL_CLUSTER_DIR='%s/data' scripts/cluster.sh stop %d > /dev/null 2>&1", sh_dir, base);
    CHECK(system(line) == 0);
    long long stopped = now_ms() - t0;
    sh_base = 0;
    for (int i = 0; i < NNODES; i++) {
        CHECK(pids[i] > 0 && !pid_running(pids[i]));
        CHECK(port_free(base + i));
    }
    snprintf(line, sizeof line, "%s/data", sh_dir);
    CHECK(access(line, F_OK) != 0);
    printf("scripts/cluster.sh: start %lld ms, stop %lld ms, base port %d\n", started, stopped, base);
}

int main(void) {
    atexit(stop_all);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a write to a killed node is an error reply, not the end of the test */
    alarm(WATCHDOG_S);
    setvbuf(stdout, NULL, _IOLBF, 0);

    fill_slot_tags();
    long long t0 = now_ms();
    if (!cluster_start()) {
        fprintf(stderr, "integration_cluster: the cluster did not become ready (logs: %s/redis.log ...)\n", nodes[0]->dir);
        return check_summary("integration_cluster"); /* atexit stops the nodes */
    }
    printf("cluster: 3 primaries + 3 replicas up in %lld ms\n", now_ms() - t0);

    test_keyslot();
    test_getkeys();
    test_multikey();
    test_moved();
    test_all_slots();

    /* Three shards, three ways to fail over. */
    int prim[3], np = 0;
    for (int i = 0; i < NNODES && np < 3; i++)
        if (replication(i).primary) prim[np++] = i;
    CHECK_EQ(np, 3);
    if (np == 3) {
        int promoted[3];
        for (int k = 0; k < 3; k++) promoted[k] = replica_of(prim[k]);
        test_policies(prim);
        failover_scenario(FO_MANUAL, prim[0], "a");
        failover_scenario(FO_KILL_FORCE, prim[1], "b");
        failover_scenario(FO_KILL_AUTO, prim[2], "c");
        test_policies_after_failovers(promoted);
    }
    printf("client: %ld MOVED, %ld ASK, %ld waits (CLUSTERDOWN/TRYAGAIN), %ld connection errors\n", stats.moved,
           stats.ask, stats.waits, stats.conn_errors);
    stop_all();

    test_cluster_sh();
    stop_all();
    printf("total %lld ms\n", now_ms() - t0);
    return check_summary("integration_cluster");
}
