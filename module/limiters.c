/* limiters.c -- the module's side of the list (limiters.h): rl_limiters, one row per limiter with its syntax,
 * data type name, replication tag, algorithm and storage, and what the compiler checks of the list. Anything
 * that names the limiters (an error listing the kinds, COMMAND DOCS) reads them here, so a new row needs no
 * edit elsewhere. */
#include <stdio.h>

#include "rl_module.h"

#define LIMITER_ROW(id, command, type_name, tag, algorithm, storage)                                            \
    [RL_LIM_##id] = {#id, &rl_syntaxes[RL_LIM_##id], &rl_syntaxes_ro[RL_LIM_##id], type_name, tag, algorithm,     \
                     &rl_##storage##_steps, NULL},
rl_limiter rl_limiters[RL_NLIMITERS] = {RL_LIMITERS(LIMITER_ROW)};

/* What the list must get right, checked by the compiler: a module type name has exactly 9 characters
 * (Redis refuses the module at load otherwise), and no two limiters share a tag (a duplicate case label
 * does not compile). */
#define TYPE_NAME_OK_cell(name) (sizeof(name) == 10)
#define TYPE_NAME_OK_log(name) 1
#define TYPE_NAME_OK_lease(name) (sizeof(name) == 10)
#define CHECK_TYPE_NAME(id, command, type_name, tag, algorithm, storage) \
    _Static_assert(TYPE_NAME_OK_##storage(type_name), #id ": a module data type name has 9 characters");
RL_LIMITERS(CHECK_TYPE_NAME)

#define TAG_CASE(id, command, type_name, tag, algorithm, storage) case tag:
static inline void rl_tags_are_distinct(int tag) {
    switch (tag) {
        RL_LIMITERS(TAG_CASE)
        break;
    }
}

void rl_kind_names(char *dst, size_t dstlen, const rl_steps *steps, const char *last) {
    int count = 0, seen = 0;
    for (int i = 0; i < RL_NLIMITERS; i++) count += !steps || rl_limiters[i].steps == steps;
    size_t used = 0;
    dst[0] = '\0';
    for (int i = 0; i < RL_NLIMITERS && used < dstlen; i++) {
        if (steps && rl_limiters[i].steps != steps) continue;
        const char *before = seen == 0 ? "" : seen == count - 1 ? last : ", ";
        used += (size_t)snprintf(dst + used, dstlen - used, "%s%s", before, rl_limiters[i].kind);
        seen++;
    }
}
