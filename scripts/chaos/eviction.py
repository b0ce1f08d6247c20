#!/usr/bin/python3
"""eviction.py -- what memory pressure does to exhausted limiters, measured per server and per
maxmemory-policy (docs/operations.md, "Eviction measured"; issue 31).

    scripts/chaos/eviction.py [--servers redis-7.0,redis-8.0,valkey-8.1] [--policies P,P...]
                              [--limiters 500] [--filler 60000] [--maxmemory 20mb] [--idle SECONDS]
                              [--retry-every K] [--out DIR]
    scripts/chaos/eviction.py --smoke       one server, one policy, 50 limiters: checks the script itself

The idea: an evicted limiter is a reset limit, silently. So, on a throwaway server with the module
(127.0.0.1, a free port, maxmemory 20mb, the policy under test), exhaust N limiters of each kind with a
window of an hour, then write 1,000-byte filler values (with or without a 24 h TTL) until the server
refuses one (OOM) or the filler is all written, and then ask, per kind:
  - how many of the N limiter keys still exist (EXISTS),
  - what the read-only form answers for each of the N users (denied, admitted, OOM, other error),
  - what the write form answers (same four counts): "admitted" is a user handed a fresh budget,
and read INFO stats's evicted_keys. Each user's three questions go in one MULTI, so that no eviction
caused by another user's admission falls between them. --idle waits that long between exhausting and
filling: LFU counters decay by one a minute (lfu-decay-time), so an exhausted limiter left alone for
minutes is, to allkeys-lfu, no hotter than a fresh filler value. --retry-every K has every throttled user call its limiter once more
after each K filler values (clients that keep retrying: each retry is a denial that touches the key,
unless the key is gone and the retry is admitted); "admitted again" then counts the users admitted at
least once, during the filler or after it. The table is printed as markdown and written to DIR/eviction.md
(default build/chaos/). Every server is stopped (SHUTDOWN NOSAVE, then killed) whatever happens.

Kinds: RL.TOKEN, RL.LEAKY (NODELAY), RL.WINDOW (FIXED), RL.SLIDINGLOG, RL.SMOOTH (MAXWAIT 0), RL.ACQUIRE
(one lease held: "concurrency") and RL.CHECK under a policy of one TOKEN limit. Each is exhausted by one
admitted call (limit 1), so a later call is denied for an hour unless the key is gone.

Servers: redis-7.0 is redis-server from PATH; the others come from scripts/servers.sh bindir NAME (build
them with make servers). RL_MODULE names another build of the module (default build/ratelimit.so).
Uses Debian's python3 and python3-redis (scripts/deps.sh installs them).
"""
import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOUR_MS = 3600000
DAY_S = 86400

# (kind, key prefix, write form, read-only form): each form is the argument list after the key, and
# limit 1 with an hour's window, so one admitted call exhausts the limiter.
KINDS = [
    ("token", "RL.TOKEN", ["1", "1", str(HOUR_MS)], "RL.TOKEN_RO"),
    ("leaky", "RL.LEAKY", ["1", "1", str(HOUR_MS), "NODELAY"], "RL.LEAKY_RO"),
    ("window", "RL.WINDOW", ["1", str(HOUR_MS), "FIXED"], "RL.WINDOW_RO"),
    ("slidinglog", "RL.SLIDINGLOG", ["1", str(HOUR_MS)], "RL.SLIDINGLOG_RO"),
    # A rate of one permit an hour, no stored burst, and no waiting: the second call is denied.
    ("smooth", "RL.SMOOTH", ["0.000277", "MAXBURST", "0", "MAXWAIT", "0"], "RL.SMOOTH_RO"),
    ("concurrency", "RL.ACQUIRE", ["1", str(HOUR_MS)], "RL.ACQUIRE_RO"),
    ("policy", "RL.CHECK", None, "RL.CHECK_RO"),
]
POLICY_NAME = "chaos"

# (id for --policies, label, maxmemory-policy, filler TTL in seconds or None)
POLICIES = [
    ("noeviction", "noeviction", "noeviction", None),
    ("allkeys-lru", "allkeys-lru", "allkeys-lru", None),
    ("allkeys-lfu", "allkeys-lfu", "allkeys-lfu", None),
    ("volatile-ttl", "volatile-ttl, filler without TTL", "volatile-ttl", None),
    ("volatile-ttl-24h", "volatile-ttl, filler with a 24 h TTL", "volatile-ttl", DAY_S),
    ("volatile-lru", "volatile-lru, filler without TTL", "volatile-lru", None),
]
SERVERS = ["redis-7.0", "redis-8.0", "valkey-8.1"]


def server_binary(name):
    """redis-7.0 is the system's server; the newer ones are built under build/servers/."""
    if name == "redis-7.0":
        return "redis-server"
    bindir = subprocess.run([os.path.join(ROOT, "scripts/servers.sh"), "bindir", name], check=True,
                            capture_output=True, text=True).stdout.strip()
    path = os.path.join(bindir, "redis-server")
    if not os.access(path, os.X_OK):
        sys.exit(f"eviction.py: {path} is missing (run make servers)")
    return path


def free_port():
    """A port nothing listens on (the kernel's pick); the server may still lose it to another process,
    and then start_server tries again."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One throwaway redis-server with the module, on 127.0.0.1; stop() always leaves nothing running."""

    def __init__(self, binary, module, args):
        self.dir = tempfile.mkdtemp(prefix="rl-chaos-")
        self.proc = None
        for _ in range(10):
            self.port = free_port()
            log = os.path.join(self.dir, "redis.log")
            self.proc = subprocess.Popen([binary, "--bind", "127.0.0.1", "--port", str(self.port),
                                          "--dir", self.dir, "--save", "", "--appendonly", "no",
                                          "--logfile", log, "--loadmodule", module] + args)
            if self._wait_up():
                return
            self._reap()
        self.stop()
        raise RuntimeError(f"could not start {binary}")

    def _wait_up(self):
        for _ in range(100):
            if self.proc.poll() is not None:
                return False
            try:
                r = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)
                if int(r.info("server")["process_id"]) == self.proc.pid:
                    return True
            except (redis.ConnectionError, redis.TimeoutError):
                pass
            time.sleep(0.1)
        return False

    def _reap(self):
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def client(self):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=60)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5).shutdown(nosave=True)
            except redis.RedisError:
                pass  # SHUTDOWN closes the connection: the usual way it "fails"
            self._reap()
        subprocess.run(["rm", "-rf", self.dir], check=False)

    def stopped(self):
        """The process has ended and nothing answers on its port."""
        if self.proc.poll() is None:
            return False
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return False
        except OSError:
            return True


def call_args(kind, i):
    name, command, args, ro = kind
    key = f"{name}:{i}"
    if command == "RL.CHECK":
        return ["RL.CHECK", POLICY_NAME, key], ["RL.CHECK_RO", POLICY_NAME, key], key
    return [command, key] + args, [ro, key] + args, key


def run_pipeline(r, commands):
    """Every reply, errors included, in order (in batches: a pipeline of 60,000 is memory on both ends)."""
    out = []
    for start in range(0, len(commands), 1000):
        p = r.pipeline(transaction=False)
        for c in commands[start:start + 1000]:
            p.execute_command(*c)
        out.extend(p.execute(raise_on_error=False))
    return out


def classify(reply):
    """One reply of a limiter command: admitted, denied, oom or error."""
    if isinstance(reply, redis.ResponseError):
        return "oom" if str(reply).startswith("OOM") or "maxmemory" in str(reply) else "error"
    if isinstance(reply, Exception):
        return "error"
    return "admitted" if reply[0] == 1 else "denied"


def count(replies):
    c = {"admitted": 0, "denied": 0, "oom": 0, "error": 0}
    for reply in replies:
        c[classify(reply)] += 1
    return c


def exhaust(r, n):
    """Each limiter admitted once, then checked denied: the starting point must be what it says."""
    r.execute_command("RL.POLICY", "SET", POLICY_NAME, "LIMIT", "l", "TOKEN", "1", "1", str(HOUR_MS))
    for kind in KINDS:
        writes = [call_args(kind, i)[0] for i in range(n)]
        first, second = count(run_pipeline(r, writes)), count(run_pipeline(r, writes))
        if first["admitted"] != n or second["denied"] != n:
            raise RuntimeError(f"{kind[0]}: exhausting gave {first}, then {second}")


def ask_user(r, call):
    """One user's final look at its limiter: EXISTS, the read-only form, then the write form, in one
    MULTI. A write that admits may push memory over the limit and evict another user's key, so an EXISTS
    sent apart from the write could count a key that is gone by the time its user asks; inside MULTI
    nothing is evicted between the three. A server past maxmemory that cannot evict (noeviction, or a
    volatile policy with no key with a TTL left) refuses every command queued in a MULTI, and the EXEC
    then aborts with nothing run: the three are then asked one by one, as a client would, which is exact
    there too, since such a server evicts nothing between them. Returns (exists, read-only reply, write
    reply)."""
    write, ro, key = call
    for transaction in (True, False):
        p = r.pipeline(transaction=transaction)
        p.execute_command("EXISTS", key)
        p.execute_command(*ro)
        p.execute_command(*write)
        try:
            exists, ro_reply, write_reply = p.execute(raise_on_error=False)
        except redis.ResponseError as e:
            if transaction and ("EXECABORT" in str(e) or "OOM" in str(e)):  # redis-py names the queued one
                continue
            raise
        return int(exists), ro_reply, write_reply


def retry_all(r, n, admitted):
    """Every throttled user calls its limiter's write form once more (a denial, unless its key is gone):
    adds to `admitted` (kind -> set of users) those the server admitted."""
    for kind in KINDS:
        for i, reply in enumerate(run_pipeline(r, [call_args(kind, i)[0] for i in range(n)])):
            if classify(reply) == "admitted":
                admitted[kind[0]].add(i)


def fill(r, total, ttl, n, retry_every, admitted):
    """1,000-byte values until the first OOM or `total` written; with retry_every, every user retries
    after each retry_every values. Returns (written, refused)."""
    value = b"x" * 1000
    written = 0
    while written < total:
        p = r.pipeline(transaction=False)
        batch = min(500, total - written)
        for i in range(written, written + batch):
            if ttl:
                p.set(f"filler:{i}", value, ex=ttl)
            else:
                p.set(f"filler:{i}", value)
        replies = p.execute(raise_on_error=False)
        ok = sum(1 for x in replies if not isinstance(x, Exception))
        if retry_every and (written + ok) // retry_every > written // retry_every:
            retry_all(r, n, admitted)
        written += ok
        if ok < batch:
            return written, True
    return written, False


def measure(binary, module, policy, filler_ttl, n, filler, maxmemory, idle=0, retry_every=0):
    """One run on a fresh server: a dict of what happened, and whether the server was stopped."""
    server = Server(binary, module, ["--maxmemory", maxmemory, "--maxmemory-policy", policy])
    try:
        r = server.client()
        exhaust(r, n)
        time.sleep(idle)
        admitted = {kind[0]: set() for kind in KINDS}
        written, refused = fill(r, filler, filler_ttl, n, retry_every, admitted)
        evicted = int(r.info("stats")["evicted_keys"])
        kinds = {}
        for kind in KINDS:
            asked = [ask_user(r, call_args(kind, i)) for i in range(n)]
            admitted[kind[0]].update(i for i, a in enumerate(asked) if classify(a[2]) == "admitted")
            kinds[kind[0]] = {"survived": sum(a[0] for a in asked), "ro": count(a[1] for a in asked),
                              "write": count(a[2] for a in asked), "again": len(admitted[kind[0]]),
                              "admitted_though_kept": sum(1 for a in asked
                                                          if a[0] and classify(a[2]) == "admitted")}
        filler_left = int(r.dbsize()) - sum(k["survived"] for k in kinds.values())
        result = {"written": written, "refused": refused, "evicted": evicted, "kinds": kinds,
                  "filler_left": filler_left, "used_memory": int(r.info("memory")["used_memory"])}
    finally:
        server.stop()
    result["stopped"] = server.stopped()
    return result


def span(values):
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def table_rows(server, label, res, n):
    """One markdown row per run: ranges over the kinds, then per kind in a detail line."""
    ks = res["kinds"].values()
    fill = f"{res['written']:,}" + (" then OOM" if res["refused"] else "")
    return (f"| {server} | {label} | {fill} | {res['evicted']:,} | {span([k['survived'] for k in ks])} | "
            f"{span([k['again'] for k in ks])} | {span([k['write']['oom'] for k in ks])} | "
            f"{span([k['ro']['oom'] for k in ks])} |")


def detail(res):
    return ", ".join(f"{name} {k['survived']}/{k['again']}/{k['write']['oom']}"
                     for name, k in res["kinds"].items())


HEADER = ("| server | maxmemory-policy | filler written | evicted_keys | limiter keys left (of N per kind) | "
          "users admitted again | write forms: OOM | `_RO`: OOM |\n|---|---|---|---|---|---|---|---|")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--servers", default=",".join(SERVERS))
    ap.add_argument("--policies", default=",".join(p[0] for p in POLICIES),
                    help="ids of the runs, comma-separated: " + ", ".join(p[0] for p in POLICIES))
    ap.add_argument("--limiters", type=int, default=500)
    ap.add_argument("--filler", type=int, default=60000)
    ap.add_argument("--maxmemory", default="20mb")
    ap.add_argument("--idle", type=int, default=0, help="seconds between exhausting and filling")
    ap.add_argument("--retry-every", type=int, default=0,
                    help="every throttled user retries once after each this many filler values")
    ap.add_argument("--out", default=os.path.join(ROOT, "build/chaos"))
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    module = os.path.realpath(os.environ.get("RL_MODULE", os.path.join(ROOT, "build/ratelimit.so")))
    if a.smoke:
        return smoke(module)
    runs = {p[0]: p for p in POLICIES}
    for wanted in a.policies.split(","):
        if wanted not in runs:
            sys.exit(f"eviction.py: --policies: no run named {wanted!r} (runs: {', '.join(runs)})")
    retries = f"every {a.retry_every:,} filler values" if a.retry_every else "never"
    lines = [f"N = {a.limiters} limiters per kind ({', '.join(k[0] for k in KINDS)}), maxmemory {a.maxmemory}, "
             f"up to {a.filler:,} filler values of 1,000 bytes, {a.idle} s idle before the filler, "
             f"throttled users retrying {retries}; module {os.path.basename(module)}", "", HEADER]
    details = ["", "Per kind (keys left / admitted again / write forms answering OOM):", ""]
    print("\n".join(lines), flush=True)
    for server in a.servers.split(","):
        binary = server_binary(server)
        for run in a.policies.split(","):
            _, label, policy, ttl = runs[run]
            res = measure(binary, module, policy, ttl, a.limiters, a.filler, a.maxmemory, a.idle, a.retry_every)
            row = table_rows(server, label, res, a.limiters)
            print(row, flush=True)
            lines.append(row)
            details.append(f"- {server}, {label}: {detail(res)}")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "eviction.md"), "w") as f:
        f.write("\n".join(lines + details) + "\n")
    print("\n".join(details))
    print(f"eviction.py: written to {os.path.join(a.out, 'eviction.md')}")
    return 0


def smoke(module):
    """One server, one policy, 50 limiters, a small maxmemory: the script runs and its counts add up."""
    n, passed, failed = 50, 0, 0

    def check(what, ok):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"chaos-smoke: FAILED: {what}", file=sys.stderr)

    try:
        res = measure(server_binary("redis-7.0"), module, "allkeys-lru", None, n, 20000, "4mb")
    except Exception as e:  # a run that cannot be made is a failure, named
        check(f"the run: {e}", False)
        print(f"chaos-smoke: {passed} passed, {failed} failed")
        return 1
    check("every kind measured", sorted(res["kinds"]) == sorted(k[0] for k in KINDS))
    for name, k in res["kinds"].items():
        check(f"{name}: keys left within 0..{n}", 0 <= k["survived"] <= n)
        for form in ("ro", "write"):
            check(f"{name}: the {form} form's answers add up to {n}: {k[form]}", sum(k[form].values()) == n)
            check(f"{name}: the {form} form answers no other error: {k[form]}", k[form]["error"] == 0)
        # A limiter whose key survived is still exhausted: its user is denied, not admitted (per user, EXISTS
        # and the call in one MULTI, so an eviction between them cannot make this fail).
        check(f"{name}: admitted again only where the key was lost ({k['admitted_though_kept']} kept and admitted)",
              k["admitted_though_kept"] == 0)
    check("the filler filled memory: allkeys-lru evicted keys", res["evicted"] > 0 and not res["refused"])
    # A server that can still evict lets every command in, and the module refuses no write there either.
    check("no write form answered OOM on a server that could evict",
          all(k["write"]["oom"] == 0 for k in res["kinds"].values()))
    check("the server is stopped and its port closed", res["stopped"])
    print(f"chaos-smoke: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
