#!/usr/bin/env bash
# The servers `make test` runs every integration program against: the system's redis-server (Debian
# bookworm's 7.0) and newer ones built here from Debian trixie's source packages, each into
# build/servers/<name>/ (bin/redis-server, bin/redis-cli; Valkey installs its redis-* names too). The
# system's redis-server and apt configuration are never touched: the sources come through
# scripts/debian-source.sh (Debian's archive through apt, else ../shared/debian-src/).
#
#   scripts/servers.sh build [NAME...]   build each NAME (default: all) unless build/servers/NAME's
#                                        redis-server already reports that version; redis-7.0 is only
#                                        checked (it is the system's)
#   scripts/servers.sh bindir NAME       the directory holding NAME's redis-server and redis-cli
#   scripts/servers.sh skipped NAME      why NAME was skipped by the last build, if it was and may be
#   scripts/servers.sh names             every NAME, one a line
#
# A newer server is skipped, not failed, only when its source package cannot be had at all (Debian's
# archive serves no revision its indexes name, and there is no fallback folder: a user's clone), so that
# `make test` tests what can be had; the reason is kept in build/servers/.skipped/NAME for
# scripts/run-tests.sh's summary. Where the fallback folder exists (CI: the clone sits beside shared/),
# or with RL_REQUIRE_SERVERS=1, every server is mandatory and one that cannot be built fails the build.
# RL_SERVERS_DIR puts the servers somewhere else than build/servers (the tests use it).
#
# Built with MALLOC=libc: with the bundled jemalloc valgrind sees almost no allocation (it cannot follow
# a statically linked allocator), and tests/integration_leaks.c would check nothing. Unpacked with
# dpkg-source -x, so Debian's patches (its security fixes) are applied. Needs g++ (Redis 8's fast_float)
# and dpkg-dev (dpkg-source): scripts/deps.sh installs them.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
root=${RL_SERVERS_DIR:-$repo/build/servers}
skips=$root/.skipped

# name: Debian source package, upstream series, suite. redis-7.0 is the system's redis-server.
declare -A pkg=([redis-8.0]=redis [valkey-8.1]=valkey)
declare -A series=([redis-7.0]=7.0 [redis-8.0]=8.0 [valkey-8.1]=8.1)
declare -A suite=([redis-8.0]=trixie [valkey-8.1]=trixie)
names=(redis-7.0 redis-8.0 valkey-8.1)

say() { echo "servers: $*" >&2; }
die() { say "$*"; exit 1; }
known() { [ -n "${series[$1]:-}" ] || die "unknown server '$1' (known: ${names[*]})"; }

bindir() {
    known "$1"
    if [ "$1" = redis-7.0 ]; then
        local system
        system=$(command -v redis-server) || die "redis-7.0 is the system's redis-server: not installed (make deps)"
        dirname "$system"
    else
        echo "$root/$1/bin"
    fi
}

# The version a redis-server binary reports ("Redis server v=8.0.2 ..." or "Valkey server v=8.1.1 ...").
reported() { "$1" --version 2>/dev/null | sed -nE 's/.* v=([0-9][0-9.]*).*/\1/p'; }
fits() { [ "$2" = "${series[$1]}" ] || [[ "$2" == "${series[$1]}".* ]]; }

# May a server whose source cannot be had be skipped? Only without a fallback folder and unless told not to.
may_skip() {
    [ "${RL_REQUIRE_SERVERS:-0}" != 1 ] && [ ! -d "$("$repo/scripts/debian-source.sh" --fallback-dir)" ]
}
# skipped NAME: the reason the last build skipped NAME, if it did and skipping is allowed now.
skipped() {
    known "$1"
    [ -f "$skips/$1" ] && may_skip || return 0
    cat "$skips/$1"
}

build_one() {
    local name=$1 out=$root/$1 have
    known "$name"
    rm -f "$skips/$name"
    if [ "$name" = redis-7.0 ]; then
        local bin
        bin=$(bindir "$name")/redis-server
        have=$(reported "$bin")
        fits "$name" "$have" || die "redis-7.0 is the system's $bin, which reports '${have:-no version}'"
        say "$name: the system's $bin ($have)"
        return
    fi
    have=$( [ -x "$out/bin/redis-server" ] && reported "$out/bin/redis-server" || true)
    if [ -n "$have" ] && fits "$name" "$have" && [ -x "$out/bin/redis-cli" ]; then
        say "$name: $out has $have already"
        return
    fi

    local start=$SECONDS src=$root/.src/$name
    rm -rf "$src" "$out.tmp"
    mkdir -p "$src"
    local dsc rc=0
    dsc=$("$repo/scripts/debian-source.sh" "${suite[$name]}" "${pkg[$name]}" "${series[$name]}" "$src/pkg" \
        2>"$src/source.log") || rc=$?
    cat "$src/source.log" >&2
    if [ "$rc" -eq 3 ]; then
        local reason
        reason=$(sed -n 's/^debian-source: unavailable: //p' "$src/source.log" | tail -n 1)
        [ "${RL_REQUIRE_SERVERS:-0}" != 1 ] ||
            die "$name: the source package cannot be had and RL_REQUIRE_SERVERS=1 makes every server mandatory"
        mkdir -p "$skips"
        echo "${reason:-no ${pkg[$name]} ${series[$name]} source package}" >"$skips/$name"
        rm -rf "$src"
        rmdir "$root/.src" 2>/dev/null || true
        say "$name: skipped: $(cat "$skips/$name")"
        return
    fi
    [ "$rc" -eq 0 ] || die "$name: could not get Debian's ${pkg[$name]} ${series[$name]} source package (see above)"
    local version
    version=$(sed -n 's/^Version: //p' "$dsc" | head -n 1)
    command -v dpkg-source >/dev/null || die "dpkg-source is missing (package dpkg-dev; make deps)"
    command -v g++ >/dev/null || die "g++ is missing (make deps)"
    dpkg-source -x "$dsc" "$src/tree" >"$src/unpack.log" 2>&1 ||
        { cat "$src/unpack.log" >&2; die "$name: dpkg-source -x $(basename "$dsc") failed"; }

    # The make that runs this script (make test) must not hand its variables and flags to the server's.
    # The tree sits inside our repository: the server would take its commit for its own sha, and outside
    # a repository `git diff` compares directories and marks the build dirty. A git that fails, first in
    # PATH, gives what Debian's build (no git) gives: sha=00000000:0. make install relinks too.
    local flags=(BUILD_TLS=no USE_SYSTEMD=no MALLOC=libc) jobs
    jobs=$(nproc)
    mkdir -p "$src/no-git"
    printf '#!/bin/sh\nexit 1\n' >"$src/no-git/git"
    chmod +x "$src/no-git/git"
    server_make() {
        env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u CFLAGS -u LDFLAGS -u CC PATH="$src/no-git:$PATH" \
            make -C "$src/tree" "$@" "${flags[@]}"
    }
    say "$name: building ${pkg[$name]} $version (make -j$jobs ${flags[*]}; log in $src/build.log)"
    if ! server_make -j"$jobs" >"$src/build.log" 2>&1; then
        tail -n 40 "$src/build.log" >&2
        die "$name: the build failed (full log: $src/build.log)"
    fi
    if ! server_make install PREFIX="$out.tmp" >"$src/install.log" 2>&1; then
        tail -n 20 "$src/install.log" >&2
        die "$name: make install failed (full log: $src/install.log)"
    fi
    [ -x "$out.tmp/bin/redis-server" ] && [ -x "$out.tmp/bin/redis-cli" ] ||
        die "$name: make install left no bin/redis-server and bin/redis-cli in $out.tmp"
    have=$(reported "$out.tmp/bin/redis-server")
    fits "$name" "$have" || die "$name: the built redis-server reports '${have:-no version}', not ${series[$name]}.x"
    printf 'Debian %s %s, make %s\n' "${pkg[$name]}" "$version" "${flags[*]}" >"$out.tmp/SOURCE"
    rm -rf "$out"
    mv "$out.tmp" "$out"
    rm -rf "$src"
    rmdir "$root/.src" 2>/dev/null || true
    say "$name: ${pkg[$name]} $version built in $((SECONDS - start)) s into $out ($(du -sh "$out" | cut -f1))"
}

action=${1:-}
[ $# -gt 0 ] && shift
case "$action" in
build)
    [ $# -gt 0 ] || set -- "${names[@]}"
    for n in "$@"; do known "$n"; done
    for n in "$@"; do build_one "$n"; done
    ;;
bindir)
    [ $# -eq 1 ] || die "usage: $0 bindir NAME"
    bindir "$1"
    ;;
skipped)
    [ $# -eq 1 ] || die "usage: $0 skipped NAME"
    skipped "$1"
    ;;
names) printf '%s\n' "${names[@]}" ;;
*)
    echo "usage: $0 build [NAME...] | bindir NAME | skipped NAME | names" >&2
    exit 2
    ;;
esac
