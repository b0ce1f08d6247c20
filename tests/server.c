/* server.c -- start, stop and talk to real redis-server processes for the integration tests. */
#define _GNU_SOURCE
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
    fprintf(stderr, "test harness: %s\n", what);
    exit(2);
}

void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) != 0)
        die("no free port");
    close(fd);
    return ntohs(addr.sin_port);
}

static const char *module_path(void) {
    static char path[PATH_MAX];
    const char *env = getenv("RL_MODULE");
    if (!realpath(env ? env : "build/ratelimit.so", path)) die("module not found (build/ratelimit.so or $RL_MODULE)");
    return path;
}

static const char *const *wrapper;

void server_set_wrapper(const char *const *prefix) { wrapper = prefix; }

static void spawn(server *s) {
    char port[16], log[300];
    snprintf(port, sizeof port, "%d", s->port);
    snprintf(log, sizeof log, "%s/redis.log", s->dir);
    const char *argv[SERVER_MAX_ARGS + 64];
    int n = 0;
    char vglog[300];
    for (int i = 0; wrapper && wrapper[i] && i < 24; i++) argv[n++] = wrapper[i];
    if (wrapper && strstr(wrapper[0], "valgrind")) {
        snprintf(vglog, sizeof vglog, "--log-file=%s/vg.%%p.log", s->dir);
        argv[n++] = vglog;
    }
    const char *server_bin = getenv("REDIS_SERVER"); /* set by make test's server matrix; else PATH's */
    argv[n++] = server_bin && *server_bin ? server_bin : "redis-server";
    const char *fixed[] = {"--port", port, "--bind", "127.0.0.1", "--dir", s->dir, "--logfile", log,
                           "--save", "", "--daemonize", "no", "--enable-debug-command", "local",
                           "--repl-diskless-sync-delay", "0",
                           "--loadmodule", module_path(), "test-clock"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) argv[n++] = fixed[i];
    for (int i = 0; i < s->nargs; i++) argv[n++] = s->args[i];
    argv[n] = NULL;

    pid_t parent = getpid();
    s->pid = fork();
    if (s->pid < 0) die("fork failed");
    if (s->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        /* The server logs to its logfile; what else it prints (a sanitizer's report, a crash) is kept
         * beside it. */
        char out[300];
        snprintf(out, sizeof out, "%s/stdio.log", s->dir);
        int fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
}

/* Set when a readiness probe found something on the port that accepts connections but gives no Redis
 * reply in time: said when the server does not start. */
static int silent_port;

static int wait_up(server *s) {
    for (int i = 0; i < (wrapper ? 6000 : 500); i++) {
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = 0;
            return 0;
        }
        struct timeval tv = {0, 200000};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", s->port, tv);
        if (c && !c->err) {
            /* A reply timeout too (the connect timeout does not bound replies): whatever listens on the
             * port may accept connections and never answer. A server slow to answer (under valgrind) is
             * asked again on the next round. */
            redisSetTimeout(c, (struct timeval){2, 0});
            /* Up (PING answers -LOADING while the data set loads), and ours: another test may have taken
             * a port we freed (a restart reuses its port). */
            redisReply *ping = redisCommand(c, "PING");
            int up = ping && ping->type == REDIS_REPLY_STATUS;
            if (!ping && (c->err == REDIS_ERR_IO || c->err == REDIS_ERR_EOF || c->err == REDIS_ERR_PROTOCOL))
                silent_port = s->port;
            if (ping) freeReplyObject(ping);
            redisReply *r = up ? redisCommand(c, "INFO server") : NULL;
            const char *pid = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "\r\nprocess_id:") : NULL;
            int ours = pid && atol(pid + 13) == (long)s->pid;
            if (r) freeReplyObject(r);
            redisFree(c);
            if (ours) return 1;
        } else if (c) {
            redisFree(c);
        }
        sleep_ms(10);
    }
    return 0;
}

static void start_failed(const server *s, const char *what) {
    char msg[512];
    int n = snprintf(msg, sizeof msg, "redis-server did not %s (see %s/redis.log)", what, s->dir);
    if (silent_port && n > 0 && (size_t)n < sizeof msg)
        snprintf(msg + n, sizeof msg - (size_t)n,
                 "; something on port %d accepts connections but does not answer as Redis", silent_port);
    die(msg);
}

server *server_start(const char *const *extra) {
    server *s = calloc(1, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "/tmp/rl-test-XXXXXX");
    if (!mkdtemp(s->dir)) die("mkdtemp failed");
    for (; extra && extra[s->nargs]; s->nargs++) {
        if (s->nargs == SERVER_MAX_ARGS) die("too many server arguments");
        s->args[s->nargs] = strdup(extra[s->nargs]);
    }
    silent_port = 0;
    for (int attempt = 0; attempt < 5; attempt++) {
        s->port = free_port();
        spawn(s);
        if (wait_up(s)) return s;
        if (s->pid > 0) server_kill9(s);
    }
    start_failed(s, "start");
    return NULL;
}

void server_restart(server *s) {
    if (s->pid > 0) die("server_restart: server still running");
    silent_port = 0;
    spawn(s);
    if (!wait_up(s)) start_failed(s, "restart");
}

static int reap(server *s, int timeout_ms) {
    for (int waited = 0; waited <= timeout_ms; waited += 10) {
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
            s->pid = 0;
            return 1;
        }
        sleep_ms(10);
    }
    return 0;
}

void server_kill9(server *s) {
    if (s->pid <= 0) return;
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
}

void server_shutdown(server *s) {
    if (s->pid <= 0) return;
    redisContext *c = server_connect(s);
    redisReply *r = redisCommand(c, "SHUTDOWN NOSAVE");
    if (r) freeReplyObject(r);
    redisFree(c);
    if (!reap(s, wrapper ? 60000 : 5000)) server_kill9(s);
}

void server_stop(server *s) {
    if (!s) return;
    server_shutdown(s);
    char cmdline[300];
    snprintf(cmdline, sizeof cmdline, "rm -rf '%s'", s->dir);
    if (system(cmdline) != 0) fprintf(stderr, "test harness: could not remove %s\n", s->dir);
    for (int i = 0; i < s->nargs; i++) free(s->args[i]);
    free(s);
}

redisContext *server_kill9_restart(server *s, redisContext *c) {
    redisFree(c);
    server_kill9(s);
    server_restart(s);
    return server_connect(s);
}

redisContext *server_shutdown_restart(server *s, redisContext *c) {
    redisFree(c);
    server_shutdown(s);
    server_restart(s);
    return server_connect(s);
}

const char *const server_aof_always[] = {"--appendonly", "yes", "--appendfsync", "always", NULL};

redisContext *port_connect(int port) {
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) die("cannot connect to redis-server");
    redisSetTimeout(c, (struct timeval){10, 0});
    return c;
}

redisContext *server_connect(const server *s) { return port_connect(s->port); }

static redisReply *checked(redisContext *c, redisReply *r) {
    if (!r) {
        fprintf(stderr, "test harness: connection error: %s\n", c->errstr);
        exit(2);
    }
    return r;
}

redisReply *cmd(redisContext *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    return checked(c, r);
}

redisReply *cmdargv(redisContext *c, int argc, const char **argv, const size_t *lens) {
    return checked(c, redisCommandArgv(c, argc, argv, lens));
}

long long cmd_int(redisContext *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = checked(c, redisvCommand(c, fmt, ap));
    va_end(ap);
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : LLONG_MIN;
    freeReplyObject(r);
    return v;
}

int cmd_status_is(redisContext *c, const char *text, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = checked(c, redisvCommand(c, fmt, ap));
    va_end(ap);
    int ok = (r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR) && strcmp(r->str, text) == 0;
    if (!ok) fprintf(stderr, "     reply was: %s\n", r->str ? r->str : "(not a string)");
    freeReplyObject(r);
    return ok;
}

static redisReply *vcmdline(redisContext *c, const char *fmt, va_list ap) {
    words w;
    words_vformat(&w, fmt, ap);
    return checked(c, redisCommandArgv(c, w.argc, w.argv, w.lens));
}

redisReply *cmdline(redisContext *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = vcmdline(c, fmt, ap);
    va_end(ap);
    return r;
}

rl_result rl_of(const redisReply *r) {
    rl_result res = {0};
    if (r && r->type == REDIS_REPLY_ERROR) {
        snprintf(res.error, sizeof res.error, "%s", r->str);
    } else if (r && r->type == REDIS_REPLY_ARRAY &&
               (r->elements == 6 || (r->elements == 7 && (r->element[6]->type == REDIS_REPLY_STRING ||
                                                         r->element[6]->type == REDIS_REPLY_NIL)))) {
        long long *fields[6] = {&res.allowed, &res.limit, &res.remaining, &res.retry_after_ms,
                                &res.reset_after_ms, &res.wait_ms};
        res.ok = 1;
        for (int i = 0; i < 6; i++) {
            if (r->element[i]->type != REDIS_REPLY_INTEGER) res.ok = 0;
            *fields[i] = r->element[i]->integer;
        }
    }
    return res;
}

rl_result rl(redisContext *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = vcmdline(c, fmt, ap);
    va_end(ap);
    rl_result res = rl_of(r);
    freeReplyObject(r);
    return res;
}

char *dump_key(redisContext *c, const char *key, size_t *len) {
    redisReply *r = cmd(c, "DUMP %s", key);
    char *out = NULL;
    *len = 0;
    if (r->type == REDIS_REPLY_STRING) {
        out = malloc(r->len + 1);
        memcpy(out, r->str, r->len);
        *len = r->len;
    }
    freeReplyObject(r);
    return out;
}

int same_dump(redisContext *a, redisContext *b, const char *key) {
    size_t la, lb;
    char *da = dump_key(a, key, &la), *db = dump_key(b, key, &lb);
    int same = (!da && !db) || (da && db && la == lb && memcmp(da, db, la) == 0);
    free(da);
    free(db);
    return same;
}

char *raw_exchange(int port, const char *request, const char *until) {
    const size_t cap = 65536;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) die("raw connect failed");
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (write(fd, request, strlen(request)) != (ssize_t)strlen(request)) die("raw write failed");
    char *buf = calloc(1, cap + 1);
    size_t got = 0;
    while (got < cap && !strstr(buf, until)) {
        ssize_t n = read(fd, buf + got, cap - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    return buf;
}

int replica_wait_synced(redisContext *replica) {
    for (int i = 0; i < 1000; i++) {
        redisReply *r = cmd(replica, "INFO replication");
        int up = r->type == REDIS_REPLY_STRING && strstr(r->str, "master_link_status:up") != NULL;
        freeReplyObject(r);
        if (up) return 1;
        sleep_ms(10);
    }
    return 0;
}

int command_info_is(redisContext *c, const char *name, long long arity, const char *flags) {
    redisReply *r = cmd(c, "COMMAND INFO %s", name);
    int ok = 0;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->type == REDIS_REPLY_ARRAY &&
        r->element[0]->elements >= 3) {
        redisReply *info = r->element[0];
        char got[256] = "";
        for (size_t i = 0; i < info->element[2]->elements; i++) {
            const char *f = info->element[2]->element[i]->str;
            if (strcmp(f, "module") == 0) continue; /* Redis adds it to every module command */
            size_t used = strlen(got);
            snprintf(got + used, sizeof got - used, "%s%s", used ? " " : "", f);
        }
        ok = info->element[1]->integer == arity && strcmp(got, flags) == 0;
        if (!ok) fprintf(stderr, "     COMMAND INFO %s: arity %lld, flags \"%s\"\n", name, info->element[1]->integer, got);
    }
    freeReplyObject(r);
    return ok;
}

server *replica_start(const server *primary) {
    char port[16];
    snprintf(port, sizeof port, "%d", primary->port);
    const char *args[] = {"--replicaof", "127.0.0.1", port, NULL};
    server *r = server_start(args);
    redisContext *c = server_connect(r);
    int synced = replica_wait_synced(c);
    redisFree(c);
    if (!synced) {
        char msg[512];
        snprintf(msg, sizeof msg, "replica on port %d did not sync with its primary on port %d (see %s/redis.log)",
                 r->port, primary->port, r->dir);
        die(msg);
    }
    return r;
}

int rl_fields(const redisReply *r, long long f[6]) {
    rl_result x = rl_of(r);
    const long long v[6] = {x.allowed, x.limit, x.remaining, x.retry_after_ms, x.reset_after_ms, x.wait_ms};
    for (int i = 0; i < 6; i++) f[i] = x.ok ? v[i] : 0;
    return x.ok;
}

int split_words(char *line, const char **argv, size_t *lens, int max) {
    int argc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " ", &save); tok && argc < max; tok = strtok_r(NULL, " ", &save)) {
        argv[argc] = tok;
        lens[argc++] = strlen(tok);
    }
    return argc;
}

redisReply *multi_exec(redisContext *c, const char *const *lines) {
    freeReplyObject(cmd(c, "MULTI"));
    for (; *lines; lines++) freeReplyObject(cmdline(c, "%s", *lines));
    return cmd(c, "EXEC");
}

void words_vformat(words *w, const char *fmt, va_list ap) {
    vsnprintf(w->line, sizeof w->line, fmt, ap);
    w->argc = split_words(w->line, w->argv, w->lens, (int)(sizeof w->argv / sizeof w->argv[0]));
}

void cmdline_append(redisContext *c, const char *fmt, ...) {
    words w;
    va_list ap;
    va_start(ap, fmt);
    words_vformat(&w, fmt, ap);
    va_end(ap);
    if (redisAppendCommandArgv(c, w.argc, w.argv, w.lens) != REDIS_OK) die("cannot append a command");
}

redisReply *next_reply(redisContext *c) {
    void *r = NULL;
    if (redisGetReply(c, &r) != REDIS_OK) r = NULL;
    return checked(c, r);
}

int reply_is_status(const redisReply *r, const char *text) {
    return r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, text) == 0;
}

int reply_is_array(const redisReply *r, size_t n) { return r && r->type == REDIS_REPLY_ARRAY && r->elements == n; }

const redisReply *map_get(const redisReply *map, const char *field) {
    if (!map || map->type != REDIS_REPLY_ARRAY) return NULL;
    for (size_t i = 0; i + 1 < map->elements; i += 2)
        if (map->element[i]->type == REDIS_REPLY_STRING && strcmp(map->element[i]->str, field) == 0)
            return map->element[i + 1];
    return NULL;
}

long long info_field(redisContext *c, const char *section, const char *field) {
    redisReply *r = cmd(c, "INFO %s", section);
    long long v = -1;
    if (r->type == REDIS_REPLY_STRING) {
        char pat[128];
        snprintf(pat, sizeof pat, "\r\n%s:", field);
        const char *p = strstr(r->str, pat);
        if (p) v = atoll(p + strlen(pat));
    }
    freeReplyObject(r);
    return v;
}

int aof_rewrite_wait(redisContext *c) {
    for (int i = 0; i < 1000; i++) {
        if (info_field(c, "persistence", "aof_rewrite_in_progress") == 0 &&
            info_field(c, "persistence", "aof_rewrite_scheduled") == 0)
            return 1;
        sleep_ms(10);
    }
    return 0;
}

int watch_survives(const server *s, redisContext *c, const char *key, const char *line) {
    redisContext *w = server_connect(s);
    freeReplyObject(cmd(w, "WATCH %s", key));
    freeReplyObject(cmdline(c, "%s", line));
    freeReplyObject(cmd(w, "MULTI"));
    freeReplyObject(cmd(w, "INCR watch:side"));
    redisReply *x = cmd(w, "EXEC");
    int ran = x->type == REDIS_REPLY_ARRAY;
    freeReplyObject(x);
    redisFree(w);
    return ran;
}

redisContext *event_subscriber(const server *s) {
    redisContext *sub = server_connect(s);
    freeReplyObject(cmd(sub, "PSUBSCRIBE __keyevent@0__:*"));
    struct timeval two = {2, 0};
    redisSetTimeout(sub, two);
    return sub;
}

void next_event(redisContext *sub, char *out, size_t n) {
    out[0] = '\0';
    redisReply *m = NULL;
    if (redisGetReply(sub, (void **)&m) != REDIS_OK || !m) return;
    if (m->type == REDIS_REPLY_ARRAY && m->elements == 4) /* pmessage pattern channel payload */
        snprintf(out, n, "%s %s", m->element[2]->str, m->element[3]->str);
    freeReplyObject(m);
}
