#!/usr/bin/env bash
# Fetch redismodule.h, the Redis module API header, from Debian's `redis` source package, for exactly the
# redis-server version installed on this machine. The header is never committed: it belongs to the Redis we
# build against. apt reads a temporary source list of its own (deb-src lines, own list and cache dirs), so
# the machine's apt configuration is left untouched.
#
# Usage: scripts/fetch-redismodule-h.sh OUTPUT_PATH
set -euo pipefail
out=${1:?usage: $0 OUTPUT_PATH}
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

server_version=$(dpkg-query -W -f='${Version}' redis-server 2>/dev/null || true)
if [ -z "$server_version" ]; then
    echo "fetch-redismodule-h: redis-server is not installed (run 'make deps')" >&2
    exit 1
fi
upstream=${server_version#*:}      # drop the epoch: 5:7.0.15-1~deb12u10 -> 7.0.15-1~deb12u10
upstream=${upstream%%-*}           # drop the Debian revision -> 7.0.15

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/parts" "$work/src"

# Same archive and suites as the machine's binary sources, as deb-src.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
cat > "$work/sources.list" <<LIST
deb-src http://deb.debian.org/debian ${codename} main
deb-src http://deb.debian.org/debian ${codename}-updates main
deb-src http://deb.debian.org/debian-security ${codename}-security main
LIST

apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/parts"
          -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
          -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
apt-get "${apt_opts[@]}" -qq update >&2

# Prefer the exact Debian version of the installed server; any source of the same upstream version will do.
cd "$work/src"
if ! apt-get "${apt_opts[@]}" -qq --download-only source "redis=${server_version}" >&2 2>/dev/null; then
    candidates=$(apt-cache "${apt_opts[@]}" showsrc redis | awk '/^Version:/ {print $2}')
    picked=""
    for v in $candidates; do
        u=${v#*:}; u=${u%%-*}
        if [ "$u" = "$upstream" ]; then picked=$v; break; fi
    done
    if [ -z "$picked" ]; then
        echo "fetch-redismodule-h: no 'redis' source package of upstream version $upstream (found: $candidates)" >&2
        exit 1
    fi
    apt-get "${apt_opts[@]}" -qq --download-only source "redis=${picked}" >&2
fi

orig=$(ls redis_"$upstream".orig.tar.* 2>/dev/null | head -n 1)
[ -n "$orig" ] || { echo "fetch-redismodule-h: no orig tarball downloaded" >&2; exit 1; }
member=$(tar -tf "$orig" | grep -E '^[^/]+/src/redismodule\.h$' | head -n 1)
[ -n "$member" ] || { echo "fetch-redismodule-h: src/redismodule.h not found in $orig" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
tar -xOf "$orig" "$member" > "$out.tmp"
mv "$out.tmp" "$out"
echo "fetch-redismodule-h: $out from redis $upstream (server $server_version)" >&2
