# demo.mk -- the demo of issue 18 (README "Demo: two gateways, one Redis"):
#   make demo        one redis-server with the module; two nginx gateways, then two Flask and two Express
#                    processes, each pair under wrk load at once, sharing one budget; prints per server and
#                    in total requests, 200s, 429s, admitted per window vs the limit, p50/p99 of the limiter
#                    check, and plots build/demo/demo.png (about a minute; DEMO_SECONDS=20 of gateway load)
#   make demo-doc    the same, then the plot replaces docs/demo.png
# Debian packages: `scripts/deps.sh demo` (the clients' list and wrk).

.PHONY: deps-demo demo demo-doc

deps-demo: deps
	@scripts/deps.sh demo

demo: deps-demo
	@$(MAKE) --no-print-directory $(MODULE) $(NODE_MODULES_STAMP)
	@examples/demo/demo.sh

demo-doc: demo
	cp $(BUILD)/demo/demo.png docs/demo.png
