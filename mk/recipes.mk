# recipes.mk -- docs/recipes.md stays true: tests/check-recipes.sh runs each recipe's redis-cli session
# (comparing every reply) and its Python block against a real server in `make test`, in both orders on one
# server (Debian's python3-redis, installed by scripts/deps.sh).
TEST_PROGRAMS += tests/check-recipes.sh
