#!/usr/bin/env bash
# check-package.sh -- the Python distribution installs as its README says, offline, with nothing but
# Debian's packages (python3-venv, python3-pip, python3-setuptools, python3-wheel, python3-build,
# python3-redis), and works from outside the source tree against a real redis-server with the module:
#   1. a fresh venv (--system-site-packages: it sees python3-redis), `pip install --no-index
#      ./clients/python`, then from another directory: import redis_ratelimit, one call to the server;
#   2. `python3 -m build --no-isolation --sdist --wheel` into a temp dir: both artifacts carry
#      redis_ratelimit/py.typed, the Lua mode's ratelimit.lua and every module of the source tree (the sdist
#      also the build backend);
#      the wheel installed into a second venv and used the same way; the source tree is left as it was.
# pip never reaches an index (--no-index); the venvs, the artifacts and the server are removed at exit.
# Prints "python-package: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
python=/usr/bin/python3
. scripts/lib/server.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/rl-pypkg-XXXXXX")
trap 'server_stop; rm -rf "$work"' EXIT
CHECK_SUITE=python-package
# shellcheck source=tests/lib/check.sh
. tests/lib/check.sh

same() { [ "$1" = "$2" ] || { echo "  expected: $1" >&2; echo "  got:      $2" >&2; return 1; }; }
check_eq() { check "$1" same "$2" "$3"; }
# The source tree's files, caches aside: a build must add nothing there (no build/, no *.egg-info).
tree() { find clients/python -name __pycache__ -prune -o -print | sort; }

server_start || exit 2

# pip as on a fresh machine: no configuration file and no PIP_* variable (a find-links folder of wheels
# set up here would hide a missing build requirement).
while read -r name; do unset "$name"; done < <(env | sed -n 's/^\(PIP_[A-Z_]*\)=.*/\1/p')
export PIP_CONFIG_FILE=/dev/null

# use VENV KEY: import the package from a directory outside the source tree and make one call.
use() {
    (cd "$work" && "$1/bin/python" - "$SERVER_PORT" "$2" <<'PY'
import sys, redis, redis_ratelimit
from redis_ratelimit import Token, limit
assert "/clients/python/" not in redis_ratelimit.__file__, redis_ratelimit.__file__
res = limit(redis.Redis(host="127.0.0.1", port=int(sys.argv[1])), sys.argv[2], Token(10, 1, 1000))
print(redis_ratelimit.__file__.split("/site-packages/")[0] != redis_ratelimit.__file__, res.allowed, res.remaining)
PY
    )
}

tree_before=$(tree)

"$python" -m venv --system-site-packages "$work/venv" >"$work/venv.log" 2>&1
check "a venv is made with --system-site-packages" test -x "$work/venv/bin/pip"
"$work/venv/bin/pip" install --no-index ./clients/python >"$work/pip.log" 2>&1
check "pip install --no-index ./clients/python succeeds offline" grep -q "Successfully installed redis-ratelimit-1.5.0" "$work/pip.log"
check_eq "the installed package, imported from outside the tree, makes a call" "True True 9" "$(use "$work/venv" pkg:venv)"
installed=$("$work/venv/bin/python" -c 'import redis_ratelimit, os; print(os.path.dirname(redis_ratelimit.__file__))' 2>/dev/null)
check "the installed package has py.typed" test -f "$installed/py.typed"

"$python" -m build --no-isolation --sdist --wheel --outdir "$work/dist" clients/python >"$work/build.log" 2>&1
wheel=$(ls "$work"/dist/redis_ratelimit-1.5.0-py3-none-any.whl 2>/dev/null)
sdist=$(ls "$work"/dist/redis-ratelimit-1.5.0.tar.gz 2>/dev/null)
check "python3 -m build makes the wheel" test -n "$wheel"
check "python3 -m build makes the sdist" test -n "$sdist"
modules=$(cd clients/python && ls redis_ratelimit/*.py redis_ratelimit/*/*.py redis_ratelimit/py.typed redis_ratelimit/ratelimit.lua | sort)
in_wheel=$("$python" -c 'import sys, zipfile; print("\n".join(sorted(n for n in zipfile.ZipFile(sys.argv[1]).namelist() if n.startswith("redis_ratelimit/"))))' "$wheel" 2>/dev/null)
in_sdist=$(tar tzf "$sdist" 2>/dev/null | sed -n 's|^redis-ratelimit-1.5.0/||p' | grep '^redis_ratelimit/.' | grep -v '/$' | sort)   # files, not the folders' entries
check_eq "the wheel carries every module, py.typed and ratelimit.lua" "$modules" "$in_wheel"
check_eq "the sdist carries every module, py.typed and ratelimit.lua" "$modules" "$in_sdist"
check "the sdist carries the build backend" grep -qx "redis-ratelimit-1.5.0/build_backend/offline_setuptools.py" <(tar tzf "$sdist")
metadata=$("$python" -c 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("redis_ratelimit-1.5.0.dist-info/METADATA").decode())' "$wheel" 2>/dev/null)
check "the wheel's metadata requires redis>=4.3" grep -qx "Requires-Dist: redis (>=4.3)" <<<"$metadata"

"$python" -m venv --system-site-packages "$work/venv2" >>"$work/venv.log" 2>&1
"$work/venv2/bin/pip" install --no-index "$wheel" >"$work/pip2.log" 2>&1
check "pip install --no-index of the wheel succeeds" grep -q "Successfully installed redis-ratelimit-1.5.0" "$work/pip2.log"
check_eq "the wheel's package, imported from outside the tree, makes a call" "True True 9" "$(use "$work/venv2" pkg:wheel)"
check_eq "building left the source tree as it was" "$tree_before" "$(tree)"

for log in venv pip build pip2; do
    [ "$failed" -eq 0 ] || { echo "--- $log.log"; tail -20 "$work/$log.log"; }
done
check_summary
