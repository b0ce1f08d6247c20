#!/usr/bin/env python3
"""waiter-memory.py -- what a client waiting with WAIT costs in server memory, against one blocked in BLPOP
(docs/operations.md, "Memory per waiter").

For each server and each kind of waiter it starts a fresh redis-server with the module (127.0.0.1, a free
port, a temp dir, no persistence), then:
  1. prepares N keys: RL.TOKEN keys of capacity 1 already spent (wait), or nothing (blpop: empty lists);
  2. reads INFO ("before"), opens N connections that each block, one key each: RL.TOKEN ... WAIT on its
     exhausted key, or BLPOP on its empty list; once INFO's blocked_clients is N, reads INFO ("blocked");
  3. releases every one from another connection (RL.TOKEN ... REFUND 1 gives the token back and admits the
     waiter; LPUSH wakes the BLPOP), reads the N replies (each must be the admission or the pushed value),
     and reads INFO every 0.5 s for --after seconds with the connections still open ("released+T");
  4. closes the N connections and reads INFO every 0.5 s again ("closed+T");
and stops the server (SHUTDOWN NOSAVE, then kill), whatever happened.

The same key per waiter in both kinds keeps the comparison to the blocked client itself. The figures are
the server's own (used_memory, used_memory_rss, mem_clients_normal), so no timing is asserted: a step only
says how much was still allocated at that moment. The client speaks RESP over plain sockets (no client
library needed), one connection per waiter, as real clients would hold.

  scripts/bench/waiter-memory.py [--waiters N] [--after SECONDS] [--server NAME]... [--out FILE]

NAME: redis-7.0 (the system's redis-server), redis-8.0 or valkey-8.1 (built under build/servers by
make servers); default all three that exist. Output: a TSV table (server, kind, phase, used_memory,
used_memory_rss, mem_clients_normal, connected_clients, blocked_clients), then one summary line per
server and kind on stderr: bytes per waiter while blocked, and still allocated at the first and last step.
Environment: RL_MODULE (default build/ratelimit.so).
"""
import argparse
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SERVERS = {
    "redis-7.0": "redis-server",
    "redis-8.0": os.path.join(ROOT, "build/servers/redis-8.0/bin/redis-server"),
    "valkey-8.1": os.path.join(ROOT, "build/servers/valkey-8.1/bin/valkey-server"),
}
FIELDS = ("used_memory", "used_memory_rss", "mem_clients_normal", "connected_clients", "blocked_clients")
REFILL_MS = 600000  # one token per 10 minutes: a spent bucket's waiter never fits by itself during a run
WAIT_MS = 1200000   # long enough to hold the whole refill: the waiter blocks rather than being denied


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Reader:
    """RESP replies from one socket, parsed as they come (enough of RESP2 for these commands)."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise ValueError("unexpected reply %r" % line)


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    return s, Reader(s)


def call(conn, *args):
    s, r = conn
    s.sendall(encode(*args))
    reply = r.reply()
    if isinstance(reply, RuntimeError):
        raise reply
    return reply


def pipeline(conn, commands):
    """Send commands in batches of 1,000; every reply must be no error."""
    s, r = conn
    for start in range(0, len(commands), 1000):
        batch = commands[start:start + 1000]
        s.sendall(b"".join(encode(*c) for c in batch))
        for c in batch:
            reply = r.reply()
            if isinstance(reply, RuntimeError):
                raise RuntimeError("%s: %s" % (" ".join(map(str, c)), reply))


def info(conn):
    text = call(conn, "INFO", "all").decode()
    values = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            values[k] = v
    return {f: values.get(f, "-") for f in FIELDS}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A throwaway server with the module; stopped by stop() whatever state it is in."""

    def __init__(self, binary, module):
        self.dir = tempfile.mkdtemp(prefix="rl-waiter-mem-")
        for _ in range(10):
            self.port = free_port()
            self.proc = subprocess.Popen(
                [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", self.dir, "--save", "",
                 "--appendonly", "no", "--maxclients", "20000", "--logfile", os.path.join(self.dir, "log"),
                 "--loadmodule", module])
            for _ in range(100):
                if self.proc.poll() is not None:
                    break
                try:
                    self.conn = connect(self.port)
                    call(self.conn, "PING")
                    return
                except OSError:
                    time.sleep(0.05)
            self.stop()
            self.dir = tempfile.mkdtemp(prefix="rl-waiter-mem-")
        raise RuntimeError("%s did not start (log in %s)" % (binary, self.dir))

    def stop(self):
        if self.proc.poll() is None:
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
                s.sendall(encode("SHUTDOWN", "NOSAVE"))
                s.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


KINDS = {
    # kind: (prepare, block, release, what a released waiter must get)
    "wait": (lambda i: ("RL.TOKEN", "wm:%d" % i, 1, 1, REFILL_MS),
             lambda i: ("RL.TOKEN", "wm:%d" % i, 1, 1, REFILL_MS, "WAIT", WAIT_MS),
             lambda i: ("RL.TOKEN", "wm:%d" % i, 1, 1, REFILL_MS, "REFUND", 1),
             lambda reply: isinstance(reply, list) and reply[:1] == [1]),
    "blpop": (None,
              lambda i: ("BLPOP", "bl:%d" % i, 0),
              lambda i: ("LPUSH", "bl:%d" % i, "x"),
              lambda reply: isinstance(reply, list) and reply[1:] == [b"x"]),
}


def wait_until(conn, field, value, what):
    for _ in range(600):
        if info(conn)[field] == str(value):
            return
        time.sleep(0.05)
    raise RuntimeError("%s never reached %s (INFO %s %s)" % (what, value, field, info(conn)[field]))


def steps(conn, label, seconds, rows):
    t = 0.0
    while t <= seconds + 1e-9:
        rows.append(("%s+%.1fs" % (label, t), info(conn)))
        time.sleep(0.5)
        t += 0.5


def measure(binary, module, kind, n, after):
    prepare, block, release, released_ok = KINDS[kind]
    server = Server(binary, module)
    clients = []
    rows = []
    try:
        ctl = server.conn
        if prepare:
            pipeline(ctl, [prepare(i) for i in range(n)])
        rows.append(("before", info(ctl)))
        for i in range(n):
            conn = connect(server.port)
            conn[0].sendall(encode(*block(i)))
            clients.append(conn)
        wait_until(ctl, "blocked_clients", n, "%s waiters" % kind)
        rows.append(("blocked", info(ctl)))
        pipeline(ctl, [release(i) for i in range(n)])
        bad = [i for i, (_, r) in enumerate(clients) if not released_ok(r.reply())]
        if bad:
            raise RuntimeError("%d of %d %s waiters got an unexpected reply (first: %d)" % (len(bad), n, kind, bad[0]))
        steps(ctl, "released", after, rows)
        for s, _ in clients:
            s.close()
        clients = []
        wait_until(ctl, "connected_clients", 1, "closing the waiters")
        steps(ctl, "closed", after, rows)
    finally:
        for s, _ in clients:
            s.close()
        server.stop()
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--waiters", type=int, default=2000)
    p.add_argument("--after", type=float, default=5.0, help="seconds of 0.5 s steps after release and close")
    p.add_argument("--server", action="append", choices=sorted(SERVERS))
    p.add_argument("--out", default="-")
    a = p.parse_args()
    if a.waiters < 1:
        p.error("--waiters must be at least 1")
    if a.after < 0:
        p.error("--after must be 0 or more")
    module = os.path.abspath(os.environ.get("RL_MODULE", os.path.join(ROOT, "build/ratelimit.so")))
    if not os.path.isfile(module):
        sys.exit("waiter-memory: module %s is missing (run make, or set RL_MODULE)" % module)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = a.waiters + 100
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            sys.exit("waiter-memory: --waiters %d needs %d open files, the limit is %d" % (a.waiters, need, hard))
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    names = a.server or [n for n in SERVERS if shutil.which(SERVERS[n])]
    missing = [n for n in names if not shutil.which(SERVERS[n])]
    if missing:
        sys.exit("waiter-memory: server %s is missing (make servers builds the newer ones)" % ", ".join(missing))
    out = sys.stdout if a.out == "-" else open(a.out, "w")
    out.write("server\tkind\tphase\t" + "\t".join(FIELDS) + "\n")
    for name in names:
        for kind in KINDS:
            rows = measure(shutil.which(SERVERS[name]), module, kind, a.waiters, a.after)
            for phase, v in rows:
                out.write("%s\t%s\t%s\t%s\n" % (name, kind, phase, "\t".join(v[f] for f in FIELDS)))
            out.flush()
            base = int(rows[0][1]["used_memory"])
            per = lambda row: (int(row[1]["used_memory"]) - base) / a.waiters
            released = [r for r in rows if r[0].startswith("released")]
            closed = [r for r in rows if r[0].startswith("closed")]
            print("%s %s: %.0f bytes per waiter blocked; after release %.0f (first step) %.0f (last); "
                  "after close %.0f (first) %.0f (last)" % (
                      name, kind, per(rows[1]), per(released[0]), per(released[-1]), per(closed[0]),
                      per(closed[-1])), file=sys.stderr)
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the servers on the way out (finally)
    main()
