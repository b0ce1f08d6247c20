#!/usr/bin/env bash
# Fetch redismodule.h, the Redis module API header, from Debian's `redis` source package, for exactly the
# redis-server version installed on this machine. The header is never committed: it belongs to the Redis we
# build against. scripts/debian-source.sh gets the package: apt with a source list and directories of its
# own (the machine's apt configuration is left untouched), else the checksummed copy in
# ../shared/debian-src/ when the archive no longer serves that revision; it fails clearly if neither works.
#
# Usage: scripts/fetch-redismodule-h.sh OUTPUT_PATH
set -euo pipefail
out=${1:?usage: $0 OUTPUT_PATH}
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
here=$(cd "$(dirname "$0")" && pwd)

server_version=$(dpkg-query -W -f='${Version}' redis-server 2>/dev/null || true)
if [ -z "$server_version" ]; then
    echo "fetch-redismodule-h: redis-server is not installed (run 'make deps')" >&2
    exit 1
fi
upstream=${server_version#*:}      # drop the epoch: 5:7.0.15-1~deb12u10 -> 7.0.15-1~deb12u10
upstream=${upstream%-*}            # drop the Debian revision -> 7.0.15

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The exact Debian version of the installed server if available; any source of the same upstream version
# will do. Same suite as the machine's binary sources.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
if ! "$here/debian-source.sh" "$codename" redis "$server_version" "$work" >/dev/null; then
    echo "fetch-redismodule-h: no 'redis' source package of version $server_version (see above)" >&2
    exit 1
fi

orig=$(ls "$work"/redis_"$upstream".orig.tar.* 2>/dev/null | head -n 1)
[ -n "$orig" ] || { echo "fetch-redismodule-h: no redis_$upstream.orig.tar.* in the source package" >&2; exit 1; }
member=$(tar -tf "$orig" | grep -E '^[^/]+/src/redismodule\.h$' | head -n 1)
[ -n "$member" ] || { echo "fetch-redismodule-h: src/redismodule.h not found in $orig" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
tar -xOf "$orig" "$member" > "$out.tmp"
mv "$out.tmp" "$out"
echo "fetch-redismodule-h: $out from redis $upstream (server $server_version)" >&2
