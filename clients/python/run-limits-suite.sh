#!/usr/bin/env bash
# run-limits-suite.sh -- run by hand, not by make test: python `limits` 2.8's own strategy and storage
# tests against redis+ratelimit:// (limits_suite.py says how and which), on a throwaway redis-server
# with the module (scripts/lib/server.sh, real clock: those tests sleep through real windows, about 15 s).
# limits' tests are not in this repository: give a limits 2.8.0 source tree (Debian's python-limits
# source package, or the upstream 2.8.0 tag, holding tests/), or let scripts/debian-source.sh fetch
# Debian's into a temp dir, removed at exit.
#
#   clients/python/run-limits-suite.sh [LIMITS_SOURCE_DIR]
# Prints a line per test and "limits-suite: N passed, N failed (N not run)".
set -u
cd "$(dirname "$0")/../.." || exit 2
PYTHON=${RL_PYTHON:-/usr/bin/python3}
. scripts/lib/server.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/rl-limits-suite-XXXXXX")
trap 'server_stop; rm -rf "$work"' EXIT

source_dir=${1:-}
if [ -z "$source_dir" ]; then
    dsc=$(scripts/debian-source.sh bookworm python-limits 2.8.0 "$work") || {
        echo "run-limits-suite: no limits 2.8.0 source: give its directory as the argument" >&2; exit 2; }
    (cd "$work" && dpkg-source --no-check -x "$dsc" src >/dev/null) || exit 2
    source_dir=$work/src
fi
[ -f "$source_dir/tests/test_strategy.py" ] || { echo "run-limits-suite: $source_dir has no tests/test_strategy.py" >&2; exit 2; }

server_start || exit 2
PYTHONPATH=clients/python "$PYTHON" clients/python/limits_suite.py "$(realpath "$source_dir")" "$SERVER_PORT"
