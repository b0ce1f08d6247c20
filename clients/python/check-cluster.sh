#!/usr/bin/env bash
# check-cluster.sh -- the Python package, sync (redis.RedisCluster) and asyncio (redis.asyncio.RedisCluster),
# against a real Redis Cluster: scripts/cluster.sh starts 3 primaries + 3 replicas on free ports of
# 127.0.0.1, each with the module; tests/cluster.py runs the calls (limits on keys of every shard, RL.ALL
# with hash tags, leases, policies set on every primary and checked on every shard); the cluster is
# stopped and its data removed at exit, whatever happens. Prints "python-cluster: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh
PYTHON=${RL_PYTHON:-/usr/bin/python3}
base=""
export RL_CLUSTER_DIR
RL_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rl-pycluster-XXXXXX")
trap '[ -z "$base" ] || scripts/cluster.sh stop "$base" >/dev/null 2>&1; rm -rf "$RL_CLUSTER_DIR"' EXIT

for attempt in 1 2 3; do
    base=$(server_pick_cluster_base) || break
    scripts/cluster.sh start "$base" >"$RL_CLUSTER_DIR.log" 2>&1 && break
    scripts/cluster.sh stop "$base" >/dev/null 2>&1
    base=""
done
rm -f "$RL_CLUSTER_DIR.log"
if [ -z "$base" ]; then
    echo "FAIL python-cluster: the cluster did not start (3 attempts)" >&2
    echo "python-cluster: 0 passed, 1 failed"
    exit 1
fi
RL_CLUSTER_PORT=$base "$PYTHON" clients/python/tests/cluster.py
