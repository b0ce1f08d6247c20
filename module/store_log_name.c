/* store_log_name.c -- the sliding log's member-name codec: a member's name and score to an rl_log_member,
 * and a module member back to its name.
 *
 * The module names its members
 *
 *     <time_us>-<seq>:<weight>:<x>:<floor>
 *
 * time_us = the member's score when it was written; seq tells apart names of one time (a name a user's
 * ZADD took is skipped: store_log_edit.c); weight = the units (cost) the member stands for, >= 1; x = the
 * running total of (weight - 1) over the module's members from the oldest up to this one, modulo 10^12;
 * floor = the running total just below the oldest of them (meaningful in the newest member). store_log.c
 * says why the totals are there. Every field is plain decimal with a bounded number of digits, so parsing
 * never overflows; a name that does not match exactly, or whose weight is out of range, is of another
 * format: a user's own ZADD, or the "<time_us>-<seq>" members of earlier versions (one per unit), and
 * weighs 1.
 *
 * A key's lock record (algorithms/lockout.h) is one more member, at score -inf, where no window ever reaches:
 *
 *     rl-lock:<until_us>:<forgive_us>:<strikes>:<state_expire_ms>
 *
 * the lock's end and the strikes' forgiveness in Unix µs, the strikes, and the expiry the log alone gives the
 * key (0: idle); every read and write of the log steps over it (rl_log_is_lock).
 *
 * The codec is hand-written, both ways: every call parses at least one name and a logged call formats one,
 * and printf's machinery was a sixth of a call's instructions. */
#include <string.h>

#include "store_log_parts.h"

/* A score as whole µs, clamped into the module's time range (a user's ZADD may hold anything). Rounded
 * up: decisions happen at whole µs, and an entry at s leaves the window at the first whole instant
 * t >= s + W, which is ceil(s) + W; so rounding up decides exactly as the fractional score would. */
int64_t rl_log_score_us(double score) {
    const double bound = (double)RL_MAX_TIME_US * 2;
    if (!(score > -bound)) return (int64_t)-bound; /* also NaN */
    if (score > bound) return (int64_t)bound;
    int64_t whole = (int64_t)score;
    return (double)whole < score ? whole + 1 : whole;
}

/* 1..max_digits decimal digits at s[*i], then `stop` (or the end of the name when stop is 0). */
static int read_num(const char *s, size_t len, size_t *i, int max_digits, char stop, int64_t *out) {
    size_t start = *i;
    int64_t v = 0;
    while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
        if (*i - start == (size_t)max_digits) return 0;
        v = v * 10 + (s[*i] - '0');
        (*i)++;
    }
    if (*i == start) return 0;
    if (stop) {
        if (*i >= len || s[*i] != stop) return 0;
        (*i)++;
    } else if (*i != len) {
        return 0;
    }
    *out = v;
    return 1;
}

void rl_log_parse_name(const char *s, size_t len, rl_log_member *m) {
    size_t i = 0;
    int64_t time_us; /* the score is what counts: the time in the name is only part of the name */
    m->ours = read_num(s, len, &i, 18, '-', &time_us) && read_num(s, len, &i, 15, ':', &m->seq) &&
              read_num(s, len, &i, 13, ':', &m->weight) && m->weight >= 1 && m->weight <= RL_LOG_WEIGHT_MAX &&
              read_num(s, len, &i, 12, ':', &m->extra_upto) && read_num(s, len, &i, 12, 0, &m->extra_below);
    if (!m->ours) m->weight = 1, m->seq = m->extra_upto = m->extra_below = 0;
}

void rl_log_parse(RedisModuleString *name, double score, rl_log_member *m) {
    size_t len;
    const char *s = RedisModule_StringPtrLen(name, &len);
    rl_log_parse_name(s, len, m);
    m->time_us = rl_log_score_us(score);
    m->name = NULL;
}

/* Append v in decimal at p; returns the end. */
static char *put_decimal(char *p, int64_t v) {
    char digits[20];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    if (v < 0) *p++ = '-';
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n) *p++ = digits[--n];
    return p;
}

size_t rl_log_format_name(char buf[RL_LOG_NAME_MAX], const rl_log_member *m) {
    char *end = put_decimal(buf, m->time_us);
    *end++ = '-';
    end = put_decimal(end, m->seq);
    *end++ = ':';
    end = put_decimal(end, m->weight);
    *end++ = ':';
    end = put_decimal(end, m->extra_upto);
    *end++ = ':';
    end = put_decimal(end, m->extra_below);
    return (size_t)(end - buf);
}

#define LOCK_PREFIX "rl-lock:"
#define LOCK_PREFIX_LEN 8

int rl_log_lock_parse(RedisModuleString *name, double score, rl_lock_rec *rec) {
    if (score != RL_LOG_NEG_INF) return 0;
    size_t len, i = LOCK_PREFIX_LEN;
    const char *s = RedisModule_StringPtrLen(name, &len);
    if (len <= LOCK_PREFIX_LEN || memcmp(s, LOCK_PREFIX, LOCK_PREFIX_LEN) != 0) return 0;
    rl_lock_rec r;
    if (!read_num(s, len, &i, 18, ':', &r.lock.until_us) || !read_num(s, len, &i, 18, ':', &r.lock.forgive_us) ||
        !read_num(s, len, &i, 13, ':', &r.lock.strikes) || !read_num(s, len, &i, 15, 0, &r.state_expire_ms) ||
        !rl_lock_rec_valid(&r))
        return 0;
    if (rec) *rec = r;
    return 1;
}

RedisModuleString *rl_log_lock_name(RedisModuleCtx *ctx, const rl_lock_rec *rec) {
    char buf[LOCK_PREFIX_LEN + 4 * 21];
    memcpy(buf, LOCK_PREFIX, LOCK_PREFIX_LEN);
    char *end = put_decimal(buf + LOCK_PREFIX_LEN, rec->lock.until_us);
    *end++ = ':';
    end = put_decimal(end, rec->lock.forgive_us);
    *end++ = ':';
    end = put_decimal(end, rec->lock.strikes);
    *end++ = ':';
    end = put_decimal(end, rec->state_expire_ms);
    return RedisModule_CreateString(ctx, buf, (size_t)(end - buf));
}
