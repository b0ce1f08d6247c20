# examples/gateway/gateway.sh -- sourced, not executed: start nginx instances (the gateways and their
# upstream) from this directory's templates, each with its own prefix under build/gateway/NAME (conf,
# logs, temp files), on a free 127.0.0.1 port, in the foreground as a child of the calling shell; stop
# them by pid. Used by the gateway test and `make demo`.
#
#   . examples/gateway/gateway.sh
#   trap gateway_stop_all EXIT
#   gateway_start up examples/gateway/nginx-upstream.conf.in || exit 1;  up=$GW_PORT
#   gateway_start gw1 examples/gateway/nginx-gateway.conf.in REDIS_PORT=6379 UPSTREAM_PORT=$up LIMIT=100 WINDOW_MS=1000
#   ...  $GW_PORT, $GW_PID, $GW_PREFIX (its access log: $GW_PREFIX/access.log)
#
# Environment: NGINX (default nginx), NGINX_MODULES (where Debian's ndk and lua modules are, default
# /usr/lib/nginx/modules; empty for an nginx with Lua built in, e.g. OpenResty), GATEWAY_DIR (default
# build/gateway, from the current directory: the project root).
# shellcheck shell=bash

NGINX=${NGINX:-nginx}
NGINX_MODULES=${NGINX_MODULES-/usr/lib/nginx/modules}
GATEWAY_DIR=${GATEWAY_DIR:-build/gateway}
GATEWAY_LUA_DIR=$(realpath "$(dirname "${BASH_SOURCE[0]}")/lua")
GW_PIDS=()
GW_PORT="" GW_PID="" GW_PREFIX=""

# gateway_render TEMPLATE OUT KEY=VALUE...: the template with every @KEY@ replaced.
gateway_render() {
    local template=$1 out=$2 kv args=()
    shift 2
    local modules=""
    [ -z "$NGINX_MODULES" ] || modules="load_module $NGINX_MODULES/ndk_http_module.so; load_module $NGINX_MODULES/ngx_http_lua_module.so;"
    for kv in "LOAD_MODULES=$modules" "LUA_DIR=$GATEWAY_LUA_DIR" "REDIS_HOST=127.0.0.1" "$@"; do
        args+=(-e "s|@${kv%%=*}@|${kv#*=}|g")
    done
    sed "${args[@]}" "$template" >"$out"
    if grep -v '^ *#' "$out" | grep -q '@[A-Z_]*@'; then
        echo "gateway.sh: $out: unfilled $(grep -o '@[A-Z_]*@' "$out" | sort -u | tr '\n' ' ')" >&2
        return 1
    fi
}

gateway_pick_port() {
    local port=$((20000 + RANDOM % 12000)) # below the usual ephemeral range (32768-)
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 1; fi
    echo "$port"
}

# Up when the master wrote its pid file (after it bound its port) and the port accepts connections.
gateway_wait_up() {
    local port=$1 _
    for _ in $(seq 100); do
        kill -0 "$GW_PID" 2>/dev/null || return 1
        if [ "$(cat "$GW_PREFIX/nginx.pid" 2>/dev/null)" = "$GW_PID" ] &&
            (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        sleep 0.05
    done
    return 1
}

# gateway_reap PID: graceful stop (QUIT: workers finish and flush their logs), SIGKILL after 5 s.
gateway_reap() {
    local pid=$1 _
    kill -QUIT "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# gateway_start NAME TEMPLATE KEY=VALUE...: sets GW_PORT, GW_PID, GW_PREFIX.
gateway_start() {
    local name=$1 template=$2 attempt port
    shift 2
    GW_PREFIX=$(realpath -m "$GATEWAY_DIR/$name")
    rm -rf "$GW_PREFIX"
    mkdir -p "$GW_PREFIX/tmp"
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        port=$(gateway_pick_port) || continue
        gateway_render "$template" "$GW_PREFIX/nginx.conf" "PREFIX=$GW_PREFIX" "PORT=$port" \
            "ACCESS_LOG=$GW_PREFIX/access.log" "ERROR_LOG=$GW_PREFIX/error.log" "$@" || return 1
        "$NGINX" -p "$GW_PREFIX" -c "$GW_PREFIX/nginx.conf" -e "$GW_PREFIX/error.log" &
        GW_PID=$!
        if gateway_wait_up "$port"; then
            GW_PORT=$port
            GW_PIDS+=("$GW_PID")
            return 0
        fi
        gateway_reap "$GW_PID"
    done
    echo "gateway.sh: could not start $name (after $attempt attempts); its error log:" >&2
    cat "$GW_PREFIX/error.log" >&2 2>/dev/null || true
    return 1
}

gateway_stop_all() {
    local pid
    for pid in "${GW_PIDS[@]}"; do gateway_reap "$pid"; done
    GW_PIDS=()
}
