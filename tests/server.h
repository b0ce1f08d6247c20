/* server.h -- real redis-server processes for integration tests.
 *
 * Each server runs on a free 127.0.0.1 port, in a temporary directory of its own, with the module
 * (build/ratelimit.so, or $RL_MODULE) loaded with test-clock. The harness stops what it starts:
 * SHUTDOWN NOSAVE, then SIGKILL if needed, and the child is tied to the test process (PDEATHSIG) so even
 * a crashed test leaves no server running. Talk to it with hiredis. */
#ifndef RL_TEST_SERVER_H
#define RL_TEST_SERVER_H

#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>

#define SERVER_MAX_ARGS 48

typedef struct server {
    pid_t pid;
    int port;
    char dir[256];
    int nargs;                       /* extra redis-server arguments, kept for restarts */
    char *args[SERVER_MAX_ARGS];
} server;

/* Run every server started from now on under this command (e.g. valgrind and its options; NULL-terminated,
 * NULL to stop). Servers then get a longer time to come up, and under valgrind "--log-file=<dir>/vg.%p.log"
 * is added, so each server's report lands in its own directory (read it before server_stop removes it). */
void server_set_wrapper(const char *const *prefix);

/* Start a server; extra is a NULL-terminated list of redis-server arguments (e.g. "--appendonly",
 * "yes"). Aborts the test program if the server does not come up. */
server *server_start(const char *const *extra);
/* Start again on the same port and directory (persistence tests). */
void server_restart(server *s);
/* SHUTDOWN NOSAVE (or SIGKILL after a grace period), wait for the process. Keeps the directory. */
void server_shutdown(server *s);
/* kill -9, and wait. */
void server_kill9(server *s);
/* Stop if running, remove the directory, free. */
void server_stop(server *s);
/* Restart s after kill -9 (server_kill9_restart) or SHUTDOWN NOSAVE (server_shutdown_restart): c, the
 * connection to it, is closed first, and a new one is returned. */
redisContext *server_kill9_restart(server *s, redisContext *c);
redisContext *server_shutdown_restart(server *s, redisContext *c);
/* server_start's arguments for a server that appends every write to its AOF and fsyncs it before it
 * replies (appendfsync always): whatever it answered survives kill -9. */
extern const char *const server_aof_always[];

redisContext *server_connect(const server *s);
/* The same by port (a thread that was given only the port); aborts the test program if it cannot connect. */
redisContext *port_connect(int port);
void sleep_ms(long ms);

/* 1 once a replica's link to its primary is up (polls up to 10 s). */
int replica_wait_synced(redisContext *replica);
/* Start a server replicating primary and wait until it has synced; aborts the test program with a message
 * if it does not sync. Stop it with server_stop (a restart keeps it a replica). */
server *replica_start(const server *primary);

/* 1 if COMMAND INFO reports this arity and exactly these flags (in Redis's order, "module" left out), e.g.
 * "write denyoom fast". */
int command_info_is(redisContext *c, const char *name, long long arity, const char *flags);

/* Commands. cmd() aborts on a connection error, returns the reply (caller frees). */
redisReply *cmd(redisContext *c, const char *fmt, ...);
redisReply *cmdargv(redisContext *c, int argc, const char **argv, const size_t *lens);
/* printf-format a whole command line, then split it on spaces into arguments (no binary). */
redisReply *cmdline(redisContext *c, const char *fmt, ...);
/* The integer reply of a command (LLONG_MIN if the reply is not an integer). */
long long cmd_int(redisContext *c, const char *fmt, ...);
/* 1 if the reply is a status or error whose text equals text. */
int cmd_status_is(redisContext *c, const char *text, const char *fmt, ...);

/* An RL.* reply (the line is formatted and split as cmdline): the six fields, or ok = 0 (and the error text) if it
 * was not an array of 6 integers (RL.ACQUIRE's seventh, its lease, a string or nil, is read past; ATMOST's
 * `granted` is not: ok = 0). */
typedef struct rl_result {
    int ok;
    long long allowed, limit, remaining, retry_after_ms, reset_after_ms, wait_ms;
    char error[256];
} rl_result;
rl_result rl(redisContext *c, const char *fmt, ...);
/* The same, for a reply already read (an element of EXEC's or EVAL's array). */
rl_result rl_of(const redisReply *r);
/* rl_of's fields as an array in reply order (allowed, limit, remaining, retry_after_ms, reset_after_ms,
 * wait_ms), for tables of replies compared as a whole. Returns ok; the fields are 0 when it is not. */
int rl_fields(const redisReply *r, long long f[6]);

/* One transaction: MULTI, each command line of lines (NULL-terminated; formatted and split as cmdline),
 * EXEC; returns EXEC's reply (an array of their replies when it ran; caller frees). */
redisReply *multi_exec(redisContext *c, const char *const *lines);

/* Pipelines: append a command line (formatted and split as cmdline), read replies in order with
 * next_reply (which aborts on a connection error, as cmd(); caller frees). */
void cmdline_append(redisContext *c, const char *fmt, ...);
redisReply *next_reply(redisContext *c);
/* Split line in place on spaces into at most max arguments; returns how many. */
int split_words(char *line, const char **argv, size_t *lens, int max);
/* A command line printf-formatted, then split on spaces (split_words) into the arguments hiredis's *Argv
 * calls take: what cmdline, cmdline_append and rl send. */
typedef struct words {
    char line[1024];
    const char *argv[64];
    size_t lens[64];
    int argc;
} words;
void words_vformat(words *w, const char *fmt, va_list ap);

/* 1 if r (may be NULL) is a status reply with exactly this text. */
int reply_is_status(const redisReply *r, const char *text);
/* 1 if r (may be NULL) is an array of n elements (EXEC's answer to n queued commands). */
int reply_is_array(const redisReply *r, size_t n);
/* The value of field in a RESP2 map (an array of field, value, ...: COMMAND DOCS), NULL if absent. */
const redisReply *map_get(const redisReply *map, const char *field);
/* A numeric field of an INFO section, -1 if it is not there. */
long long info_field(redisContext *c, const char *section, const char *field);
/* 1 once no AOF rewrite is in progress or scheduled (polls up to 10 s). */
int aof_rewrite_wait(redisContext *c);

/* WATCH key on a new connection to s, run `line` (split as cmdline) on c, then EXEC an INCR of watch:side on
 * the watcher: 1 if the transaction ran, i.e. nothing signalled the key. */
int watch_survives(const server *s, redisContext *c, const char *key, const char *line);
/* A new client of s subscribed to every keyevent channel of db 0, its reads timing out after 2 s. */
redisContext *event_subscriber(const server *s);
/* The next pub/sub message on sub as "channel payload", or "" when none came in time. */
void next_event(redisContext *sub, char *out, size_t n);

/* DUMP of a key as a malloc'd buffer (NULL when the key does not exist), for byte-for-byte comparison. */
char *dump_key(redisContext *c, const char *key, size_t *len);
/* 1 if both contexts have the same DUMP for key (both missing counts as equal). */
int same_dump(redisContext *a, redisContext *b, const char *key);

/* Send raw bytes and read until the text `until` has arrived or 2 s pass (RESP3 checks without a RESP3
 * client: hiredis 0.14 speaks RESP2 only). Returns the bytes read, NUL-terminated, malloc'd. */
char *raw_exchange(int port, const char *request, const char *until);

#endif
