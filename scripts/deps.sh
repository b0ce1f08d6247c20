#!/usr/bin/env bash
# Install, with apt, whatever the build and the tests need and this machine lacks. Nothing is installed
# when everything is present. The Debian redis-server package would start and enable the system Redis
# service; we never want that (our scripts start their own servers), so the install runs under a
# policy-rc.d that forbids service starts, unless the machine already has one.
set -euo pipefail

# clang + libclang-rt-dev: sanitizer builds and libFuzzer; docker-compose: validating docker-compose.yml;
# gnuplot-nox: the benchmark plot.
packages=(gcc make tar xz-utils redis-server redis-tools libhiredis-dev clang libclang-rt-dev valgrind
          docker-compose gnuplot-nox)
# Extra lists, by name, so that `make run` stays light: `scripts/deps.sh clients` for the client helpers'
# and the gateway's tests (mk/clients.mk), `scripts/deps.sh demo` for `make demo` (mk/demo.mk). Node.js
# and npm come from Debian only when the machine has no npm of its own.
clients_packages=(nginx libnginx-mod-http-lua python3 python3-flask python3-redis)
case "${1:-}" in
clients) packages=("${clients_packages[@]}") ;;
demo) packages=("${clients_packages[@]}" wrk) ;;
esac
[ -z "${1:-}" ] || command -v npm >/dev/null || packages+=(nodejs npm)
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
