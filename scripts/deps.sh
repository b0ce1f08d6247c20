#!/usr/bin/env bash
# Install, with apt, whatever this machine lacks to build and run the module (`--runtime`, for `make run`)
# or, without the flag, also to run the tests and benchmarks (`make test`, `make bench`). Nothing is
# installed, and the network is not used, when everything is present. The Debian redis-server package
# would start and enable the system Redis service; we never want that (our scripts start their own
# servers), so the install runs under a policy-rc.d that forbids service starts, unless the machine
# already has one.
#
# Usage: scripts/deps.sh [--runtime | clients | demo | deb]
set -euo pipefail

# Building and running: the compiler, the servers and redis-cli; tar and xz-utils unpack the Redis source
# package that scripts/fetch-redismodule-h.sh takes the module API header from (apt itself fetches it).
runtime=(gcc make tar xz-utils redis-server redis-tools)
# Tests and benchmarks: libhiredis-dev for the test and benchmark clients; clang + libclang-rt-dev for
# sanitizer builds and libFuzzer; valgrind; docker-compose to validate docker-compose.yml; gnuplot-nox for
# the benchmark plot; dpkg-dev (dpkg-source) and g++ (Redis 8's fast_float) for the servers
# scripts/servers.sh builds from Debian source packages; python3 for the benchmark's row generator and the
# tests' fake archive and listeners, python3-redis to run docs/recipes.md's Python; a
# JDK and Guava (bookworm's: 17 and 31.1) to replay RL.SMOOTH's traces on the real RateLimiter (tests/guava/).
test=(libhiredis-dev clang libclang-rt-dev valgrind docker-compose gnuplot-nox dpkg-dev g++ python3 python3-redis
    openjdk-17-jdk-headless libguava-java)
# The client helpers' and the gateway's tests (mk/clients.mk: `scripts/deps.sh clients`), and `make demo`
# (mk/demo.mk: `scripts/deps.sh demo`). Node.js and npm come from Debian only when the machine has no npm.
# The Python package is built with Debian's setuptools and wheel (python3-build, offline), installed into a
# venv (python3-venv, python3-pip), checked by mypy, and tested under Flask, Starlette/FastAPI (served by
# uvicorn, called with httpx) and Django; lintian checks the module's .deb (`make deb`). python3-limits and
# python3-flask-limiter: the adapter that lets Flask-Limiter and `limits` use the module (docs/migrating.md).
clients=(nginx libnginx-mod-http-lua python3 python3-flask python3-redis python3-setuptools python3-wheel
    python3-build python3-venv python3-pip python3-mypy python3-starlette python3-fastapi python3-uvicorn
    python3-httpx python3-django lintian python3-limits python3-flask-limiter)
# `make deb` (mk/deb.mk): building the module, then dpkg-shlibdeps (dpkg-dev), strip (binutils), and
# lintian for `make deb-lint` and tests/check-deb.sh.
deb=("${runtime[@]}" dpkg-dev binutils lintian)

case "${1:-}" in
--runtime) packages=("${runtime[@]}") ;;
"") packages=("${runtime[@]}" "${test[@]}") ;;
clients) packages=("${clients[@]}") ;;
demo) packages=("${clients[@]}" wrk) ;;
deb) packages=("${deb[@]}") ;;
*) echo "usage: $0 [--runtime | clients | demo | deb]" >&2; exit 2 ;;
esac
case "${1:-}" in clients | demo) command -v npm >/dev/null || packages+=(nodejs npm) ;; esac
missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod +x "$policy"
    own_policy=1
fi
cleanup() { [ "$own_policy" -eq 0 ] || $sudo rm -f "$policy"; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
