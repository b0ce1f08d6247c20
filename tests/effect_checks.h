/* effect_checks.h -- the checks the integration suites make of a command's effects beyond its reply:
 * what a replica ends up holding, what an AOF replays, which keyspace events fire.
 *
 * Each is written once here and counts into the including program's checks (static inline, as check.h's
 * counters are the program's own). The server-side steps they build on (restarts, DUMP comparison, the
 * event subscriber) are in server.c. */
#ifndef RL_EFFECT_CHECKS_H
#define RL_EFFECT_CHECKS_H

#include <stdarg.h>

#include "check.h"
#include "server.h"

/* --- replication ------------------------------------------------------------------------------------- */

/* One check: the one replica has acknowledged every write of primary so far (WAIT 1, up to 5 s). */
static inline void check_replica_caught_up(redisContext *primary) {
    CHECK_EQ(cmd_int(primary, "WAIT 1 5000"), 1);
}

/* One check: key has byte-for-byte the same DUMP on both (or is missing on both). */
static inline int check_same_on_replica(redisContext *primary, redisContext *replica, const char *key) {
    if (CHECK(same_dump(primary, replica, key))) return 1;
    fprintf(stderr, "     %s differs on the replica\n", key);
    return 0;
}

/* One check: key has the same absolute expiry on both, and one (PEXPIRETIME > 0), or is missing (-2). */
static inline void check_same_expiry_on_replica(redisContext *primary, redisContext *replica, const char *key) {
    long long p = cmd_int(primary, "PEXPIRETIME %s", key), r = cmd_int(replica, "PEXPIRETIME %s", key);
    if (!CHECK((p > 0 || p == -2) && p == r)) fprintf(stderr, "     %s: primary %lld replica %lld\n", key, p, r);
}

/* The replica has caught up, and every key of the NULL-terminated list is the same on it: 1 + n checks. */
static inline void check_replicated(redisContext *primary, redisContext *replica, const char *key, ...) {
    check_replica_caught_up(primary);
    va_list ap;
    va_start(ap, key);
    for (; key; key = va_arg(ap, const char *)) check_same_on_replica(primary, replica, key);
    va_end(ap);
}

/* --- AOF ----------------------------------------------------------------------------------------------- */

/* One check: the last AOF rewrite succeeded (a rewrite whose child died leaves the old AOF, which then
 * replays as if no rewrite had been asked for). */
static inline void check_rewrite_ok(redisContext *c) {
    redisReply *r = cmd(c, "INFO persistence");
    if (!CHECK(r->type == REDIS_REPLY_STRING && strstr(r->str, "\r\naof_last_bgrewrite_status:ok\r\n")))
        fprintf(stderr, "     the AOF rewrite failed (INFO persistence: aof_last_bgrewrite_status is not ok)\n");
    freeReplyObject(r);
}

/* A round of an AOF test on s (started with server_aof_always): round 0 replays the AOF as written, round 1
 * first rewrites it (BGREWRITEAOF, checked to finish and to succeed: two checks). Either way the server is
 * killed (-9) right after and restarted from the AOF; c is closed and the new connection returned. */
static inline redisContext *aof_replay_round(server *s, redisContext *c, int round) {
    if (round == 1) {
        freeReplyObject(cmd(c, "BGREWRITEAOF"));
        if (!CHECK(aof_rewrite_wait(c))) fprintf(stderr, "     the AOF rewrite did not finish\n");
        check_rewrite_ok(c);
    }
    return server_kill9_restart(s, c);
}

/* --- keyspace events ----------------------------------------------------------------------------------- */

/* On sub (event_subscriber), with notify-keyspace-events already set: `change` (a command line, run on c)
 * fires `event` ("command key", after "__keyevent@0__:"), then each line of `quiet` (NULL-terminated) fires
 * none, which the next event shows: the one of `marker`, `marker_event`. Two checks. */
static inline void check_events_on(redisContext *c, redisContext *sub, const char *change, const char *event,
                                   const char *const *quiet, const char *marker, const char *marker_event) {
    char got[256], want[256];
    freeReplyObject(cmdline(c, "%s", change));
    next_event(sub, got, sizeof got);
    snprintf(want, sizeof want, "__keyevent@0__:%s", event);
    CHECK_STR(got, want);
    for (; *quiet; quiet++) freeReplyObject(cmdline(c, "%s", *quiet));
    freeReplyObject(cmdline(c, "%s", marker));
    next_event(sub, got, sizeof got);
    snprintf(want, sizeof want, "__keyevent@0__:%s", marker_event);
    CHECK_STR(got, want); /* anything else: a quiet line fired an event */
}

/* check_events_on with notify-keyspace-events set to flags on s (c is a connection to it) for the time of
 * the check, and a subscriber of its own: four checks (the two CONFIG SETs, the two events). */
static inline void check_events(const server *s, redisContext *c, const char *flags, const char *change,
                                const char *event, const char *const *quiet, const char *marker,
                                const char *marker_event) {
    CHECK(cmd_status_is(c, "OK", "CONFIG SET notify-keyspace-events %s", flags));
    redisContext *sub = event_subscriber(s);
    check_events_on(c, sub, change, event, quiet, marker, marker_event);
    redisFree(sub);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET notify-keyspace-events %s", ""));
}

#endif
