/* integration_oom.c -- past maxmemory under noeviction, the module answers what needs no memory, against a
 * real redis-server with the module, on the frozen test clock.
 *
 * The idea: the limiter commands take no deny-oom, so Redis lets them in past maxmemory and the module's one
 * call path decides: a call that writes nothing (a denial, a read-only form, DRYRUN, COST 0, a waiter that
 * keeps waiting) answers exactly what it answered before the pressure; a call that must write answers Redis's
 * own OOM error and changes nothing. Each kind of limiter (and RL.ALL, RL.CHECK with a policy, CL.THROTTLE) has
 * an exhausted key and a key with room, made before memory runs out; then maxmemory is set just above the used
 * memory and filler values are SET until Redis refuses one. Under that pressure:
 *   1. a denial's reply (an exhausted key's, a locked key's) is byte for byte the one it got before; the read-only form, DRYRUN and COST 0 answer;
 *   2. a call that would admit (the key with room, or a new key) answers the OOM error, exactly when Redis
 *      refuses a SET itself; every key's DUMP is what it was, and no new key appears;
 *   3. a waiter that is denied keeps waiting; one whose turn comes is not admitted while memory is short;
 *   4. once maxmemory is raised, the keys with room admit, the new keys are made, and the waiter is admitted;
 *   5. under a policy that evicts, past maxmemory with nothing left it may take, a call that would write answers
 *      OOM, as Redis refuses a SET then (test_nothing_to_evict).
 * Against a module that keeps deny-oom on these commands, step 1 fails (every call answers OOM). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clients.h"
#include "server.h"
#include "suite.h"

static server *srv;
static redisContext *c;

#define T0 1700000000000LL /* a frozen test-clock instant (ms) */
#define OOM_TEXT "OOM command not allowed when used memory > 'maxmemory'."

/* One kind of call: the command line's head (command and, for RL.CHECK, the policy) and its parameters, for
 * the exhausted key (a limit of 1) and for the key with room (a limit of 2, one unit taken); its read-only
 * form's heads (the exhausted key's and the room's); and whether it takes COST 0 and DRYRUN. RL.SMOOTH admits
 * every call, with a wait, unless MAXWAIT says: its exhausted key is asked with MAXWAIT 0, its key with room
 * with a MAXWAIT its wait fits in. RL.ALL's keys share a hash tag and its options come before the LIMITs. */
typedef struct kind {
    const char *head, *params, *room_head, *room_params, *ro_head, *room_ro_head;
    int looks, all; /* COST0 | DRYRUN: the options it takes */
} kind;

#define COST0 1
#define DRYRUN 2

static const kind kinds[] = {
    {"RL.TOKEN", "1 1 600000", "RL.TOKEN", "2 1 600000", "RL.TOKEN_RO", "RL.TOKEN_RO", COST0 | DRYRUN, 0},
    {"RL.LEAKY", "1 1 600000", "RL.LEAKY", "2 1 600000", "RL.LEAKY_RO", "RL.LEAKY_RO", COST0 | DRYRUN, 0},
    {"RL.WINDOW", "1 600000", "RL.WINDOW", "2 600000", "RL.WINDOW_RO", "RL.WINDOW_RO", COST0 | DRYRUN, 0},
    {"RL.WINDOW", "1 600000 FIXED", "RL.WINDOW", "2 600000 FIXED", "RL.WINDOW_RO", "RL.WINDOW_RO", COST0 | DRYRUN, 0},
    {"RL.SLIDINGLOG", "1 600000", "RL.SLIDINGLOG", "2 600000", "RL.SLIDINGLOG_RO", "RL.SLIDINGLOG_RO", COST0 | DRYRUN, 0},
    {"RL.SMOOTH", "0.001 MAXWAIT 0", "RL.SMOOTH", "0.001 MAXWAIT 100000000", "RL.SMOOTH_RO", "RL.SMOOTH_RO", DRYRUN, 0},
    {"RL.QUOTA", "1 MONTH", "RL.QUOTA", "2 MONTH", "RL.QUOTA_RO", "RL.QUOTA_RO", COST0 | DRYRUN, 0},
    {"RL.ACQUIRE", "1 600000", "RL.ACQUIRE", "2 600000", "RL.ACQUIRE_RO", "RL.ACQUIRE_RO", DRYRUN, 0},
    {"RL.ALL 2", "LIMIT TOKEN 1 1 600000 LIMIT SLIDINGLOG 1 600000", "RL.ALL 2",
     "LIMIT TOKEN 2 1 600000 LIMIT SLIDINGLOG 2 600000", "RL.ALL_RO 2", "RL.ALL_RO 2", COST0 | DRYRUN, 1},
    {"RL.CHECK oompol", "", "RL.CHECK oompol2", "", "RL.CHECK_RO oompol", "RL.CHECK_RO oompol2", COST0 | DRYRUN, 0},
    {"CL.THROTTLE", "0 1 600", "CL.THROTTLE", "1 1 600", NULL, NULL, 0, 0},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* The keys of kind i's call on the key named name: "oom:<i>:<name>", or RL.ALL's two under one hash tag. */
static void keys_of(int i, const char *name, char *out, size_t n) {
    if (kinds[i].all) snprintf(out, n, "{oom%d%s}a {oom%d%s}b", i, name, i, name);
    else snprintf(out, n, "oom:%d:%s", i, name);
}

/* Kind i's call on name ("full", "room" or "new": the last two take the room's parameters), with head
 * (its command or its read-only form's) and extra options, as one line. */
static void line_of(int i, const char *head, const char *name, const char *extra, char *out, size_t n) {
    const kind *k = &kinds[i];
    int full = strcmp(name, "full") == 0;
    const char *params = full ? k->params : k->room_params;
    if (!full && head == k->head) head = k->room_head;
    char keys[128];
    keys_of(i, name, keys, sizeof keys);
    if (k->all) snprintf(out, n, "%s %s %s %s", head, keys, extra, params);
    else snprintf(out, n, "%s %s %s %s", head, keys, params, extra);
}

/* A reply as text, whole (nested arrays, nils, errors), to compare two replies byte for byte. */
static void reply_text(const redisReply *r, char *out, size_t n) {
    size_t at = strlen(out);
    if (at + 1 >= n) return;
    switch (r->type) {
    case REDIS_REPLY_INTEGER: snprintf(out + at, n - at, "%lld ", r->integer); break;
    case REDIS_REPLY_NIL: snprintf(out + at, n - at, "nil "); break;
    case REDIS_REPLY_ARRAY:
        snprintf(out + at, n - at, "[ ");
        for (size_t i = 0; i < r->elements; i++) reply_text(r->element[i], out, n);
        at = strlen(out);
        snprintf(out + at, n - at, "] ");
        break;
    case REDIS_REPLY_ERROR: snprintf(out + at, n - at, "-%s ", r->str); break;
    default: snprintf(out + at, n - at, "'%.*s' ", (int)r->len, r->str); break;
    }
}

static void call_text(const char *line, char *out, size_t n) {
    out[0] = '\0';
    redisReply *r = cmdline(c, "%s", line);
    reply_text(r, out, n);
    freeReplyObject(r);
}

/* Every key the suite made, each with its DUMP, as one text (KEYS, sorted by the server's order is not
 * stable: the keys are read by name from a fixed list). */
static char *dumps_of(int with_new) {
    size_t size = 1 << 16, used = 0;
    char *text = calloc(1, size);
    const char *names[] = {"full", "room", "new"};
    for (size_t i = 0; i < NKINDS; i++)
        for (int k = 0; k < (with_new ? 3 : 2); k++) {
            char keys[128];
            keys_of((int)i, names[k], keys, sizeof keys);
            char *save, *key = strtok_r(keys, " ", &save);
            for (; key; key = strtok_r(NULL, " ", &save)) {
                size_t len = 0;
                char *dump = dump_key(c, key, &len);
                used += (size_t)snprintf(text + used, size - used, "%s=", key);
                for (size_t b = 0; dump && b < len && used + 3 < size; b++)
                    used += (size_t)snprintf(text + used, size - used, "%02x", (unsigned char)dump[b]);
                used += (size_t)snprintf(text + used, size - used, "%s;", dump ? "" : "(none)");
                free(dump);
            }
        }
    return text;
}

/* --- the limiters, before the pressure ------------------------------------------------------------------ */

static char denial_before[NKINDS][1024], locked_before[1024];
#define LOCKED_CALL "RL.TOKEN oom:locked 5 1 1000" /* on a key RL.BLOCK locked: denied, with room */

static void make_limiters(void) {
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0));
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory-policy noeviction"));
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET oompol LIMIT a TOKEN 1 1 600000 LIMIT b WINDOW 1 600000"));
    CHECK(cmd_status_is(c, "OK", "RL.POLICY SET oompol2 LIMIT a TOKEN 2 1 600000 LIMIT b WINDOW 2 600000"));
    char line[512], text[1024];
    CHECK(cmd_status_is(c, "OK", "RL.BLOCK oom:locked 600000"));
    call_text(LOCKED_CALL, locked_before, sizeof locked_before);
    CHECK(locked_before[0] == '[');
    for (size_t i = 0; i < NKINDS; i++) {
        line_of((int)i, kinds[i].head, "full", "", line, sizeof line);
        call_text(line, text, sizeof text); /* the one unit it has */
        CHECK(text[0] != '-');
        call_text(line, denial_before[i], sizeof denial_before[i]); /* then denied */
        if (!CHECK(denial_before[i][0] != '-')) fprintf(stderr, "     %s -> %s\n", line, denial_before[i]);
        line_of((int)i, kinds[i].head, "room", "", line, sizeof line);
        call_text(line, text, sizeof text); /* one unit of two: room for one more */
        if (!CHECK(text[0] != '-')) fprintf(stderr, "     %s -> %s\n", line, text);
    }
}

/* --- under the pressure --------------------------------------------------------------------------------- */

/* Set maxmemory just above the used memory, then SET 16 kB fillers until Redis refuses one. */
static int press(void) {
    long long used = info_field(c, "memory", "used_memory");
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory %lld", used + 256 * 1024));
    static char filler[16 * 1024];
    memset(filler, 'f', sizeof filler);
    for (int i = 0; i < 1000; i++) {
        redisReply *r = cmd(c, "SET oom:filler:%d %b", i, filler, sizeof filler);
        int refused = r->type == REDIS_REPLY_ERROR && strncmp(r->str, "OOM", 3) == 0;
        freeReplyObject(r);
        if (refused) return 1;
    }
    return 0;
}

/* Redis's own refusal of a write at this moment (a SET of a new key): 1 if it answers OOM. */
static int redis_refuses(void) {
    redisReply *r = cmd(c, "SET oom:probe 1");
    int refused = r->type == REDIS_REPLY_ERROR && strcmp(r->str, OOM_TEXT) == 0;
    freeReplyObject(r);
    return refused;
}

static void under_pressure(void) {
    char line[512], text[1024];
    char *before = dumps_of(1);
    CHECK(redis_refuses());
    call_text(LOCKED_CALL, text, sizeof text);
    if (!CHECK(strcmp(text, locked_before) == 0)) fprintf(stderr, "     locked: %s, before %s\n", text, locked_before);
    for (size_t i = 0; i < NKINDS; i++) {
        const kind *k = &kinds[i];
        /* 1. the denial, as before; its looks. */
        line_of((int)i, k->head, "full", "", line, sizeof line);
        call_text(line, text, sizeof text);
        if (!CHECK(strcmp(text, denial_before[i]) == 0))
            fprintf(stderr, "     %s -> %s, before the pressure %s\n", line, text, denial_before[i]);
        const char *looks[4][2] = {{k->ro_head, ""}, {(k->looks & COST0) ? k->head : NULL, "COST 0"},
                                   {(k->looks & DRYRUN) ? k->head : NULL, "DRYRUN"}, {k->room_ro_head, ""}};
        for (int l = 0; l < 4; l++) { /* the exhausted key's looks, then the room's */
            if (!looks[l][0]) continue;
            line_of((int)i, looks[l][0], l < 2 ? "full" : "room", looks[l][1], line, sizeof line);
            call_text(line, text, sizeof text);
            if (!CHECK(text[0] != '-')) fprintf(stderr, "     %s -> %s\n", line, text);
        }
        /* 2. calls that would admit: OOM, exactly as Redis refuses a SET now. */
        const char *admitting[] = {"room", "new"};
        for (int a = 0; a < 2; a++) {
            line_of((int)i, k->head, admitting[a], "", line, sizeof line);
            call_text(line, text, sizeof text);
            if (!CHECK(strcmp(text, "-" OOM_TEXT " ") == 0)) fprintf(stderr, "     %s -> %s\n", line, text);
        }
        CHECK(redis_refuses());
    }
    char *after = dumps_of(1);
    CHECK(strcmp(after, before) == 0); /* every key's DUMP, and no new key */
    free(before);
    free(after);
}

/* 3. waiters under the pressure: a denied one keeps waiting, one whose turn comes is held. */
static pending waiter;

static void waiter_under_pressure(void) {
    char line[512];
    line_of(0, "RL.TOKEN", "full", "WAIT 600000", line, sizeof line);
    waiter = pending_send(srv, line);
    CHECK(wait_for_waiting(c, 1)); /* denied: it waits, as before the pressure */
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK ADVANCE 600000")); /* its token comes: it would be admitted */
    long long full_before = rl(c, "RL.TOKEN_RO oom:0:full 1 1 600000").remaining;
    CHECK(!pending_poll(&waiter, 200)); /* nothing admitted while memory is short */
    CHECK(rl(c, "RL.TOKEN_RO oom:0:full 1 1 600000").remaining == full_before);
    CHECK(clients_waiting(c) == 1);
}

/* 4. memory back: everything proceeds. */
static void memory_back(void) {
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 0"));
    CHECK(pending_poll(&waiter, 5000));
    CHECK(waiter.r.ok && waiter.r.allowed == 1);
    pending_close(&waiter);
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK SET %lld", T0 + 600000));
    char line[512], text[1024];
    for (size_t i = 0; i < NKINDS; i++) {
        const char *names[] = {"room", "new"};
        for (int a = 0; a < 2; a++) {
            line_of((int)i, kinds[i].head, names[a], "", line, sizeof line);
            call_text(line, text, sizeof text);
            if (!CHECK(text[0] != '-')) fprintf(stderr, "     %s -> %s\n", line, text);
        }
        char keys[128];
        keys_of((int)i, "new", keys, sizeof keys);
        char *save, *key = strtok_r(keys, " ", &save);
        if (!CHECK(cmd_int(c, "EXISTS %s", key) == 1)) fprintf(stderr, "     %s not made\n", key);
    }
    CHECK(cmd_status_is(c, "OK", "RL.CLOCK REAL"));
}

static void test_oom(void) {
    make_limiters();
    if (!CHECK(press())) return;
    under_pressure();
    waiter_under_pressure();
    memory_back();
}

/* 5. Under a policy that evicts, past maxmemory with nothing left that the policy may take (volatile-*: only
 * keys without a TTL; allkeys-*: no key at all), Redis refuses a SET: a limiter call that would write answers
 * the same OOM and makes no key (a limiter key, always with a TTL, would be evicted by the next command:
 * admitting there hands out a fresh budget at every call), the read-only forms answer, and once memory is
 * back the call admits. Against a module that tests for OOM under noeviction only, the calls admit. */
static const char *const writes_nothing_to_evict[][2] = {
    {"RL.TOKEN oom:ne:t 5 1 1000", "RL.TOKEN_RO oom:ne:t 5 1 1000"},
    {"RL.SLIDINGLOG oom:ne:s 5 1000", "RL.SLIDINGLOG_RO oom:ne:s 5 1000"},
    {"RL.ACQUIRE oom:ne:a 5 1000", "RL.ACQUIRE_RO oom:ne:a 5 1000"},
    {"CL.THROTTLE oom:ne:c 5 5 1", NULL},
};
#define N_NE (sizeof writes_nothing_to_evict / sizeof writes_nothing_to_evict[0])

static void nothing_to_evict(const char *policy) {
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 0"));
    CHECK(cmd_status_is(c, "OK", "FLUSHALL"));
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory-policy %s", policy));
    int plain_keys = strncmp(policy, "volatile-", 9) == 0 ? 8 : 0; /* no TTL: out of a volatile policy's reach */
    static char filler[16 * 1024];
    memset(filler, 'f', sizeof filler);
    for (int i = 0; i < plain_keys; i++) CHECK(cmd_status_is(c, "OK", "SET oom:plain:%d %b", i, filler, sizeof filler));
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 100000")); /* far below the used memory */
    if (!CHECK(redis_refuses())) fprintf(stderr, "     %s: Redis still takes a SET\n", policy);
    char text[1024];
    for (size_t i = 0; i < N_NE; i++) {
        call_text(writes_nothing_to_evict[i][0], text, sizeof text);
        if (!CHECK(strcmp(text, "-" OOM_TEXT " ") == 0))
            fprintf(stderr, "     %s: %s -> %s\n", policy, writes_nothing_to_evict[i][0], text);
        if (writes_nothing_to_evict[i][1]) {
            call_text(writes_nothing_to_evict[i][1], text, sizeof text);
            if (!CHECK(text[0] == '[')) fprintf(stderr, "     %s: %s -> %s\n", policy, writes_nothing_to_evict[i][1], text);
        }
    }
    CHECK_EQ(cmd_int(c, "DBSIZE"), plain_keys); /* no limiter key made, none of the others lost */
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory 0"));
    for (size_t i = 0; i < N_NE; i++) {
        call_text(writes_nothing_to_evict[i][0], text, sizeof text);
        if (!CHECK(text[0] == '[')) fprintf(stderr, "     %s: memory back: %s -> %s\n", policy, writes_nothing_to_evict[i][0], text);
    }
    CHECK_EQ(cmd_int(c, "DBSIZE"), plain_keys + (long long)N_NE);
}

static void test_nothing_to_evict(void) {
    const char *policies[] = {"volatile-lru", "volatile-ttl", "allkeys-lru", "allkeys-lfu"};
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) nothing_to_evict(policies[i]);
    CHECK(cmd_status_is(c, "OK", "CONFIG SET maxmemory-policy noeviction"));
    CHECK(cmd_status_is(c, "OK", "FLUSHALL"));
}

int main(void) {
    const suite_test tests[] = {test_oom, test_nothing_to_evict, NULL};
    return server_suite("integration_oom", &srv, &c, tests);
}
