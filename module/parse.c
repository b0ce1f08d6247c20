/* parse.c -- argument parsing for every RL.* command, driven by the command's rl_syntax table.
 *
 * The rules, the same for all commands: positional numbers first, in order, each a strict decimal within
 * its range (or, for a choice, one of its tokens in any case); then options in any order, each at most once, names case-insensitive; an option that takes
 * a value must have one. Every error names the argument at fault and is safe to send as a Redis error
 * line whatever bytes the client sent (see rl_sanitize). Nothing here allocates. */
#include "parse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int rl_parse_int64(const char *s, size_t len, int64_t *out) {
    size_t i = 0;
    int negative = 0;
    if (len > 0 && s[0] == '-') {
        negative = 1;
        i = 1;
    }
    if (i == len || len > 20) return -1;
    if (s[i] == '0' && len - i > 1) return -1; /* no leading zeros, as Redis's own parser */
    uint64_t v = 0;
    if (len - i <= 19) { /* below 10^19 < 2^64: no digit can overflow (the common case, checked once) */
        for (; i < len; i++) {
            unsigned digit = (unsigned char)s[i] - (unsigned)'0';
            if (digit > 9) return -1;
            v = v * 10 + digit;
        }
    } else {
        for (; i < len; i++) {
            unsigned digit = (unsigned char)s[i] - (unsigned)'0';
            if (digit > 9 || __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, digit, &v)) return -1;
        }
    }
    if (negative) {
        if (v > (uint64_t)INT64_MAX + 1) return -1;
        *out = (int64_t)(0 - v);
        if (v == 0) return -1; /* "-0" */
    } else {
        if (v > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)v;
    }
    return 0;
}

int rl_parse_decimal(const char *s, size_t len, int64_t *out) {
    size_t i = 0;
    int64_t whole = 0, frac = 0;
    while (i < len && i <= 12 && s[i] >= '0' && s[i] <= '9') whole = whole * 10 + (s[i++] - '0');
    if (i == 0 || i > 12 || (s[0] == '0' && i > 1)) return -1; /* 1 to 12 digits first; no leading zero */
    int64_t scale = RL_DECIMAL_SCALE;
    if (i < len) {
        size_t point = i++;
        if (s[point] != '.' || len - i < 1 || len - i > 6) return -1;
        for (; i < len; i++) {
            if (s[i] < '0' || s[i] > '9') return -1;
            frac = frac * 10 + (s[i] - '0');
            scale /= 10;
        }
    }
    *out = whole * RL_DECIMAL_SCALE + frac * scale; /* < 10^12 * 10^6: fits */
    return 0;
}

/* millionths as a decimal: "0.000001", "2.5", "1000". */
static void millionths_text(char *dst, size_t dstlen, int64_t v) {
    int64_t whole = v / RL_DECIMAL_SCALE, frac = v % RL_DECIMAL_SCALE;
    int n = snprintf(dst, dstlen, frac ? "%lld.%06lld" : "%lld", (long long)whole, (long long)frac);
    while (frac && n > 0 && dst[n - 1] == '0') dst[--n] = '\0';
}

/* "ERR <name>: must be a decimal number between <min> and <max>", the bounds in millionths written as
 * decimals ("0.000001", "1000"). Returns -1. */
static int decimal_range_error(char err[RL_ERR_LEN], const char *name, int64_t min, int64_t max) {
    char lo[32], hi[32];
    millionths_text(lo, sizeof lo, min);
    millionths_text(hi, sizeof hi, max);
    snprintf(err, RL_ERR_LEN, "ERR %s: must be a decimal number between %s and %s", name, lo, hi);
    return -1;
}

static inline __attribute__((always_inline)) int parse_decimal_ranged(const char *s, size_t len, const char *name, int64_t min, int64_t max, int64_t *out,
                                char *err) {
    if (rl_parse_decimal(s, len, out) != 0 || *out < min || *out > max)
        return decimal_range_error(err, name, min, max);
    return 0;
}

void rl_sanitize(char *dst, size_t dstlen, const char *src, size_t len) {
    size_t max = dstlen - 1 < 32 ? dstlen - 1 : 32, j = 0;
    for (size_t i = 0; i < len && j < max; i++)
        dst[j++] = (src[i] >= 0x20 && src[i] < 0x7f && src[i] != '\'') ? src[i] : '?';
    if (len > max && j >= 3) dst[j - 1] = dst[j - 2] = dst[j - 3] = '.';
    dst[j] = '\0';
}

int rl_range_error(char err[RL_ERR_LEN], const char *name, int64_t min, int64_t max) {
    snprintf(err, RL_ERR_LEN, "ERR %s: must be an integer between %lld and %lld", name, (long long)min,
             (long long)max);
    return -1;
}

/* The common case, a number with no sign, in one pass: what rl_parse_int64 accepts without a '-' (every
 * range here starts at 0 or above, so a sign only ever leads to the range error). */
static inline int parse_unsigned(const char *s, size_t len, int64_t *out) {
    if (len == 0 || len > 19 || (s[0] == '0' && len > 1)) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned digit = (unsigned char)s[i] - (unsigned)'0';
        if (digit > 9) return -1;
        v = v * 10 + digit;
    }
    if (v > (uint64_t)INT64_MAX) return -1;
    *out = (int64_t)v;
    return 0;
}

static int parse_ranged(const char *s, size_t len, const char *name, int64_t min, int64_t max, int64_t *out,
                        char *err) {
    int bad = min >= 0 ? parse_unsigned(s, len, out) : rl_parse_int64(s, len, out);
    if (bad || *out < min || *out > max) return rl_range_error(err, name, min, max);
    return 0;
}

int rl_choice_index(const rl_param_spec *p, const char *s, size_t len) {
    for (int64_t i = 0; i <= p->max; i++)
        if (strlen(p->choices[i]) == len && strncasecmp(p->choices[i], s, len) == 0) return (int)i;
    return -1;
}

int rl_choice_error(char err[RL_ERR_LEN], const rl_param_spec *p) {
    int used = snprintf(err, RL_ERR_LEN, "ERR %s: must be ", p->name);
    for (int64_t i = 0; i <= p->max && used > 0 && used < RL_ERR_LEN; i++) {
        const char *before = i == 0 ? "" : i == p->max ? " or " : ", ";
        used += snprintf(err + used, (size_t)(RL_ERR_LEN - used), "%s%s", before, p->choices[i]);
    }
    return -1;
}

/* A positional choice, out of the loop every call runs (RL.QUOTA's period alone is one). */
static __attribute__((noinline)) int parse_choice(const rl_param_spec *p, const char *s, size_t len, int64_t *out,
                                                  char *err) {
    int index = rl_choice_index(p, s, len);
    if (index < 0) return rl_choice_error(err, p);
    *out = index;
    return 0;
}

/* The option named s (any case). The first letters are compared before anything else: most names differ
 * there, and this runs for every option of every call. */
static const rl_option_spec *find_option(const rl_syntax *syn, const char *s, size_t len) {
    if (len == 0) return NULL;
    char first = (char)(s[0] & ~0x20); /* upper case, for a letter; names are upper-case letters */
    for (int i = 0; i < syn->noptions; i++) {
        const rl_option_spec *o = &syn->options[i];
        if (o->name[0] != first || o->name_len != len || (o->flag & syn->excluded)) continue;
        /* the second letter too (every name has two): several share a first one and a length (FIXED, FORCE) */
        if ((char)(s[1] & ~0x20) != o->name[1]) continue;
        if (strncasecmp(o->name, s, len) == 0) return o;
    }
    return NULL;
}

static const char *flag_name(const rl_syntax *syn, uint32_t flag) {
    for (int i = 0; i < syn->noptions; i++)
        if (syn->options[i].flag & flag) return syn->options[i].name;
    return "?";
}

/* Apply option o found at args[*i], reading its value if it takes one. */
static int parse_option(const rl_syntax *syn, const rl_option_spec *o, int nargs, const char *const *args,
                        const size_t *lens, int *i, rl_request *req, char *err) {
    if (req->flags & o->flag) {
        snprintf(err, RL_ERR_LEN, "ERR %s: given more than once", o->name);
        return -1;
    }
    if (req->flags & o->conflicts) {
        snprintf(err, RL_ERR_LEN, "ERR %s: cannot be combined with %s", o->name,
                 flag_name(syn, req->flags & o->conflicts));
        return -1;
    }
    req->flags |= o->flag;
    if (o->slot == RL_NO_VALUE) return 0;
    if (++*i == nargs) {
        snprintf(err, RL_ERR_LEN, "ERR %s: needs a value", o->name);
        return -1;
    }
    int64_t *slot = (int64_t *)((char *)req + RL_SLOT_OFFSET(o->slot));
    if (RL_SLOT_IS_STRING(o->slot)) {
        if ((int64_t)lens[*i] < o->min || (int64_t)lens[*i] > o->max) {
            snprintf(err, RL_ERR_LEN, "ERR %s: must be %lld to %lld bytes", o->name, (long long)o->min,
                     (long long)o->max);
            return -1;
        }
        *slot = *i;
        return 0;
    }
    if (RL_SLOT_IS_DECIMAL(o->slot)) return parse_decimal_ranged(args[*i], lens[*i], o->name, o->min, o->max, slot, err);
    return parse_ranged(args[*i], lens[*i], o->name, o->min, o->max, slot, err);
}

int rl_parse_clause(const rl_syntax *syn, int nargs, const char *const *args, const size_t *lens, rl_request *req,
                    char err[RL_ERR_LEN]) {
    /* Every field up to the lockout's four, which are read only with their flags (algorithms/lockout.c): left
     * as they are, the zeroing of every call stays what it was before lockouts. */
    memset(req, 0, offsetof(rl_request, lockout_ms));
    req->cost = 1;
    if (nargs < syn->nparams) {
        snprintf(err, RL_ERR_LEN, "ERR wrong number of arguments for '%s' command", syn->name);
        return -1;
    }
    for (int i = 0; i < syn->nparams; i++) {
        const rl_param_spec *p = &syn->params[i];
        int bad = p->kind == 0            ? parse_ranged(args[i], lens[i], p->name, p->min, p->max, &req->params[i], err)
                  : p->kind == RL_DECIMAL ? parse_decimal_ranged(args[i], lens[i], p->name, p->min, p->max,
                                                                 &req->params[i], err)
                                          : parse_choice(p, args[i], lens[i], &req->params[i], err);
        if (bad) return -1;
    }
    int i = syn->nparams;
    for (; i < nargs; i++) {
        /* RL.ALL's next clause starts at LIMIT, which is no option of any syntax: known at once rather than after
         * a look through the whole table, which would say the same. */
        if (lens[i] == 5 && (args[i][0] & ~0x20) == 'L' && strncasecmp(args[i], "LIMIT", 5) == 0) break;
        const rl_option_spec *o = find_option(syn, args[i], lens[i]);
        if (!o) break;
        if (parse_option(syn, o, nargs, args, lens, &i, req, err) != 0) return -1;
    }
    return i;
}

int rl_parse(const rl_syntax *syn, int nargs, const char *const *args, const size_t *lens, rl_request *req,
             char err[RL_ERR_LEN]) {
    int used = rl_parse_clause(syn, nargs, args, lens, req, err);
    if (used < 0) return -1;
    if (used < nargs) {
        char shown[40];
        rl_sanitize(shown, sizeof shown, args[used], lens[used]);
        snprintf(err, RL_ERR_LEN, "ERR '%s': not an option of %s", shown, syn->name);
        return -1;
    }
    return 0;
}

void rl_name_clause(char err[RL_ERR_LEN], int i) {
    char out[RL_ERR_LEN];
    const char *what = strncmp(err, "ERR ", 4) == 0 ? err + 4 : err;
    size_t head = (size_t)snprintf(out, sizeof out, "ERR LIMIT %d: ", i + 1);
    size_t len = strlen(what), room = sizeof out - 1 - head; /* a long message is cut, never overrun */
    memcpy(out + head, what, len < room ? len : room);
    out[head + (len < room ? len : room)] = '\0';
    memcpy(err, out, sizeof out);
}

int rl_policy_name_ok(const char *s, size_t len, size_t max) {
    if (len < 1 || len > max) return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}
