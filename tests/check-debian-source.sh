#!/usr/bin/env bash
# Checks how scripts/debian-source.sh gets a newer server's source package, and what scripts/servers.sh
# and scripts/run-tests.sh make of it when it cannot, offline: a fake Debian archive (debian/ and
# debian-security/, three suites' Sources indexes and Release files, a pool) is served by a small HTTP
# server on 127.0.0.1, and the scripts are pointed at it (RL_DEBIAN_MIRROR, RL_DEBIAN_UNSIGNED=1: the fake
# indexes are not signed). The package is a made-up redis 8.0.9 in two revisions, deb13u2 and deb13u3.
#
#   1. every index names a revision the pool answers 404 for, no fallback folder: debian-source.sh says
#      "unavailable" (exit 3) and why; servers.sh skips the server and keeps the reason; run-tests.sh
#      prints "redis-8.0: skipped: ..." and passes, with the server out of the SERVERS its programs see,
#      and runs a cross-server program (tests/crossversion.c) only when a newer server is tested; with
#      RL_REQUIRE_SERVERS=1, or once a fallback folder exists, the same is a failure
#   2. the same with a fallback folder: its checksummed copy is used
#   3. a fallback whose file does not match SHA256SUMS: refused, and fatal (exit 1, servers.sh fails)
#   4. one suite's index names a revision answering 404, another's a revision the pool serves: that one
#      is used, verified; newest first when both are served; the exact revision when one is asked for
#   5. a download that does not match its index's SHA256: refused (the next revision is tried)
#   6. an unsigned archive without RL_DEBIAN_UNSIGNED is refused; RL_DEBIAN_UNSIGNED is refused for a
#      mirror other than 127.0.0.1
# Prints "debsrc: N passed, N failed"; stops the HTTP server it started and removes its files.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# shellcheck source=tests/lib/check.sh
CHECK_SUITE=debsrc
. tests/lib/check.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rl-check-debsrc-XXXXXX")
www=$tmp/www           # what the HTTP server serves
store=$tmp/store       # every file of both revisions, as built
http_pid=""
cleanup() {
    [ -z "$http_pid" ] || kill "$http_pid" 2>/dev/null || true
    [ -z "$http_pid" ] || wait "$http_pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
mkdir -p "$www" "$store"

# --- The made-up package: one orig tarball, a debian tarball and a .dsc per revision. ------------------
orig=redis_8.0.9.orig.tar.gz
mkdir -p "$tmp/tree/redis-8.0.9"
echo "fake redis 8.0.9" >"$tmp/tree/redis-8.0.9/README"
tar -C "$tmp/tree" -czf "$store/$orig" redis-8.0.9
sumline() { printf ' %s %s %s\n' "$(sha256sum <"$1" | cut -d' ' -f1)" "$(stat -c %s "$1")" "$(basename "$1")"; }
for u in 2 3; do
    rev=8.0.9-1+deb13u$u
    mkdir -p "$tmp/tree/$rev/debian"
    echo "revision $rev" >"$tmp/tree/$rev/debian/changelog"
    tar -C "$tmp/tree/$rev" -cJf "$store/redis_$rev.debian.tar.xz" debian
    {
        printf 'Format: 3.0 (quilt)\nSource: redis\nVersion: 5:%s\nChecksums-Sha256:\n' "$rev"
        sumline "$store/$orig"
        sumline "$store/redis_$rev.debian.tar.xz"
    } >"$store/redis_$rev.dsc"
done

# --- The fake archive. ---------------------------------------------------------------------------------
# archive "TREE SUITE REVISION SERVED"...: rebuild $www with these index entries. TREE is debian or
# debian-security; REVISION a deb13uN (or - for an index naming no redis); SERVED yes puts the files in
# that tree's pool. Every suite of the three gets an index (empty when not listed), as in the real archive.
archive() {
    rm -rf "${www:?}"/*
    local entry tree_suite tree suite u served dir rev idx
    for tree_suite in debian/trixie debian/trixie-updates debian-security/trixie-security; do
        mkdir -p "$www/${tree_suite%%/*}/dists/${tree_suite#*/}/main/source"
        : >"$www/${tree_suite%%/*}/dists/${tree_suite#*/}/main/source/Sources"
    done
    for entry in "$@"; do
        read -r tree suite u served <<<"$entry"
        [ "$u" != - ] || continue
        rev=8.0.9-1+deb13u$u
        dir=pool/main/r/redis
        [ "$tree" = debian ] || dir=pool/updates/main/r/redis
        idx=$www/$tree/dists/$suite/main/source/Sources
        {
            printf 'Package: redis\nBinary: redis-server\nVersion: 5:%s\nDirectory: %s\nChecksums-Sha256:\n' \
                "$rev" "$dir"
            sumline "$store/redis_$rev.dsc"
            sumline "$store/$orig"
            sumline "$store/redis_$rev.debian.tar.xz"
            printf '\n'
        } >>"$idx"
        if [ "$served" = yes ]; then
            mkdir -p "$www/$tree/$dir"
            cp "$store/redis_$rev.dsc" "$store/$orig" "$store/redis_$rev.debian.tar.xz" "$www/$tree/$dir/"
        fi
    done
    for tree_suite in debian/trixie debian/trixie-updates debian-security/trixie-security; do
        local rel=$www/${tree_suite%%/*}/dists/${tree_suite#*/}
        {
            printf 'Origin: Fake\nLabel: Fake\nSuite: %s\nCodename: %s\n' "${tree_suite#*/}" "${tree_suite#*/}"
            printf 'Date: %s\nComponents: main\nArchitectures: amd64\nSHA256:\n' "$(LC_ALL=C date -u -R)"
            (cd "$rel" && sumline main/source/Sources | sed 's| Sources$| main/source/Sources|')
        } >"$rel/Release"
    done
}

# The HTTP server: 127.0.0.1, a port the kernel picks, written to a file once it listens.
cat >"$tmp/serve.py" <<'PY'
# Serve a directory on 127.0.0.1 (port chosen by the kernel, written to a file), quietly.
import functools, http.server, sys
root, port_file = sys.argv[1], sys.argv[2]
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def send_error(self, code, message=None, explain=None):
        super().send_error(code, None, explain)  # the standard reason ("404 Not Found"), as Debian's
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
PY
python3 "$tmp/serve.py" "$www" "$tmp/port" &
http_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
if [ ! -s "$tmp/port" ]; then
    check_abort "the HTTP server did not start"
fi
mirror=http://127.0.0.1:$(cat "$tmp/port")

# get VERSION [FALLBACK]: run debian-source.sh for redis VERSION from the fake archive into a fresh
# $tmp/dest; stdout in $out, stderr in $err, exit status in $rc. FALLBACK defaults to a folder that does
# not exist.
out="" err="" rc=0
get() {
    rm -rf "$tmp/dest"
    rc=0
    RL_DEBIAN_MIRROR=$mirror RL_DEBIAN_UNSIGNED=1 RL_DEBIAN_SRC=${2:-$tmp/no-fallback} \
        scripts/debian-source.sh trixie redis "$1" "$tmp/dest" >"$tmp/out" 2>"$tmp/err" || rc=$?
    out=$(cat "$tmp/out") err=$(cat "$tmp/err")
}
# same FILE...: each file in $tmp/dest is byte for byte the one built in $store.
same() { local f; for f in "$@"; do cmp -s "$tmp/dest/$f" "$store/$f" || return 1; done; }
no_dsc() { ! compgen -G "$tmp/dest/*.dsc" >/dev/null; }
servers() { # servers ARGS...: scripts/servers.sh against the fake archive, servers in $tmp/servers
    RL_DEBIAN_MIRROR=$mirror RL_DEBIAN_UNSIGNED=1 RL_SERVERS_DIR=$tmp/servers scripts/servers.sh "$@"
}
u2=(redis_8.0.9-1+deb13u2.dsc "$orig" redis_8.0.9-1+deb13u2.debian.tar.xz)
u3=(redis_8.0.9-1+deb13u3.dsc "$orig" redis_8.0.9-1+deb13u3.debian.tar.xz)

# --- 1. Every index names deb13u3, which the pool answers 404 for; no fallback folder. ----------------
archive "debian trixie 3 no" "debian-security trixie-security 3 no"
get 8.0
check "404, no fallback: exit 3 (unavailable), not $rc" [ "$rc" -eq 3 ]
check "404, no fallback: an 'unavailable' line naming the revision and the 404" \
    contains "$(tail -n 1 <<<"$err")" "debian-source: unavailable: Debian's archive gave no redis 8.0 source (5:8.0.9-1+deb13u3 (trixie): redis_8.0.9-1+deb13u3.dsc: 404"
check "404, no fallback: both suites' pools were tried" contains "$err" "5:8.0.9-1+deb13u3 (trixie-security): redis_8.0.9-1+deb13u3.dsc: 404"
check "404, no fallback: says there is no fallback folder" contains "$err" "no fallback folder $tmp/no-fallback"
check "404, no fallback: nothing printed, no .dsc left" eval '[ -z "$out" ] && no_dsc'

export RL_DEBIAN_SRC=$tmp/no-fallback
rc=0
servers build redis-8.0 >"$tmp/out" 2>&1 || rc=$?
check "404, no fallback: servers.sh build skips redis-8.0 (exit 0, not $rc)" [ "$rc" -eq 0 ]
check "404, no fallback: servers.sh says so" grep -q "^servers: redis-8.0: skipped: Debian's archive gave no redis 8.0" "$tmp/out"
reason=$(servers skipped redis-8.0)
check "404, no fallback: servers.sh skipped gives the reason" contains "$reason" "redis_8.0.9-1+deb13u3.dsc: 404 Not Found"
check "404, no fallback: nothing built" [ ! -e "$tmp/servers/redis-8.0" ]

# run-tests.sh: the skipped server is one summary line, counts no failure, and is not in SERVERS.
cat >"$tmp/fake-test" <<EOF
#!/bin/sh
# A test program for run-tests.sh: records the SERVERS it was given, passes one check.
printf '%s\n' "\${SERVERS-unset}" >"$tmp/servers-seen"
echo "fake: 1 passed, 0 failed"
EOF
chmod +x "$tmp/fake-test"
rc=0
RL_SERVERS_DIR=$tmp/servers scripts/run-tests.sh --servers "redis-7.0 redis-8.0" "$tmp/fake-test" \
    >"$tmp/out" 2>&1 || rc=$?
summary=$(tail -n 4 "$tmp/out")
check "run-tests: a skipped server fails nothing (exit 0, not $rc)" [ "$rc" -eq 0 ]
check "run-tests: one line per server, the skipped one with its reason" \
    eval '[ "$(sed -n 2p <<<"$summary")" = "redis-7.0: 0 passed, 0 failed" ] &&
          [ "$(sed -n 3p <<<"$summary")" = "redis-8.0: skipped: $reason" ]'
check "run-tests: the closing line" [ "$(tail -n 1 "$tmp/out")" = "1 passed, 0 failed" ]
check "run-tests: the programs see only the servers tested" [ "$(cat "$tmp/servers-seen")" = redis-7.0 ]
rc=0
RL_SERVERS_DIR=$tmp/servers scripts/run-tests.sh --servers redis-8.0 "$tmp/fake-test" >"$tmp/out" 2>&1 || rc=$?
check "run-tests: none tested, a blank SERVERS (an empty one means all to tests/crossversion.c)" \
    eval '[ "$rc" -eq 0 ] && [ "$(cat "$tmp/servers-seen")" = " " ]'

# A program comparing servers (RL_CROSS_SERVER_PROGRAMS, like tests/crossversion.c) runs only when a
# server newer than redis-7.0 is tested: not with redis-8.0 skipped, but with a valkey-8.1 (a stub here).
cat >"$tmp/fake-cross" <<EOF
#!/bin/sh
# A cross-server program for run-tests.sh: records that it ran and the SERVERS it was given.
printf '%s\n' "\$SERVERS" >"$tmp/cross-ran"
echo "cross: 1 passed, 0 failed"
EOF
chmod +x "$tmp/fake-cross"
rc=0
RL_CROSS_SERVER_PROGRAMS=$tmp/fake-cross RL_SERVERS_DIR=$tmp/servers \
    scripts/run-tests.sh --servers "redis-7.0 redis-8.0" "$tmp/fake-cross" >"$tmp/out" 2>&1 || rc=$?
check "run-tests: no newer server tested, the cross-server program is not run, and says so" \
    eval '[ "$rc" -eq 0 ] && [ ! -e "$tmp/cross-ran" ] &&
          grep -qx "$tmp/fake-cross: not run: no server newer than redis-7.0 is tested" "$tmp/out"'
mkdir -p "$tmp/servers/valkey-8.1/bin"
printf '#!/bin/sh\necho "Valkey server v=8.1.9 (a stub)"\n' >"$tmp/servers/valkey-8.1/bin/redis-server"
cp "$tmp/servers/valkey-8.1/bin/redis-server" "$tmp/servers/valkey-8.1/bin/redis-cli"
chmod +x "$tmp/servers/valkey-8.1/bin/"*
rc=0
RL_CROSS_SERVER_PROGRAMS=$tmp/fake-cross RL_SERVERS_DIR=$tmp/servers \
    scripts/run-tests.sh --servers "redis-7.0 redis-8.0 valkey-8.1" "$tmp/fake-cross" >"$tmp/out" 2>&1 || rc=$?
check "run-tests: a newer server tested, the cross-server program runs with it" \
    eval '[ "$rc" -eq 0 ] && [ "$(cat "$tmp/cross-ran" 2>/dev/null)" = "redis-7.0 valkey-8.1" ] &&
          [ "$(tail -n 3 "$tmp/out" | head -n 2)" = "redis-8.0: skipped: $reason
valkey-8.1: 0 passed, 0 failed" ]'
rm -rf "$tmp/servers/valkey-8.1"

# RL_REQUIRE_SERVERS=1: the same is fatal, and no earlier skip is honoured.
rc=0
RL_REQUIRE_SERVERS=1 servers build redis-8.0 >"$tmp/out" 2>&1 || rc=$?
check "RL_REQUIRE_SERVERS=1: servers.sh build fails" [ "$rc" -ne 0 ]
check "RL_REQUIRE_SERVERS=1: and says why" grep -q "RL_REQUIRE_SERVERS=1 makes every server mandatory" "$tmp/out"
servers build redis-8.0 >/dev/null 2>&1  # a skip record again, which RL_REQUIRE_SERVERS must ignore
rc=0
RL_REQUIRE_SERVERS=1 RL_SERVERS_DIR=$tmp/servers scripts/run-tests.sh --servers redis-8.0 "$tmp/fake-test" \
    >"$tmp/out" 2>&1 || rc=$?
check "RL_REQUIRE_SERVERS=1: run-tests counts the missing server as a failure" \
    eval '[ "$rc" -ne 0 ] && grep -qx "redis-8.0: 0 passed, 1 failed (not built)" "$tmp/out"'

# --- 2. The same archive, with a fallback folder holding deb13u2. ---------------------------------------
fallback=$tmp/fallback
mkdir -p "$fallback"
cp "${u2[@]/#/$store/}" "$fallback/"
(cd "$fallback" && sha256sum "${u2[@]}" >SHA256SUMS)
# The skip recorded above is not honoured once a fallback folder exists: the server is mandatory again.
check "fallback present: the earlier skip is not reported" \
    eval '[ -s "$tmp/servers/.skipped/redis-8.0" ] && [ -z "$(RL_DEBIAN_SRC=$fallback servers skipped redis-8.0)" ]'
rc=0
RL_DEBIAN_SRC=$fallback RL_SERVERS_DIR=$tmp/servers scripts/run-tests.sh --servers redis-8.0 "$tmp/fake-test" \
    >"$tmp/out" 2>&1 || rc=$?
check "fallback present: run-tests counts the server not built as a failure" \
    eval '[ "$rc" -ne 0 ] && grep -qx "redis-8.0: 0 passed, 1 failed (not built)" "$tmp/out"'
get 8.0 "$fallback"
check "404, fallback: exit 0, not $rc" [ "$rc" -eq 0 ]
check "404, fallback: prints the .dsc" [ "$out" = "$tmp/dest/redis_8.0.9-1+deb13u2.dsc" ]
check "404, fallback: the fallback's files" same "${u2[@]}"
check "404, fallback: says where from" contains "$err" "redis 5:8.0.9-1+deb13u2 from $fallback (checksums verified)"

# --- 3. A fallback file that does not match SHA256SUMS. --------------------------------------------------
echo tampered >>"$fallback/redis_8.0.9-1+deb13u2.debian.tar.xz"
get 8.0 "$fallback"
check "bad fallback: exit 1 (fatal, not unavailable), not $rc" [ "$rc" -eq 1 ]
check "bad fallback: refused, naming the file" \
    contains "$err" "$fallback/redis_8.0.9-1+deb13u2.debian.tar.xz is missing or does not match SHA256SUMS (refused)"
check "bad fallback: nothing printed, no .dsc left" eval '[ -z "$out" ] && no_dsc'
rc=0
RL_DEBIAN_SRC=$fallback servers build redis-8.0 >"$tmp/out" 2>&1 || rc=$?
check "bad fallback: servers.sh build fails (a fallback folder makes every server mandatory)" [ "$rc" -ne 0 ]
check "bad fallback: and no skip is reported" [ -z "$(RL_DEBIAN_SRC=$fallback servers skipped redis-8.0)" ]
rm -rf "$fallback"

# --- 4. The security index names deb13u3 (404), the base suite's names deb13u2 (served). ---------------
archive "debian trixie 2 yes" "debian-security trixie-security 3 no"
get 8.0
check "another suite's revision: exit 0, not $rc" [ "$rc" -eq 0 ]
check "another suite's revision: deb13u2 from the archive" [ "$out" = "$tmp/dest/redis_8.0.9-1+deb13u2.dsc" ]
check "another suite's revision: its files, intact" same "${u2[@]}"
check "another suite's revision: deb13u3 was tried first" \
    contains "$err" "redis 5:8.0.9-1+deb13u3 (trixie-security): redis_8.0.9-1+deb13u3.dsc: 404 Not Found"
check "another suite's revision: verified against its index" \
    contains "$err" "redis 5:8.0.9-1+deb13u2 from the trixie index's pool (SHA256 verified against that index)"

archive "debian trixie 2 yes" "debian-security trixie-security 3 yes"
get 8.0
check "both served: the newest, deb13u3" eval '[ "$rc" -eq 0 ] && [ "$out" = "$tmp/dest/redis_8.0.9-1+deb13u3.dsc" ] && same "${u3[@]}"'
get 5:8.0.9-1+deb13u2
check "both served, deb13u2 asked for: deb13u2" eval '[ "$rc" -eq 0 ] && [ "$out" = "$tmp/dest/redis_8.0.9-1+deb13u2.dsc" ]'
get 8.1
check "both served, 8.1 asked for: unavailable" eval '[ "$rc" -eq 3 ] && contains "$err" "no trixie index names a redis source of version 8.1"'

# --- 5. Downloads that do not match their index. --------------------------------------------------------
archive "debian trixie 2 yes" "debian-security trixie-security 3 yes"
echo tampered >>"$www/debian-security/pool/updates/main/r/redis/$orig"
get 8.0
check "tampered newest: refused" contains "$err" "redis 5:8.0.9-1+deb13u3 (trixie-security): $orig does not match the SHA256 and size the index publishes (refused)"
check "tampered newest: the next revision is used" eval '[ "$rc" -eq 0 ] && [ "$out" = "$tmp/dest/redis_8.0.9-1+deb13u2.dsc" ] && same "${u2[@]}"'
archive "debian trixie 2 yes"
cp "$store/redis_8.0.9-1+deb13u3.debian.tar.xz" "$www/debian/pool/main/r/redis/redis_8.0.9-1+deb13u2.debian.tar.xz"
get 8.0
check "tampered only revision: unavailable (exit 3), not $rc" [ "$rc" -eq 3 ]
check "tampered only revision: refused, naming the file" \
    contains "$err" "redis_8.0.9-1+deb13u2.debian.tar.xz does not match the SHA256 and size the index publishes (refused)"
check "tampered only revision: nothing printed, no .dsc left" eval '[ -z "$out" ] && no_dsc'

# --- 6. Signatures stay required. -------------------------------------------------------------------------
archive "debian trixie 2 yes"
rm -rf "$tmp/dest"
rc=0
RL_DEBIAN_MIRROR=$mirror RL_DEBIAN_SRC=$tmp/no-fallback scripts/debian-source.sh trixie redis 8.0 "$tmp/dest" \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
check "unsigned archive without RL_DEBIAN_UNSIGNED: refused (exit 3), not $rc" \
    eval '[ "$rc" -eq 3 ] && grep -q "apt-get update of trixie deb-src failed" "$tmp/err" && no_dsc'
rc=0
RL_DEBIAN_MIRROR=http://deb.debian.org RL_DEBIAN_UNSIGNED=1 scripts/debian-source.sh trixie redis 8.0 "$tmp/dest" \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
check "RL_DEBIAN_UNSIGNED=1 with a mirror not on 127.0.0.1: refused (exit 2), not $rc" \
    eval '[ "$rc" -eq 2 ] && grep -q "only for a test archive on http://127.0.0.1" "$tmp/err"'

check_summary
