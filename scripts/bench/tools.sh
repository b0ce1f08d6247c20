#!/usr/bin/env bash
# tools.sh -- builds the benchmark's own programs, each only when missing or older than its source (the
# micro-benchmark always: it links whatever algorithms/ is now):
#   multi   BENCH_TOOLS/bench-multi (scripts/bench/bench-multi*.c and bench-multi.h, hiredis): the load
#           generator for what redis-benchmark cannot send, and the memory fills
#   micro   BENCH_TOOLS/bench-micro (scripts/bench/bench-micro.c + algorithms/*.c): the algorithms alone
#   floor   FLOOR_MODULE (default build/floor.so; scripts/bench/floor-module.c): the floor module, which
#           needs the module API header that make puts in build/include
#
#   scripts/bench/tools.sh [multi] [micro] [floor]      (default: all three)
#
# BENCH_TOOLS defaults to build/bench-tools; CC to cc.
set -euo pipefail
cd "$(dirname "$0")/../.."
TOOLS=${BENCH_TOOLS:-build/bench-tools}
FLOOR_MODULE=${FLOOR_MODULE:-build/floor.so}
cflags=(-std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra -Werror)
[ $# -gt 0 ] || set -- multi micro floor

# stale TARGET SOURCE...: TARGET is missing or older than one of its sources.
stale() {
    local target=$1 source
    shift
    [ -e "$target" ] || return 0
    for source in "$@"; do [ "$source" -nt "$target" ] && return 0; done
    return 1
}

mkdir -p "$TOOLS"
for tool in "$@"; do
    case "$tool" in
    multi)
        if stale "$TOOLS/bench-multi" scripts/bench/bench-multi*.[ch]; then
            ${CC:-cc} "${cflags[@]}" -o "$TOOLS/bench-multi" scripts/bench/bench-multi*.c -lhiredis -lpthread
        fi ;;
    micro)
        ${CC:-cc} "${cflags[@]}" -o "$TOOLS/bench-micro" scripts/bench/bench-micro.c algorithms/*.c ;;
    floor)
        if stale "$FLOOR_MODULE" scripts/bench/floor-module.c; then
            [ -f build/include/redismodule.h ] || { echo "bench: build/include/redismodule.h is missing: run make first" >&2; exit 1; }
            ${CC:-cc} "${cflags[@]}" -fPIC -fvisibility=hidden -Ibuild/include -shared -o "$FLOOR_MODULE" scripts/bench/floor-module.c
        fi ;;
    *) echo "usage: scripts/bench/tools.sh [multi] [micro] [floor]" >&2; exit 2 ;;
    esac
done
