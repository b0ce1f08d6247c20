#!/usr/bin/python3
"""failover.py -- limiters across Redis Cluster failovers under load: a kill -9 of a primary and graceful
CLUSTER FAILOVERs, while several client processes call the module on every shard (issue 31;
docs/cluster.md, "Failover under load").

    scripts/chaos/failover.py [--runs 1] [--phase-ms 2000] [--clients 4] [--waiters 12] [--node-timeout 1000]

The server is REDIS_SERVER and REDIS_CLI (default redis-server and redis-cli from PATH), as everywhere in
the project; RL_MODULE names the module (default build/ratelimit.so). Prints a summary per run and
"chaos-failover: N passed, N failed" (make test runs it once per server).

A run: 3 primaries + 3 replicas on 127.0.0.1 (free ports; cluster-node-timeout 1000 ms, and
cluster-require-full-coverage no, so that a shard without a primary stops only its own slots), each node a
child of this script. Then, under load:
  1. `kill -9` of the primary of shard A; its replica is promoted by the cluster (automatic failover);
  2. the killed node is restarted empty (no persistence) and rejoins as the new primary's replica;
  3. CLUSTER FAILOVER (graceful) on the replica of shard B;
  4. CLUSTER FAILOVER on the restarted node of shard A: it takes its shard back;
with --phase-ms of load before, between and after the steps. The load, per shard (keys by hash tag):
  - clients (processes) calling RL.WINDOW FIXED (1 s and 10 s windows), RL.TOKEN (5, 1 per 100 ms) and
    RL.ACQUIRE (3 leases of 500 ms, never released) in a loop. Each key comes twice: "plain" (the command
    alone) and "strict" (the command and Redis's `WAIT 1 200` in one pipeline on the same connection:
    the strict recipe; a grant is acknowledged when WAIT answers 1);
  - waiters (threads, each its own connection): RL.TOKEN ... WAIT 1500 on a contended bucket, then
    `WAIT 1 200` after a grant.
Each client follows MOVED, and on a connection error, CLUSTERDOWN or TRYAGAIN records an error for the
key's shard, sleeps 20 ms and reloads the slot map from any node. Every grant is recorded with the
instants the call was sent and answered; the decision lies between them.

What must hold (each a check):
  - acknowledged grants never exceed a limit: per FIXED window, at most the limit; per token bucket, at
    most capacity + the refill over the span of any run of them; per lease key, at no instant more than
    the limit of acknowledged leases alive (surely alive: from its answer to its send + lease_ms). A grant
    acknowledged by the replica that is then promoted cannot be lost, so this holds across the kill too;
  - plain grants: a window over its limit only where a grant could be lost: a window of the killed shard
    that the kill falls in (its over-admission is reported: the grants the dead primary answered and had
    not replicated); never after a graceful failover, never on another shard;
  - errors only on the killed shard, and only from the kill until its replica serves plus 1.5 s (the
    clients' reload of the slot map); none on the other shards (graceful failovers: redirections only);
  - every waiter answered within its timeout plus 12 s (a reply, -UNBLOCKED when its node became a replica,
    or a closed connection when its node was killed), none left hanging;
  - the shards serve grants again after each failover; the cluster ends with 3 primaries, each with a
    synchronised replica holding byte-for-byte its keys (DUMP), and every node is stopped at the end.
"""
import argparse
import json
import multiprocessing
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import redis
from redis.crc import key_slot

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODES = 6
STRICT_WAIT = ["WAIT", "1", "200"]
# How long a client waits for an answer before calling it an error (limiter calls) or a hang (waiters, on
# top of their timeout): a graceful CLUSTER FAILOVER pauses the primary's writes until its replica has
# caught up and won the election, up to twice the manual failover's 5 s timeout (measured: 5.7 s once,
# when the election was slow), and a call held by that pause is answered after it, not lost.
PAUSE_S = 12

# The limiters every client calls, per shard: (name, command words after the key, kind, limit, param).
# kind "window": FIXED window of `param` ms; "token": capacity `limit`, one token per `param` ms;
# "lease": `limit` leases of `param` ms, never released; "ledger": leases of 10 minutes under a limit never
# reached, each with the client's own ID, so that the key's RL.LEASES at the end names every grant the
# shard still knows of: a grant missing there is a lost grant, exactly.
LIMITERS = [
    ("win1s", ["RL.WINDOW", None, "20", "1000", "FIXED"], "window", 20, 1000),
    ("win10s", ["RL.WINDOW", None, "100", "10000", "FIXED"], "window", 100, 10000),
    ("tok", ["RL.TOKEN", None, "5", "1", "100"], "token", 5, 100),
    ("lease", ["RL.ACQUIRE", None, "3", "500"], "lease", 3, 500),
    ("ids", ["RL.ACQUIRE", None, "10000", "600000"], "ledger", 10000, 600000),
]
WAITER_CMD = ("wtok", ["RL.TOKEN", None, "3", "1", "100", "WAIT", "1500"], "token", 3, 100)


def now_ms():
    return time.time() * 1000.0


# --- the cluster ------------------------------------------------------------------------------------------

def port_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def pick_base():
    """A base port whose 6 ports and 6 bus ports (port + 10000) are free."""
    for _ in range(100):
        base = random.randint(20000, 22700)
        if all(port_free(p) and port_free(p + 10000) for p in range(base, base + NODES)):
            return base
    raise RuntimeError("no free ports for a cluster")


class Cluster:
    """Six redis-server children with the module; stop() always leaves none running."""

    def __init__(self, server, cli, module, node_timeout):
        self.server, self.cli, self.module, self.node_timeout = server, cli, module, node_timeout
        self.dir = tempfile.mkdtemp(prefix="rl-chaos-failover-")
        self.procs = {}
        self.base = pick_base()
        self.ports = list(range(self.base, self.base + NODES))

    def start_node(self, port):
        d = os.path.join(self.dir, str(port))
        os.makedirs(d, exist_ok=True)
        log = open(os.path.join(d, "redis.log"), "ab")
        self.procs[port] = subprocess.Popen(
            [self.server, "--bind", "127.0.0.1", "--port", str(port), "--dir", d, "--save", "",
             "--appendonly", "no", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
             "--cluster-node-timeout", str(self.node_timeout), "--cluster-require-full-coverage", "no",
             "--repl-diskless-sync-delay", "0", "--loadmodule", self.module],
            stdout=log, stderr=log)
        log.close()
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.procs[port].poll() is not None:
                raise RuntimeError(f"node {port} exited at start ({d}/redis.log)")
            try:
                if self.r(port).ping():
                    return
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError(f"node {port} did not answer within 10 s")

    def r(self, port, timeout=2):
        return redis.Redis(host="127.0.0.1", port=port, socket_timeout=timeout, socket_connect_timeout=timeout)

    def start(self):
        for p in self.ports:
            self.start_node(p)
        out = subprocess.run([self.cli, "--cluster", "create"] + [f"127.0.0.1:{p}" for p in self.ports] +
                             ["--cluster-replicas", "1", "--cluster-yes"], capture_output=True, text=True,
                             timeout=60)
        if out.returncode != 0:
            raise RuntimeError("redis-cli --cluster create failed: " + out.stdout[-500:] + out.stderr[-500:])
        self.wait_healthy(30)

    def info(self, port, section):
        return self.r(port).info(section)

    def wait_healthy(self, seconds):
        """Every node up, cluster_state ok, three primaries each with an online replica."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                if self.healthy():
                    return
            except redis.RedisError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the cluster was not healthy within {seconds} s")

    def healthy(self):
        primaries = 0
        for p in self.ports:
            if self.r(p).execute_command("CLUSTER", "INFO").decode().find("cluster_state:ok") < 0:
                return False
            rep = self.info(p, "replication")
            if rep["role"] == "master":
                primaries += 1
                if rep.get("connected_slaves", 0) != 1:
                    return False
            elif rep.get("master_link_status") != "up" or rep.get("master_sync_in_progress", 0):
                return False
        return primaries == 3

    def shards(self):
        """[(first slot, last slot, primary port, replica port)]: the slots and their primary as the cluster
        says now, the replica as the primary's INFO replication says (gossip may not have told every
        node yet which replica follows whom)."""
        out = []
        for entry in self.r(self.alive_port()).execute_command("CLUSTER", "SLOTS"):
            first, last, primary = int(entry[0]), int(entry[1]), int(entry[2][1])
            replica = self.info(primary, "replication").get("slave0", {}).get("port")
            out.append((first, last, primary, replica))
        return sorted(out)

    def alive_port(self):
        for p in self.ports:
            if self.procs.get(p) is not None and self.procs[p].poll() is None:
                return p
        raise RuntimeError("no node alive")

    def kill9(self, port):
        self.procs[port].send_signal(signal.SIGKILL)
        self.procs[port].wait()

    def stop(self):
        for p, proc in self.procs.items():
            if proc.poll() is None:
                try:
                    self.r(p, 5).shutdown(nosave=True)
                except redis.RedisError:
                    pass  # SHUTDOWN closes the connection: the usual way it "fails"
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def stopped(self):
        for p, proc in self.procs.items():
            if proc.poll() is None:
                return False
            try:
                socket.create_connection(("127.0.0.1", p), timeout=1).close()
                return False
            except OSError:
                pass
        return True


# --- the clients ------------------------------------------------------------------------------------------

class Router:
    """A cluster client for the chaos run: one connection per node, the slot map reloaded on demand."""

    def __init__(self, ports, timeout):
        self.ports, self.timeout = ports, timeout
        self.conns = {}
        self.owner = {}  # slot -> port
        deadline = time.time() + 10
        while not self.reload():
            if time.time() > deadline:
                raise RuntimeError("no node answered CLUSTER SLOTS with all 16384 slots")
            time.sleep(0.05)

    def conn(self, port):
        if port not in self.conns:
            self.conns[port] = redis.Redis(host="127.0.0.1", port=port, socket_timeout=self.timeout,
                                           socket_connect_timeout=1, single_connection_client=True)
        return self.conns[port]

    def drop(self, port):
        c = self.conns.pop(port, None)
        if c is not None:
            try:
                c.close()
            except Exception:  # a dead connection may fail to close: it is gone either way
                pass

    def reload(self):
        for port in random.sample(self.ports, len(self.ports)):
            try:
                slots = redis.Redis(host="127.0.0.1", port=port, socket_timeout=0.5,
                                    socket_connect_timeout=0.5).execute_command("CLUSTER", "SLOTS")
            except redis.RedisError:
                continue
            owner = {}
            for entry in slots:
                for s in range(int(entry[0]), int(entry[1]) + 1):
                    owner[s] = int(entry[2][1])
            if len(owner) == 16384:
                self.owner = owner
                return True
        return False


def classify_error(e):
    """'moved', 'unblocked', 'down' (the shard cannot answer now) or 'unexpected'."""
    if isinstance(e, (redis.ConnectionError, redis.TimeoutError)):
        return "down"
    text = str(e)
    if text.startswith("MOVED") or text.startswith("ASK"):
        return "moved"
    if text.startswith("UNBLOCKED"):
        return "unblocked"
    if text.startswith("CLUSTERDOWN") or text.startswith("TRYAGAIN") or text.startswith("LOADING"):
        return "down"
    return "unexpected"


def call(router, key, words, strict, out):
    """One limiter call through the router, following MOVED; returns (reply, acked, send, recv) or None
    after recording an error (out['errors'] gets [shard tag, instant, kind])."""
    slot = key_slot(key.encode())
    for _ in range(5):
        port = router.owner[slot]
        send = now_ms()
        try:
            c = router.conn(port)
            if strict:
                p = c.pipeline(transaction=False)
                p.execute_command(*words)
                p.execute_command(*STRICT_WAIT)
                reply, acked = p.execute(raise_on_error=False)
            else:
                reply, acked = c.execute_command(*words), None
            if isinstance(reply, Exception):
                raise reply
        except (redis.RedisError, OSError) as e:
            kind = classify_error(e)
            if kind == "down":
                router.drop(port)
            out["errors"].append([key, now_ms(), kind, f"{port}: {str(e)[:120]}"])
            if kind == "moved":
                out["moved"] += 1
                router.reload()
                continue
            time.sleep(0.02)
            router.reload()
            return None
        recv = now_ms()
        if strict:
            if isinstance(acked, Exception) and classify_error(acked) == "unblocked":
                router.drop(port)  # the server closes a connection it unblocked so (see waiter_client)
            acked = 1 if not isinstance(acked, Exception) and int(acked) >= 1 else 0
        return reply, acked, send, recv
    return None


def limiter_client(ports, tags, end_at, path, seed):
    """One process: loops over every limiter of every shard, plain and strict, until end_at."""
    random.seed(seed)
    router = Router(ports, timeout=PAUSE_S)
    out = {"grants": [], "errors": [], "moved": 0, "calls": 0, "unknown": []}
    keys = [(f"{mode}:{name}:{{{tag}}}", words, name, mode == "strict")
            for tag in tags for name, words, _, _, _ in LIMITERS for mode in ("plain", "strict")]
    seq = 0
    while now_ms() < end_at:
        random.shuffle(keys)
        for key, words, name, strict in keys:
            lease_id = None
            full = [words[0], key] + words[2:]
            if name == "ids":
                seq += 1
                lease_id = f"c{seed}-{seq}"
                full += ["ID", lease_id]
            got = call(router, key, full, strict, out)
            out["calls"] += 1
            if got is None:
                if lease_id:  # sent or not, answered or not: the server may hold it
                    out["unknown"].append(lease_id)
                continue
            reply, acked, send, recv = got
            if int(reply[0]) == 1:
                out["grants"].append([key, send, recv, int(reply[4]), acked, lease_id])
    with open(path, "w") as f:
        json.dump(out, f)


def waiter_client(ports, tags, end_at, path, threads):
    """One process, `threads` connections each looping on a contended RL.TOKEN ... WAIT 1500, then
    WAIT 1 200 after a grant. An answer later than the timeout plus PAUSE_S is a hang (recorded)."""
    out = {"grants": [], "errors": [], "moved": 0, "calls": 0, "answers": {}, "hung": 0}
    lock = threading.Lock()

    def loop(i):
        router = Router(ports, timeout=1.5 + PAUSE_S)
        tag = tags[i % len(tags)]
        key = f"waiter:{WAITER_CMD[0]}:{{{tag}}}"
        words = [WAITER_CMD[1][0], key] + WAITER_CMD[1][2:]
        slot = key_slot(key.encode())
        while now_ms() < end_at:
            port = router.owner[slot]
            send = now_ms()
            try:
                c = router.conn(port)
                reply = c.execute_command(*words)
                acked = 0
                if int(reply[0]) == 1:
                    try:
                        acked = 1 if int(c.execute_command(*STRICT_WAIT)) >= 1 else 0
                    except redis.RedisError:
                        # -UNBLOCKED (its node became a replica while WAIT waited): the server closes
                        # a connection after unblocking it so, as it does every blocked client then.
                        acked = 0
                        router.drop(port)
                recv = now_ms()
                with lock:
                    out["calls"] += 1
                    kind = "admitted" if int(reply[0]) == 1 else "denied"
                    out["answers"][kind] = out["answers"].get(kind, 0) + 1
                    if kind == "admitted":
                        out["grants"].append([key, send, recv, int(reply[4]), acked, None])
            except (redis.RedisError, OSError) as e:
                # -UNBLOCKED comes when the node became a replica (a graceful failover), and a closed
                # connection when it was killed: both are answers; a timeout is a waiter left hanging.
                kind = "hung" if isinstance(e, redis.TimeoutError) else classify_error(e)
                with lock:
                    out["calls"] += 1
                    out["answers"][kind] = out["answers"].get(kind, 0) + 1
                    if kind == "hung":
                        out["hung"] += 1
                    if kind in ("down", "unexpected", "hung"):
                        out["errors"].append([key, now_ms(), kind, f"{port}: {str(e)[:120]}"])
                router.drop(port)
                if kind != "moved":
                    time.sleep(0.02)
                router.reload()

    ts = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    with open(path, "w") as f:
        json.dump(out, f)


# --- the run ----------------------------------------------------------------------------------------------

def tag_for(first, last, taken):
    """A hash tag whose slot lies in [first, last]."""
    i = 0
    while True:
        tag = f"s{i}"
        if first <= key_slot(tag.encode()) <= last and tag not in taken:
            return tag
        i += 1


def wait_until(what, seconds, pred):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if pred():
                return now_ms()
        except redis.RedisError:
            pass
        time.sleep(0.02)
    raise RuntimeError(f"{what}: not within {seconds} s")


def graceful_failover(cluster, replica):
    """CLUSTER FAILOVER on a replica. A node's view of its primary may still carry a failure flag from
    before (the restarted node's, of the primary that replaced it): the command then refuses ("Master is
    down or failed") until gossip clears it, so it is asked again for up to 10 s."""
    deadline = time.time() + 10
    while True:
        try:
            return cluster.r(replica).execute_command("CLUSTER", "FAILOVER")
        except redis.ResponseError as e:
            if "Master is down or failed" not in str(e) or time.time() > deadline:
                raise RuntimeError(f"CLUSTER FAILOVER on {replica}: {e}")
            time.sleep(0.1)


def serves(cluster, port, key):
    """The node answers a limiter call for the key itself (a read-only form: nothing written)."""
    reply = cluster.r(port, 1).execute_command("RL.TOKEN_RO", key, "5", "1", "100")
    return int(reply[1]) == 5


def run_once(server, cli, module, args, log):
    cluster = Cluster(server, cli, module, args.node_timeout)
    events = {}
    procs = []
    result = {"events": events}
    try:
        cluster.start()
        shards = cluster.shards()
        tags = []
        for first, last, _, _ in shards:
            tags.append(tag_for(first, last, tags))
        result["tags"] = tags
        # Shard A (killed, then takes its slots back) and shard B (graceful failover).
        a, b = 0, 1
        tmp = cluster.dir
        phase = args.phase_ms
        paths = []
        # The load ends when this file appears (or after 10 minutes, if this script died without saying so).
        stop_file = os.path.join(tmp, "stop")
        ctx = multiprocessing.get_context("fork")
        deadline = now_ms() + 600000
        for i in range(args.clients):
            path = os.path.join(tmp, f"client{i}.json")
            paths.append(path)
            procs.append(ctx.Process(target=run_client, args=(limiter_client, cluster.ports, tags, stop_file,
                                                             deadline, path, i)))
        for i in range(args.waiter_procs):
            path = os.path.join(tmp, f"waiters{i}.json")
            paths.append(path)
            procs.append(ctx.Process(target=run_client, args=(waiter_client, cluster.ports, tags, stop_file,
                                                             deadline, path, args.waiters // args.waiter_procs)))
        for p in procs:
            p.start()
        events["load"] = now_ms()
        time.sleep(phase / 1000)

        # 1. kill -9 of shard A's primary; its replica is promoted by the cluster.
        _, _, primary_a, replica_a = shards[a]
        key_a = f"probe:{{{tags[a]}}}"
        if args.stall_replica_ms:
            # The replica stopped (SIGSTOP) for that long before the kill, then continued at once: the
            # grants of those ms may not have reached it. Shows the bound, by hand (not in make test).
            os.kill(cluster.procs[replica_a].pid, signal.SIGSTOP)
            time.sleep(args.stall_replica_ms / 1000)
        events["kill"] = now_ms()
        cluster.kill9(primary_a)
        if args.stall_replica_ms:
            os.kill(cluster.procs[replica_a].pid, signal.SIGCONT)
        events["promoted"] = wait_until("the replica of the killed primary promoted", 30,
                                        lambda: cluster.info(replica_a, "replication")["role"] == "master")
        events["serving"] = wait_until("the promoted replica serving its slots", 30,
                                       lambda: serves(cluster, replica_a, key_a))
        log(f"  kill -9 of {primary_a}: {replica_a} promoted after {events['promoted'] - events['kill']:.0f} ms, "
            f"serving after {events['serving'] - events['kill']:.0f} ms")
        time.sleep(phase / 1000)

        # 2. the killed node back, empty: it rejoins as the new primary's replica and syncs.
        events["restart"] = now_ms()
        cluster.start_node(primary_a)
        wait_until("the restarted node synchronised as a replica", 60,
                   lambda: (lambda rep: rep["role"] == "slave" and rep.get("master_link_status") == "up"
                            and not rep.get("master_sync_in_progress", 0))(cluster.info(primary_a, "replication")))
        events["rejoined"] = now_ms()
        time.sleep(phase / 1000)

        # 3. graceful failover of shard B; 4. the restarted node takes shard A back, gracefully.
        _, _, primary_b, replica_b = shards[b]
        for name, new_primary, old_primary in (("graceful_b", replica_b, primary_b),
                                               ("graceful_a", primary_a, replica_a)):
            events[name] = now_ms()
            graceful_failover(cluster, new_primary)
            wait_until(f"CLUSTER FAILOVER on {new_primary}", 30,
                       lambda: cluster.info(new_primary, "replication")["role"] == "master"
                       and cluster.info(old_primary, "replication")["role"] == "slave")
            events[name + "_done"] = now_ms()
            time.sleep(phase / 1000)

        open(stop_file, "w").close()
        events["stop"] = now_ms()
        for p in procs:
            p.join(timeout=30)
        result["clients_exited"] = all(p.exitcode == 0 for p in procs)
        merged = {"grants": [], "errors": [], "moved": 0, "calls": 0, "answers": {}, "hung": 0, "unknown": []}
        for path in paths:
            if not os.path.exists(path):
                continue
            with open(path) as f:
                part = json.load(f)
            for k in ("grants", "errors", "unknown"):
                merged[k] += part.get(k, [])
            for k in ("moved", "calls", "hung"):
                merged[k] += part.get(k, 0)
            for k, v in part.get("answers", {}).items():
                merged["answers"][k] = merged["answers"].get(k, 0) + v
        result["load"] = merged
        result["shards"] = shards
        result["ledgers"] = read_ledgers(cluster, tags)
        result["kill_shard"] = tags[a]
        cluster.wait_healthy(30)
        result["healthy_end"] = True
        result["replicas_equal"] = replicas_equal(cluster)
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join()
        cluster.stop()
    result["stopped"] = cluster.stopped()
    return result


def run_client(target, ports, tags, stop_file, deadline, path, extra):
    """A client process: the load until the stop file appears (checked by a watcher thread)."""
    box = {"end": deadline}

    def watch():
        while not os.path.exists(stop_file) and now_ms() < deadline:
            time.sleep(0.01)
        box["end"] = now_ms()

    threading.Thread(target=watch, daemon=True).start()
    target(ports, tags, EndAt(box), path, extra)


class EndAt:
    """A deadline that a watcher thread moves to now when the run is over; compares as a number."""

    def __init__(self, box):
        self.box = box

    def __gt__(self, other):
        return self.box["end"] > other

    def __lt__(self, other):
        return self.box["end"] < other


def read_ledgers(cluster, tags):
    """Every ledger key's lease ids, as the primary that owns it now holds them (RL.LEASES)."""
    router = Router(cluster.ports, timeout=5)
    out = {}
    for tag in tags:
        for mode in ("plain", "strict"):
            key = f"{mode}:ids:{{{tag}}}"
            for _ in range(10):
                try:
                    leases = router.conn(router.owner[key_slot(key.encode())]).execute_command("RL.LEASES", key)
                    out[key] = [lease[0].decode() for lease in leases]
                    break
                except redis.ResponseError as e:
                    if not str(e).startswith("MOVED"):
                        raise
                    router.reload()
            else:
                raise RuntimeError(f"RL.LEASES {key}: no owner answered")
    return out


def replicas_equal(cluster):
    """Each primary's keys, DUMP for DUMP, on its replica (after WAIT 1 on the primary)."""
    for primary in cluster.ports:
        rep = cluster.info(primary, "replication")
        if rep["role"] != "master":
            continue
        p = cluster.r(primary, 5)
        r = redis.Redis(host="127.0.0.1", port=rep["slave0"]["port"], socket_timeout=5,
                        single_connection_client=True)
        r.execute_command("READONLY")  # a replica answers reads of its primary's slots only so
        p.execute_command("WAIT", "1", "5000")
        keys = p.keys("*")
        for k in keys:
            if p.dump(k) != r.dump(k):
                # A key may have expired or changed between the two DUMPs: compare once more after a WAIT.
                p.execute_command("WAIT", "1", "5000")
                if p.dump(k) != r.dump(k):
                    return False
    return True


# --- the checks -------------------------------------------------------------------------------------------

def limiter_of(key):
    name = key.split(":")[1]
    for spec in LIMITERS + [WAITER_CMD]:
        if spec[0] == name:
            return spec
    raise KeyError(key)


def window_of(grant, w):
    """The FIXED window a grant was decided in: the decision lies in [send, recv], and the reply's
    reset_after_ms is the time to that window's end."""
    send, recv, reset = grant[1], grant[2], grant[3]
    if int(send // w) == int(recv // w):
        return int(send // w)
    if recv - send < w / 2:
        return int(round((recv + reset) / w)) - 1
    return None  # a call that took half a window: left out (counted as ambiguous)


def token_excess(grants, capacity, period):
    """The largest excess of a run of grants (in answer order) over capacity + refill over its span."""
    gs = sorted(grants, key=lambda g: g[2])
    worst = -capacity
    for i in range(len(gs)):
        lo = gs[i][1]
        for j in range(i, len(gs)):
            lo = min(lo, gs[j][1])
            allowed = capacity + int((gs[j][2] - lo) // period) + 1
            worst = max(worst, (j - i + 1) - allowed)
    return worst


def lease_excess(grants, limit, lease_ms):
    """The largest number of leases surely alive at once (from its answer to its send + lease_ms), minus
    the limit."""
    points = []
    for _, send, recv, *_ in grants:
        if recv < send + lease_ms:
            points.append((recv, 1))
            points.append((send + lease_ms, -1))
    alive = worst = 0
    for _, d in sorted(points, key=lambda p: (p[0], p[1])):
        alive += d
        worst = max(worst, alive)
    return worst - limit


def analyse(res, check, log, trust_unacked=False):
    ev, load, tags = res["events"], res["load"], res["tags"]
    if trust_unacked:
        for g in load["grants"]:
            g[4] = 1
    kill_tag = res["kill_shard"]
    by_key = {}
    for g in load["grants"]:
        by_key.setdefault(g[0], []).append(g)
    over_strict, over_plain_elsewhere, lost_plain, ambiguous = [], [], 0, 0
    for key, grants in by_key.items():
        name, _, kind, limit, param = limiter_of(key)
        strict = key.startswith("strict:") or key.startswith("waiter:")
        acked = [g for g in grants if g[4] == 1] if strict else grants
        tag = key[key.index("{") + 1:key.index("}")]
        if kind == "window":
            per = {}
            for g in acked:
                wi = window_of(g, param)
                if wi is None:
                    ambiguous += 1
                    continue
                per[wi] = per.get(wi, 0) + 1
            for wi, n in per.items():
                if n <= limit:
                    continue
                if strict:
                    over_strict.append((key, wi, n))
                elif tag == kill_tag and wi * param <= ev["kill"] < (wi + 1) * param:
                    lost_plain += n - limit
                else:
                    over_plain_elsewhere.append((key, wi, n))
        elif kind == "token" and strict:
            ex = token_excess(acked, limit, param)
            if ex > 0:
                over_strict.append((key, "token", ex))
        elif kind == "lease" and strict:
            ex = lease_excess(acked, limit, param)
            if ex > 0:
                over_strict.append((key, "leases", ex))
    check("acknowledged (strict) grants never over a limit: per window, per bucket, per lease key",
          not over_strict, over_strict[:5])
    # The ledgers: which grants each shard still knows of at the end.
    unknown = set(load["unknown"])
    lost_acked, phantom, lost_elsewhere, lost_plain_ids = [], [], [], 0
    for key, held in res["ledgers"].items():
        held = set(held)
        granted = {g[5]: g for g in by_key.get(key, [])}
        tag = key[key.index("{") + 1:key.index("}")]
        phantom += [(key, i) for i in held if i not in granted and i not in unknown][:3]
        lost = [g for i, g in granted.items() if i not in held]
        if key.startswith("strict:"):
            lost_acked += [(key, g[5]) for g in lost if g[4] == 1]
        if tag != kill_tag:
            lost_elsewhere += [(key, g[5]) for g in lost]
        elif key.startswith("plain:"):
            lost_plain_ids += len(lost)
    check("no acknowledged grant lost: every strict ledger grant still held after the failovers",
          not lost_acked, lost_acked[:5])
    check("no grant lost on a shard that was not killed (graceful failovers included)",
          not lost_elsewhere, lost_elsewhere[:5])
    check("no lease held that no client was granted or may have been", not phantom, phantom[:5])
    check("the ledgers recorded grants on every shard",
          all(len(v) > 0 for v in res["ledgers"].values()), {k: len(v) for k, v in res["ledgers"].items()})
    check("plain grants over a window's limit only in a window of the killed shard holding the kill",
          not over_plain_elsewhere, over_plain_elsewhere[:5])
    # Errors: only on the killed shard, from the kill until its replica serves plus 1.5 s.
    bad, kill_errors = [], []
    for key, at, kind, text in load["errors"]:
        tag = key[key.index("{") + 1:key.index("}")]
        if kind == "unexpected" or kind == "hung":
            bad.append((key, kind, text))
        elif tag == kill_tag and ev["kill"] <= at <= ev["serving"] + 1500:
            kill_errors.append(at)
        elif kind != "moved":
            bad.append((key, round(at - ev["kill"]), kind, text))
    check("errors only on the killed shard, from the kill until its replica serves (+1.5 s)", not bad, bad[:5])
    check(f"every waiter answered within its timeout + {PAUSE_S} s", load["hung"] == 0, load["hung"])
    # Liveness: each shard grants after each event.
    for what, since in (("after the promotion", ev["serving"]), ("after the graceful failovers",
                                                                     ev["graceful_a_done"])):
        served = {t: 0 for t in tags}
        for g in load["grants"]:
            if g[1] > since:
                served[g[0][g[0].index("{") + 1:g[0].index("}")]] += 1
        check(f"every shard granted {what}", all(v > 0 for v in served.values()), served)
    check("the client processes ended normally", res["clients_exited"])
    check("the cluster ended healthy: 3 primaries, each with a synchronised replica", res.get("healthy_end"))
    check("every replica holds its primary's keys byte for byte (DUMP)", res.get("replicas_equal"))
    check("every node stopped", res["stopped"])
    strict_grants = [g for g in load["grants"] if not g[0].startswith("plain:")]
    window_err = (max(kill_errors) - min(kill_errors)) if kill_errors else 0
    summary = {
        "calls": load["calls"], "grants": len(load["grants"]),
        "strict_grants": len(strict_grants), "strict_acked": sum(1 for g in strict_grants if g[4] == 1),
        "plain_over_admitted_at_kill": lost_plain, "plain_ledger_lost_at_kill": lost_plain_ids,
        "ambiguous": ambiguous,
        "killed_shard_errors": len(kill_errors), "error_span_ms": round(window_err),
        "promoted_ms": round(ev["promoted"] - ev["kill"]), "serving_ms": round(ev["serving"] - ev["kill"]),
        "graceful_b_ms": round(ev["graceful_b_done"] - ev["graceful_b"]),
        "graceful_a_ms": round(ev["graceful_a_done"] - ev["graceful_a"]),
        "moved": load["moved"], "waiter_answers": load["answers"],
    }
    log("  " + json.dumps(summary))
    log("  events (ms after the kill): " + ", ".join(f"{k} {v - ev['kill']:.0f}" for k, v in ev.items()))
    log(f"  shards: {res['shards']}, tags {tags}")
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--phase-ms", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--waiters", type=int, default=12)
    ap.add_argument("--waiter-procs", type=int, default=2)
    ap.add_argument("--node-timeout", type=int, default=1000)
    ap.add_argument("--stall-replica-ms", type=int, default=0,
                    help="stop the killed primary's replica (SIGSTOP) for this long just before the kill")
    ap.add_argument("--trust-unacked", action="store_true",
                    help="count every strict grant as acknowledged, WAIT or not: with --stall-replica-ms "
                         "4000 the checks of acknowledged grants must then fail (they can)")
    args = ap.parse_args()
    server = os.environ.get("REDIS_SERVER", "redis-server")
    cli = os.environ.get("REDIS_CLI", "redis-cli")
    module = os.path.realpath(os.environ.get("RL_MODULE", os.path.join(ROOT, "build/ratelimit.so")))
    passed = failed = 0

    def log(line):
        print(line, flush=True)

    def check(what, ok, detail=None):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAIL chaos-failover: {what}" + (f": {detail}" if detail is not None else ""), flush=True)

    version = subprocess.run([server, "--version"], capture_output=True, text=True).stdout.strip()
    log(f"chaos-failover: {version}")
    for run in range(args.runs):
        log(f"run {run + 1}:")
        try:
            res = run_once(server, cli, module, args, log)
        except Exception as e:  # a run that cannot be made is a failure, named
            check(f"run {run + 1}", False, repr(e))
            continue
        analyse(res, check, log, args.trust_unacked)
    print(f"chaos-failover: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
