#!/usr/bin/env bash
# Entry point of the demo containers (docker-compose.yml, profile "demo"): renders one nginx config from
# this directory's templates (gateway.sh's gateway_render) into /tmp/nginx-ROLE-PORT and runs nginx in
# the foreground on 127.0.0.1:PORT.
#
#   container-start.sh upstream PORT
#   container-start.sh gateway PORT      with REDIS_PORT, UPSTREAM_PORT, LIMIT, WINDOW_MS from the environment
set -euo pipefail
role=$1 port=$2
here=$(dirname "$(realpath "$0")")
. "$here/gateway.sh"
prefix=/tmp/nginx-$role-$port
mkdir -p "$prefix/tmp"
case "$role" in
upstream)
    gateway_render "$here/nginx-upstream.conf.in" "$prefix/nginx.conf" "PREFIX=$prefix" "PORT=$port" \
        "ERROR_LOG=/dev/stderr"
    ;;
gateway)
    gateway_render "$here/nginx-gateway.conf.in" "$prefix/nginx.conf" "PREFIX=$prefix" "PORT=$port" \
        "REDIS_PORT=$REDIS_PORT" "UPSTREAM_PORT=$UPSTREAM_PORT" "LIMIT=$LIMIT" "WINDOW_MS=$WINDOW_MS" \
        "ACCESS_LOG=/dev/stdout" "ERROR_LOG=/dev/stderr"
    ;;
*) echo "container-start.sh: role must be upstream or gateway" >&2; exit 2 ;;
esac
exec nginx -p "$prefix" -c "$prefix/nginx.conf" -e /dev/stderr
