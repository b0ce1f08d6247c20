/* window.h -- window counters (RL.WINDOW): a fixed window (FIXED), or the sliding-window counter that
 * weighs the previous window's count by how much of it still overlaps the last window_ms (SLIDING, the
 * default).
 *
 * Request parameters: params[0] = limit, params[1] = window_ms; params[2] = n with SUBWINDOWS.
 *
 * Cell layout, shared by FIXED and SLIDING (a key may be used with either; SUBWINDOWS has its own, below). Three numbers: the start of the
 * current window in ms since the Unix epoch (a multiple of window_ms, < 2^46), the current window's count
 * and the previous window's count (each <= RL_MAX_COUNT < 2^40). 46 + 40 + 40 = 126 bits, split so that
 * each word stays below 2^63 (bit 63 of both words is always 0):
 *   w[0]  bits  0..45  start_ms
 *         bits 46..62  prev, its low 17 bits
 *   w[1]  bits  0..39  curr
 *         bits 40..62  prev, its high 23 bits
 *         bit  63      written by a FIXED call (bit 63 of w[0] is always 0)
 * The last bit keeps "idle means new" true across modes: a FIXED write is idle when its window ends, so
 * a SLIDING read after that must not weigh its count as the previous window's. */
#ifndef RL_WINDOW_H
#define RL_WINDOW_H

#include "rl_common.h"

extern const rl_algorithm rl_window_algorithm;

/* RL.WINDOW's own options: a fixed window, the sliding-window counter (the default), or the window made of
 * n sub-windows (params[2] = n). */
#define RL_F_FIXED RL_F_ALG(0)
#define RL_F_SLIDING RL_F_ALG(1)
#define RL_F_SUBWINDOWS RL_F_ALG(2)
#define RL_WINDOW_MIN_SUBWINDOWS 2
#define RL_WINDOW_MAX_SUBWINDOWS 60

/* The sub-window state (SUBWINDOWS n): 2 + n words.
 *   w[0]  bit 63 set (the two-word layout below never sets it), bits 46..51 n, bits 0..45 the index of the
 *         newest cell (cells are window_ms / n long, cell k covering [k * cell_ms, (k + 1) * cell_ms))
 *   w[1]  cell_ms
 *   w[2 + k % n]  the count of cell k, for the n cells newest - n + 1 .. newest */
#define RL_WINDOW_SUB_BIT (1ULL << 63)
#define RL_WINDOW_SUB_N_SHIFT 46

#define RL_WINDOW_START_BITS 46
#define RL_WINDOW_COUNT_BITS 40
#define RL_WINDOW_PREV_LOW_BITS (63 - RL_WINDOW_START_BITS)  /* 17 */

/* The three numbers, and how they pack; exposed for tests and for RL.SETSTATE documentation. */
typedef struct rl_window_state {
    int64_t start_ms;
    int64_t curr;
    int64_t prev;
    int fixed; /* the state was written by a FIXED call */
} rl_window_state;

rl_window_state rl_window_unpack(const rl_cell *cell);
void rl_window_pack(rl_window_state s, rl_cell *cell);

#endif
