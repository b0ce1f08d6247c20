/* docs.h -- COMMAND DOCS' arguments of the limiter commands and RL.ALL, generated from their syntax tables
 * (docs.c). */
#ifndef RL_DOCS_H
#define RL_DOCS_H

#include "rl_module.h"

#define RL_DOCS_ARGS 64
#define RL_DOCS_NAMES 64
#define RL_DOCS_NAME_LEN 48

/* Where the arguments of one command are built while it is registered. */
typedef struct rl_docs_arena {
    RedisModuleCommandArg args[RL_DOCS_ARGS];
    char names[RL_DOCS_NAMES][RL_DOCS_NAME_LEN];
    char summary[192]; /* RL.ALL's spec */
    int nargs, nnames;
    int full; /* a table outgrew the arena: registration fails, at load */
} rl_docs_arena;

/* A limiter's command or read-only form: key, numbers, options. NULL when the arena is full. */
RedisModuleCommandArg *rl_docs_limiter(rl_docs_arena *d, const rl_syntax *syn);
/* RL.ALL or RL.ALL_RO: numkeys, the keys, the call's options, then LIMIT spec, once or more. */
RedisModuleCommandArg *rl_docs_all(rl_docs_arena *d, const rl_syntax *syn);
/* RL.CHECK or RL.CHECK_RO: policy, key, the call's options. */
RedisModuleCommandArg *rl_docs_check(rl_docs_arena *d, const rl_syntax *syn);

#endif
