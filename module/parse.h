/* parse.h -- the one argument parser of every RL.* command.
 *
 * A command is described by data (rl_syntax): its positional numbers with their ranges, and the options
 * it accepts. The parser turns the arguments after the key into an rl_request or an error that names the
 * argument. It uses no Redis header, so unit tests and fuzzers drive it directly. */
#ifndef RL_PARSE_H
#define RL_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "../algorithms/rl_common.h"

#define RL_MAX_PARAMS 3
#define RL_ERR_LEN 160

/* What an option carries: nothing (a flag), or a number stored in the request. */
typedef enum { RL_OPT_FLAG, RL_OPT_COST, RL_OPT_MINGAP } rl_option_kind;

typedef struct rl_param_spec {
    const char *name;
    int64_t min, max;
} rl_param_spec;

typedef struct rl_option_spec {
    const char *name;    /* upper case; matched case-insensitively */
    rl_option_kind kind;
    uint32_t flag;       /* RL_F_* bit set when the option is present (each option has its own bit) */
    int64_t min, max;    /* range of the value, for options that take one */
    uint32_t conflicts;  /* flags this option cannot be combined with */
} rl_option_spec;

/* Every RL.* command that parses: its name (for errors), its numbers, its options. */
typedef struct rl_syntax {
    const char *name;
    int nparams;
    rl_param_spec params[RL_MAX_PARAMS];
    const rl_option_spec *options;
    int noptions;
} rl_syntax;

/* The most arguments after the key any command can take: every number, every option once with value. */
#define RL_MAX_ARGS 16

/* Parse args[0..nargs) (the arguments after the key). On success fills *req (now_us left 0) and returns
 * 0. On error writes a complete Redis error ("ERR ...", printable, no CR/LF) to err and returns -1. */
int rl_parse(const rl_syntax *syn, int nargs, const char *const *args, const size_t *lens, rl_request *req,
             char err[RL_ERR_LEN]);

/* Strict decimal integer: optional '-', digits, no leading zeros, no spaces, within int64. Returns 0 on
 * success. Shared with the commands that take raw numbers (RL.CLOCK, RL.SETSTATE). */
int rl_parse_int64(const char *s, size_t len, int64_t *out);

/* Copy untrusted bytes into an error message: printable ASCII only, at most 32 characters. */
void rl_sanitize(char *dst, size_t dstlen, const char *src, size_t len);

#endif
