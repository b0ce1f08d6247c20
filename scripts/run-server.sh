#!/usr/bin/env bash
# Start redis-server in the foreground with the module, on 127.0.0.1:6379 (PORT overrides), no
# persistence files left behind in the tree. Extra arguments go to redis-server.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${PORT:-6379}
dir=$(mktemp -d)
echo "redis-ratelimit: redis-server on 127.0.0.1:$port with $(pwd)/build/ratelimit.so (Ctrl-C stops it)"
exec redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --save "" --appendonly no \
    --loadmodule "$(pwd)/build/ratelimit.so" "$@"
