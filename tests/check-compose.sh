#!/usr/bin/env bash
# Checks docker-compose.yml without a Docker engine: `docker-compose config` must accept it (default and
# cluster, redis8 and valkey8 profiles), every redis-server (or valkey-server) in it must load the module from the path `make run` uses, mounted
# from ./build/ratelimit.so, with the same module arguments, and the cluster profile must be 6 cluster
# nodes that the one-shot service joins with --cluster-replicas 1, and the demo profile must be two
# gateways and their upstream on the redis service's port. What `make run` uses is read from
# scripts/run-server.sh (and scripts/cluster.sh must agree with it too), so nothing is written down twice.
# Prints "compose: N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 2

# shellcheck source=tests/lib/check.sh
CHECK_SUITE=compose
. tests/lib/check.sh

if ! command -v docker-compose >/dev/null; then
    check_abort "docker-compose is not installed (Debian package docker-compose; make deps)"
fi

# --- What `make run` loads: the --loadmodule line of scripts/run-server.sh. ---------------------------
# e.g.   --loadmodule "$(pwd)/build/ratelimit.so" "$@"   ->  path build/ratelimit.so, no arguments.
# The module path is relative to the repository ("$(pwd)/" is the repository root); the arguments are the
# words after it, up to the pass-through "$@".
loadmodule_words() { # file -> the words after --loadmodule, one per line, quotes removed
    grep -E -- '--loadmodule' "$1" | head -n 1 | sed -E 's/.*--loadmodule[[:space:]]+//' |
        tr -s ' \t' '\n' | sed -E 's/^"(.*)"$/\1/' | grep -v -x -- '\\' | grep -v -x -- '' |
        sed -n '/^\$@$/q;p'
}
mapfile -t run_words < <(loadmodule_words scripts/run-server.sh)
run_path=${run_words[0]:-}
run_path=${run_path#\$(pwd)/}
run_args=("${run_words[@]:1}")
check "scripts/run-server.sh has a --loadmodule with a repository-relative path (got '$run_path')" \
    test -n "$run_path" -a "${run_path:0:1}" != "/" -a "${run_path:0:1}" != "$"

# scripts/cluster.sh must start its nodes with the same module and arguments.
mapfile -t cl_words < <(loadmodule_words scripts/cluster.sh)
cl_path=${cl_words[0]:-}
check "scripts/cluster.sh loads ${cl_path:-nothing}, scripts/run-server.sh \$(pwd)/$run_path" \
    test "$cl_path" = "\$(pwd)/$run_path"
check "scripts/cluster.sh module arguments '${cl_words[*]:1}' = run-server.sh's '${run_args[*]}'" \
    test "${cl_words[*]:1}" = "${run_args[*]}"

# --- docker-compose config accepts the file. ------------------------------------------------------------
check "docker-compose config -q" docker-compose config -q
if docker-compose --help 2>&1 | grep -q -- '--profile'; then
    check "docker-compose --profile cluster config -q" docker-compose --profile cluster config -q
    check "docker-compose --profile redis8 --profile valkey8 config -q" \
        docker-compose --profile redis8 --profile valkey8 config -q
    config=$(docker-compose --profile cluster --profile redis8 --profile valkey8 config 2>/dev/null)
else
    echo "compose: this docker-compose has no --profile; the cluster profile is checked from the plain config" >&2
    config=$(docker-compose config 2>/dev/null)
fi

# The resolved config (anchors expanded, paths absolute) as lines: "cmd SERVICE ITEM", "vol SERVICE SOURCE
# TARGET", "profile SERVICE NAME", "entry SERVICE ITEM".
flat=$(awk '
    function item(line,    v) { # the scalar of a "- x" or "key: x" line, YAML quotes removed
        v = line; sub(/^ *- /, "", v); sub(/^ *[a-z_]+: /, "", v)
        if ((substr(v, 1, 1) == Q || substr(v, 1, 1) == "\"") && substr(v, length(v)) == substr(v, 1, 1))
            v = substr(v, 2, length(v) - 2)
        return v
    }
    BEGIN { Q = sprintf("%c", 39) }
    /^services:/ { in_s = 1; next }
    /^[^ ]/ { in_s = 0 }
    !in_s { next }
    /^  [^ ].*:$/ { svc = $1; sub(/:$/, "", svc); key = ""; next }
    /^    [a-z_]+:/ { key = $1; sub(/:.*/, "", key) }
    key == "command" && /^    - / { print "cmd", svc, item($0) }
    key == "entrypoint" && /^    - / { print "entry", svc, item($0) }
    key == "profiles" && /^    - / { print "profile", svc, item($0) }
    key == "volumes" && /^    (- |  )source: / { src = item($0) }
    key == "volumes" && /^    (- |  )target: / { print "vol", svc, src, item($0); src = "" }
' <<<"$config")

repo=$(pwd)
mapfile -t servers < <(awk '$1 == "cmd" && !seen[$2]++ && ($3 == "redis-server" || $3 == "valkey-server") { print $2 }' <<<"$flat")
check "compose has redis-server services (found ${#servers[@]})" test "${#servers[@]}" -ge 1

# Each redis-server: --loadmodule TARGET ARGS..., where TARGET is a bind mount of ./$run_path that ends in
# /$run_path (the same relative path), and ARGS (up to the next --option) are run-server.sh's.
for s in "${servers[@]}"; do
    mapfile -t words < <(awk -v s="$s" '$1 == "cmd" && $2 == s { $1 = ""; $2 = ""; sub(/^  /, ""); print }' <<<"$flat")
    path="" args=() n=0
    for ((i = 0; i < ${#words[@]}; i++)); do
        if [ "${words[i]}" = "--loadmodule" ]; then
            n=$((n + 1))
            path=${words[i + 1]:-}
            for ((j = i + 2; j < ${#words[@]}; j++)); do
                [[ "${words[j]}" == --* ]] && break
                args+=("${words[j]}")
            done
        fi
    done
    check "$s loads the module once (found $n --loadmodule)" test "$n" -eq 1
    check "$s: module path $path ends with /$run_path" test "${path%/"$run_path"}" != "$path"
    mount=$(awk -v s="$s" -v t="$path" '$1 == "vol" && $2 == s && $4 == t { print $3 }' <<<"$flat")
    check "$s: $path is mounted from ./$run_path (mounted from '${mount:-nothing}')" \
        test "$mount" = "$repo/$run_path"
    check "$s: module arguments '${args[*]}' = run-server.sh's '${run_args[*]}'" test "${args[*]}" = "${run_args[*]}"
done

# --- The cluster profile: 6 cluster nodes on distinct ports, joined by a one-shot --cluster create. -----
mapfile -t nodes < <(awk '$1 == "profile" && $3 == "cluster" { print $2 }' <<<"$flat" |
    while read -r s; do grep -q "^cmd $s --cluster-enabled$" <<<"$flat" && echo "$s"; done)
check "cluster profile has 6 cluster-enabled nodes (found ${#nodes[@]})" test "${#nodes[@]}" -eq 6
node_ports=()
for s in "${nodes[@]}"; do
    node_ports+=("$(awk -v s="$s" '$1 == "cmd" && $2 == s { if (prev == "--port") print $3; prev = $3 }' <<<"$flat")")
done
distinct=$(printf '%s\n' "${node_ports[@]}" | sort -u | grep -c .)
check "cluster nodes listen on 6 distinct ports (${node_ports[*]})" test "$distinct" -eq 6
check "the default profile's redis service is not in the cluster profile" \
    test -z "$(awk '$1 == "profile" && $2 == "redis"' <<<"$flat")"

create=$(grep -E -- '--cluster create' docker-compose.yml)
check "a one-shot service runs redis-cli --cluster create ... --cluster-replicas 1 --cluster-yes" \
    grep -q -- '--cluster-replicas 1 --cluster-yes' <<<"$(grep -A2 -- '--cluster create' docker-compose.yml)"
missing=()
for p in "${node_ports[@]}"; do
    grep -q -- "127.0.0.1:$p" <<<"$(grep -A1 -- '--cluster create' docker-compose.yml)" || missing+=("$p")
done
check "--cluster create names every node port (missing: ${missing[*]:-none})" test -n "$create" -a ${#missing[@]} -eq 0

# --- The demo profile: an upstream and two gateways (examples/gateway/container-start.sh) on the redis
# service's published port, each gateway on its own port, proxying to the upstream. -------------------
if docker-compose --help 2>&1 | grep -q -- '--profile'; then
    check "docker-compose --profile demo config -q" docker-compose --profile demo config -q
    # One line per service started by container-start.sh: "SERVICE ROLE PORT REDIS_PORT UPSTREAM_PORT".
    mapfile -t demo < <(docker-compose --profile demo config 2>/dev/null | awk '
        function flush() { if (role != "") print svc, role, port, env["REDIS_PORT"], env["UPSTREAM_PORT"] }
        /^  [^ ].*:$/ { flush(); svc = $1; sub(/:$/, "", svc); role = ""; delete env; after = 0; next }
        /^[^ ]/ { flush(); role = "" }
        /^    - .*\/container-start\.sh$/ { after = 1; next }
        after == 1 { role = $2; after = 2; next }
        after == 2 { port = $2; gsub(/\047/, "", port); after = 0; next }
        /^      [A-Z_]+: / { k = $1; sub(/:$/, "", k); v = $2; gsub(/\047/, "", v); env[k] = v }
        END { flush() }')
    redis_port=$(docker-compose --profile demo config 2>/dev/null |
        sed -n '/^  redis:$/,/^  [^ ]/s/^    - 127\.0\.0\.1:\([0-9]*\):.*/\1/p' | head -n 1)
    ups=$(printf '%s\n' "${demo[@]}" | awk '$2 == "upstream" { print $3 }')
    gws=$(printf '%s\n' "${demo[@]}" | awk '$2 == "gateway"')
    check "demo profile: one upstream and two gateways (found: ${demo[*]:-none})" \
        test "$(grep -c . <<<"$ups")" -eq 1 -a "$(grep -c . <<<"$gws")" -eq 2
    check "demo gateways listen on distinct ports" test "$(awk '{ print $3 }' <<<"$gws" | sort -u | grep -c .)" -eq 2
    check "demo gateways use the redis service's port ${redis_port:-none}" \
        test -n "$redis_port" -a -z "$(awk -v p="$redis_port" '$4 != p' <<<"$gws")"
    check "demo gateways proxy to the upstream's port ${ups:-none}" \
        test -n "$ups" -a -z "$(awk -v p="$ups" '$5 != p' <<<"$gws")"
fi

check_summary
