/* parse.h -- the one argument parser of every RL.* command.
 *
 * A command is described by data (rl_syntax): its positional numbers with their ranges, and the options
 * it accepts. An option is a flag, or a flag with a number stored in the request at a slot its table row
 * names, so a new option is one row. The parser turns the arguments after the key into an rl_request or
 * an error that names the argument ("ERR <argument>: <what is wrong>"). It parses one clause at a time
 * and says how many arguments the clause used, so one command line can carry several clauses. It uses no
 * Redis header, so unit tests and fuzzers drive it directly. */
#ifndef RL_PARSE_H
#define RL_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "../algorithms/rl_common.h"

#define RL_MAX_PARAMS 3

/* The module's own option: hold the reply server-side for wait_ms (RL.LEAKY BLOCK). */
#define RL_F_BLOCK RL_F_MODULE(0)
/* WAIT timeout_ms: wait server-side, up to the timeout, for a denied request to fit (module/wait.c); the
 * timeout goes to the request's wait_timeout_ms. */
#define RL_F_WAIT RL_F_MODULE(1)
/* ID lease_id (RL.ACQUIRE): the request names its lease. The id is a string, which a request does not hold:
 * the parser records where it is among the arguments (rl_request's id_arg), and the module's glue keeps that
 * argument beside the request (rl_clause, module/rl_module.h). */
#define RL_F_ID RL_F_MODULE(2)

/* A number is a strict decimal integer within [min, max], or, for a decimal spec, a decimal number with
 * up to six digits after the point (rl_parse_decimal), stored as an integer count of millionths
 * (RL_DECIMAL_SCALE: 0.5 is 500000), min and max being millionths too. A positional decimal is marked
 * RL_DECIMAL; an option's by RL_SLOT_DECIMAL(field). */
#define RL_DECIMAL 1
#define RL_DECIMAL_SCALE 1000000
/* A positional choice (RL.QUOTA's DAY|WEEK|MONTH): one of a fixed list of upper-case tokens, matched
 * case-insensitively, stored as its index in the list (min 0, max the last index). The error names the
 * argument and every token ("ERR period: must be DAY, WEEK or MONTH"); COMMAND DOCS shows a oneof of pure
 * tokens. */
#define RL_CHOICE 2

typedef struct rl_param_spec {
    const char *name;
    int64_t min, max;
    int kind;                   /* 0: an integer; RL_DECIMAL; RL_CHOICE */
    const char *const *choices; /* RL_CHOICE: the tokens, max + 1 of them */
} rl_param_spec;

/* Where an option's value goes: the offset of an int64_t field of rl_request, marked for a decimal, or
 * none for a flag. */
#define RL_SLOT(field) ((int)offsetof(rl_request, field))
#define RL_NO_VALUE (-1)
#define RL_SLOT_DECIMAL_BIT 0x10000
#define RL_SLOT_DECIMAL(field) (RL_SLOT(field) | RL_SLOT_DECIMAL_BIT)
#define RL_SLOT_IS_DECIMAL(slot) ((slot) != RL_NO_VALUE && ((slot) & RL_SLOT_DECIMAL_BIT) != 0)
/* A string option (RL_SLOT_STRING(field)): its value is any bytes whose length is within [min, max], and the
 * field gets the value's index among the clause's arguments, not the value. */
#define RL_SLOT_STRING_BIT 0x20000
#define RL_SLOT_STRING(field) (RL_SLOT(field) | RL_SLOT_STRING_BIT)
#define RL_SLOT_IS_STRING(slot) ((slot) != RL_NO_VALUE && ((slot) & RL_SLOT_STRING_BIT) != 0)
#define RL_SLOT_OFFSET(slot) ((slot) & (RL_SLOT_DECIMAL_BIT - 1))

typedef struct rl_option_spec {
    const char *name;    /* upper case; matched case-insensitively */
    uint32_t flag;       /* RL_F_* bit set when the option is present (each option has its own bit) */
    int slot;            /* RL_SLOT(field) the value is stored in, or RL_NO_VALUE */
    int64_t min, max;    /* range of the value, for options that take one */
    uint32_t conflicts;  /* flags this option cannot be combined with (both ways: each lists the other) */
    const char *value;   /* COMMAND DOCS: the value's name in docs/commands.md ("n", "timeout_ms"); NULL for a
                          * flag */
    size_t name_len;     /* strlen(name), known when the table is written: the lookup compares it first */
} rl_option_spec;

/* Every RL.* command that parses: its name (for errors), its numbers, its options, the options of that
 * table this command does not take (a read-only form shares its table with the writing one), and what
 * COMMAND DOCS says of it. */
typedef struct rl_syntax {
    const char *name;
    int nparams;
    rl_param_spec params[RL_MAX_PARAMS];
    const rl_option_spec *options;
    int noptions;
    uint32_t excluded;       /* flags of options this command does not take */
    const char *summary;     /* COMMAND DOCS */
    const char *complexity;
    const char *since;       /* COMMAND DOCS: the module version that brought the command */
} rl_syntax;

/* The most arguments after the key any command can take: every number, every option once with value. */
#define RL_MAX_ARGS 24

/* Parse one clause from args[0..nargs): the numbers, then options until the arguments run out or one is
 * not an option of this syntax. Fills *req (cost 1 unless COST, now_us 0) and returns how many arguments
 * it used (at least syn->nparams). On error writes a complete Redis error (printable, no CR/LF) to err
 * and returns -1. */
int rl_parse_clause(const rl_syntax *syn, int nargs, const char *const *args, const size_t *lens, rl_request *req,
                    char err[RL_ERR_LEN]);

/* Parse args[0..nargs) (the arguments after the key) as one clause that uses them all: an argument left
 * over is an unknown option. Returns 0 or -1 with err. */
int rl_parse(const rl_syntax *syn, int nargs, const char *const *args, const size_t *lens, rl_request *req,
             char err[RL_ERR_LEN]);

/* Strict decimal integer: optional '-', digits, no leading zeros, no spaces, within int64. Returns 0 on
 * success. Shared with the commands that take raw numbers (RL.CLOCK, RL.SETSTATE). */
int rl_parse_int64(const char *s, size_t len, int64_t *out);

/* Strict decimal number, as millionths: up to 12 digits with no leading zero (but a lone 0), optionally
 * '.' and 1 to 6 digits: "12", "0.5", "2.25", "0.000001"; no sign, exponent, spaces, "inf", "nan" or hex.
 * Exact: *out is the number times 10^6. Returns 0 on success. */
int rl_parse_decimal(const char *s, size_t len, int64_t *out);

/* The index of the token s (any case) among a choice's tokens, or -1. */
int rl_choice_index(const rl_param_spec *p, const char *s, size_t len);

/* The error of a choice that matches none of its tokens: "ERR <name>: must be A, B or C". Returns -1. */
int rl_choice_error(char err[RL_ERR_LEN], const rl_param_spec *p);

/* The error of a number out of its range: "ERR <name>: must be an integer between <min> and <max>".
 * Returns -1. */
int rl_range_error(char err[RL_ERR_LEN], const char *name, int64_t min, int64_t max);

/* Copy untrusted bytes into an error message: printable ASCII only, at most 32 characters. */
void rl_sanitize(char *dst, size_t dstlen, const char *src, size_t len);

/* "ERR LIMIT <i>: <rest of err>": an error of RL.ALL's clause i (0-based), parsing or deciding, names its
 * clause (err is rewritten in place; a long message is cut). */
void rl_name_clause(char err[RL_ERR_LEN], int i);

/* 1 when s (len bytes) is a name RL.POLICY takes: 1 to max of A-Z, a-z, 0-9, '_' and '-'. */
int rl_policy_name_ok(const char *s, size_t len, size_t max);

#endif
