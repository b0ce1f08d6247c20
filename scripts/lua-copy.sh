#!/usr/bin/env bash
# The Lua mode's script has one copy, clients/lua/ratelimit.lua; each client package ships it inside its
# own directory (a wheel or an npm tarball holds only that), so this writes the two packages' copies from
# it. Their tests fail while a copy differs from it: edit clients/lua/ratelimit.lua, then run this.
set -eu
cd "$(dirname "$0")/.."
for copy in clients/python/redis_ratelimit/ratelimit.lua clients/node/lib/ratelimit.lua; do
    cp clients/lua/ratelimit.lua "$copy"
    echo "lua-copy: $copy"
done
