#!/usr/bin/env bash
# Checks the Debian package of the module (mk/deb.mk, scripts/deb/build.sh) the way a user meets it:
# `make deb` builds build/redis-ratelimit_<version>_<arch>.deb with the module's version and this machine's
# architecture; its control fields, its file list and its stripped .so are what docs/operations.md says;
# lintian finds no error and no warning; `dpkg -i` installs it; the installed ratelimit.so, loaded into a
# fresh system redis-server on 127.0.0.1 with --loadmodule, answers RL.TOKEN as the module does; and
# `dpkg --purge` removes every file again. The purge runs whatever happens (trap), as does stopping the
# server.
#
# The package is installed system-wide, so this test needs root (or sudo without a password) and a machine
# where redis-ratelimit is not installed: it refuses to run otherwise (a failure, never a pass), rather than
# remove or overwrite a user's package. Two runs at once on one machine: the second refuses.
# Prints "deb: N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

# A make of our own, not the jobserver of the `make test` that runs us.
unset MAKEFLAGS MFLAGS MAKELEVEL

# shellcheck source=tests/lib/check.sh
CHECK_SUITE=deb
. tests/lib/check.sh
# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh

package=redis-ratelimit
so=/usr/lib/redis/modules/ratelimit.so
docdir=/usr/share/doc/$package
conf=$docdir/examples/ratelimit.conf
# What the package must install (docs/operations.md lists the same).
files=("$so" "$docdir/copyright" "$docdir/changelog.gz" "$docdir/README.md.gz" "$docdir/docs/commands.md.gz"
    "$docdir/docs/operations.md.gz" "$conf" "/usr/share/lintian/overrides/$package")
# The system's server, the one the package Recommends, whatever PATH the test runner gives.
system_server=/usr/bin/redis-server
system_cli=/usr/bin/redis-cli

# --- What the test needs, or a failure that says why. --------------------------------------------------
for tool in dpkg dpkg-deb dpkg-query lintian readelf; do
    command -v "$tool" >/dev/null || check_abort "$tool is missing: this test needs Debian's dpkg and lintian (scripts/deps.sh deb)"
done
if [ ! -x "$system_server" ] || [ ! -x "$system_cli" ]; then
    check_abort "no system redis-server and redis-cli in /usr/bin (scripts/deps.sh --runtime installs them)"
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then
    sudo -n true 2>/dev/null || check_abort "dpkg -i needs root, or sudo without a password: not run"
    as_root=(sudo -n)
fi
package_status() { dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true; }
not_installed() { case "$(package_status)" in "" | not-installed) true ;; *) false ;; esac; }
not_installed ||
    check_abort "$package is already on this machine (dpkg status: $(package_status)): left alone, not tested"
[ ! -e "$so" ] || check_abort "$so exists, from outside the package: left alone, not tested"
modules_dir_existed=0
[ ! -d /usr/lib/redis/modules ] || modules_dir_existed=1

scratch=$(mktemp -d "${TMPDIR:-/tmp}/rl-check-deb-XXXXXX")
installed=0
cleanup() {
    server_stop
    if [ "$installed" -eq 1 ]; then
        "${as_root[@]}" dpkg --purge "$package" >/dev/null 2>&1 || echo "check-deb: dpkg --purge $package failed" >&2
    fi
    rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# dpkg, waiting while another process (an apt-get of another job) holds dpkg's lock; output in $out.
out="" rc=0
run_dpkg() {
    local _
    for _ in $(seq 60); do
        rc=0
        out=$("${as_root[@]}" dpkg "$@" 2>&1) || rc=$?
        [ "$rc" -ne 0 ] && contains "$out" "lock" || return 0
        sleep 2
    done
}

# --- Build. ----------------------------------------------------------------------------------------------
out=$(make -s --no-print-directory deb 2>&1) || check_abort "make deb failed: $out"
deb=$(scripts/deb/build.sh --path build)
code=$(sed -n 's/^#define RL_MODULE_VERSION \([0-9]*\)$/\1/p' module/ratelimit.c)
version="$((code / 10000)).$((code / 100 % 100)).$((code % 100))"
check "the .deb is named after the module's version $version and the architecture" \
    [ "$deb" = "build/${package}_${version}_$(dpkg --print-architecture).deb" ]
check "make deb writes $deb" test -f "$deb"
field() { dpkg-deb --field "$deb" "$1"; }
check "Package: $package" [ "$(field Package)" = "$package" ]
check "Version: $version" [ "$(field Version)" = "$version" ]
check "Architecture: this machine's" [ "$(field Architecture)" = "$(dpkg --print-architecture)" ]
check "Depends names libc6 with a version (dpkg-shlibdeps)" contains "$(field Depends)" "libc6 (>= "
check "Recommends redis-server" contains "$(field Recommends)" "redis-server"
listing=$(dpkg-deb --contents "$deb")$'\n'
for f in "${files[@]}"; do
    check "the package holds $f" contains "$listing" " ./${f#/}"$'\n'
done
check "every file and directory of the package is owned by root" \
    [ "$(awk 'NF && $2 != "root/root"' <<<"$listing")" = "" ]
dpkg-deb --extract "$deb" "$scratch/tree"
stripped() { # stripped FILE: no symbol table, no debug info
    local sections
    sections=$(readelf -SW "$1")
    lacks "$sections" " .symtab " && lacks "$sections" " .debug_info "
}
build_id() { readelf -n "$1" | sed -n 's/^ *Build ID: //p'; }
same_build_id() { [ -n "$(build_id "$1")" ] && [ "$(build_id "$1")" = "$(build_id "$2")" ]; }
check "the packaged .so is stripped (no .symtab, no .debug_info)" stripped "$scratch/tree$so"
unstripped() { ! stripped "$1"; }
check "build/ratelimit.so is not (it is the debug file)" unstripped build/ratelimit.so
check "the packaged .so keeps the build ID of build/ratelimit.so" same_build_id build/ratelimit.so "$scratch/tree$so"

# --- lintian: no error (its exit status) and no warning either. -------------------------------------------
rc=0
lint=$(lintian --fail-on error "$deb" 2>&1) || rc=$?
check "lintian --fail-on error passes" [ "$rc" -eq 0 ]
check "lintian reports no error and no warning" [ -z "$(grep -E '^[EW]: ' <<<"$lint" || true)" ]
[ "$rc" -eq 0 ] || echo "$lint" >&2

# --- Install. -----------------------------------------------------------------------------------------------
installed=1
run_dpkg -i "$deb"
check "dpkg -i installs the package" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || check_abort "dpkg -i $deb failed: $out"
check "dpkg says $package is installed" [ "$(package_status)" = installed ]
for f in "${files[@]}"; do
    check "installed: $f" test -f "$f"
done
check "the installed .so is executable (Redis 7.0 and later refuse to load it otherwise)" test -x "$so"
run_dpkg --verify "$package"
dpkg_quiet() { [ "$rc" -eq 0 ] && [ -z "$out" ]; }
check "dpkg --verify: every installed file matches its md5sum" dpkg_quiet
check "the example's only setting is the loadmodule line of the installed .so" \
    [ "$(grep -v -E '^(#|$)' "$conf")" = "loadmodule $so" ]

# --- The installed module in a fresh system redis-server. -----------------------------------------------------
REDIS_SERVER=$system_server REDIS_CLI=$system_cli RL_MODULE=$so
# shellcheck disable=SC2119 # no server arguments beyond server.sh's own
server_start ||
    check_abort "$system_server did not start with --loadmodule $so"
modules=$(server_ask "$SERVER_PORT" MODULE LIST | tr -d '\r' | paste -sd' ')
check "MODULE LIST names ratelimit, version $code, from $so" \
    contains "$modules" "name ratelimit ver $code path $so"
# A bucket of 10 refilled 1 token an hour: the first call takes one, the second asks for 10 and is denied,
# whatever the clock does between them.
reply=$(server_ask "$SERVER_PORT" RL.TOKEN deb:check 10 1 3600000 | paste -sd' ')
check "RL.TOKEN: allowed, limit 10, remaining 9, retry_after_ms -1 (got: $reply)" \
    contains " $reply" " 1 10 9 -1 "
reply=$(server_ask "$SERVER_PORT" RL.TOKEN deb:check 10 1 3600000 COST 10 | paste -sd' ')
check "RL.TOKEN COST 10: denied, limit 10, remaining 9 (got: $reply)" contains " $reply" " 0 10 9 "
# Gone, or a zombie our shell has not collected yet.
server_gone() {
    local state
    state=$(ps -o stat= -p "$SERVER_PID" 2>/dev/null || true)
    [ -z "$state" ] || [[ "$state" == Z* ]]
}
server_ask "$SERVER_PORT" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
for _ in $(seq 100); do
    server_gone && break
    sleep 0.1
done
check "SHUTDOWN NOSAVE ends the server" server_gone
server_stop

# --- Purge. -------------------------------------------------------------------------------------------------
run_dpkg --purge "$package"
check "dpkg --purge removes the package" [ "$rc" -eq 0 ]
[ "$rc" -ne 0 ] || installed=0
check "dpkg no longer knows $package" not_installed
for f in "${files[@]}"; do
    check "gone: $f" test ! -e "$f"
done
check "gone: $docdir" test ! -e "$docdir"
if [ "$modules_dir_existed" -eq 0 ]; then
    check "gone: /usr/lib/redis/modules (the package made it)" test ! -e /usr/lib/redis/modules
fi
check_summary
