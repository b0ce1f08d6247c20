"""Reads the per-request logs of several rate-limited servers (gateways or app processes) sharing one
fixed-window limit, and reports per server and in total: requests, 200s, 429s, admitted per window
against the limit, and the p50/p99 time of the limiter check (the Redis round trip).

    python3 report.py --limit 200 --window-ms 1000 --title "nginx gateways" gw1=build/.../access.log gw2=...

Log lines: "unix_ms status reset_after_ms check_us" (unix_ms: when the reply arrived). The idea: a
request's window is the server's, not the logger's: the window ends at unix_ms + reset_after_ms, and
since windows are aligned to multiples of window_ms, rounding that to the nearest multiple names the
window exactly while the reply took less than half a window to be logged (`ambiguous` counts the
replies that came within a quarter window of that bound). Exits 1 if any window admitted more than the
limit across all servers. --series FILE writes admitted per window per server (gnuplot data).

Columns: admit/win is the mean admitted per window over the windows between the first and the last
(those two are partial), max the most in one window; p50/p99 are the limiter check in microseconds."""

import argparse
import math
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional


@dataclass
class Stats:
    requests: int = 0
    status: Counter = field(default_factory=Counter)
    admitted: Counter = field(default_factory=Counter)   # window end (ms) -> admitted requests
    check_us: List[int] = field(default_factory=list)
    ambiguous: int = 0


def window_end(unix_ms: int, reset_ms: int, window_ms: int) -> (int, bool):
    """The window's end and whether the attribution is clear (within a quarter window of a boundary)."""
    end = unix_ms + reset_ms
    nearest = (end + window_ms // 2) // window_ms * window_ms
    return nearest, abs(end - nearest) < window_ms // 4


def read_log(path: str, window_ms: int) -> Stats:
    s = Stats()
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 4 or "-" in parts:
                continue  # not a limited request (no API key, Redis down)
            unix_ms, status, reset_ms, us = (int(p) for p in parts)
            s.requests += 1
            s.status[status] += 1
            s.check_us.append(us)
            if status == 200:
                end, clear = window_end(unix_ms, reset_ms, window_ms)
                s.admitted[end] += 1
                s.ambiguous += not clear
    return s


def percentile(values: List[int], p: float) -> Optional[int]:
    """Nearest-rank percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(len(ordered) * p / 100) - 1)]


def merge(parts: List[Stats]) -> Stats:
    total = Stats()
    for s in parts:
        total.requests += s.requests
        total.status.update(s.status)
        total.admitted.update(s.admitted)
        total.check_us += s.check_us
        total.ambiguous += s.ambiguous
    return total


def full_windows(admitted: Counter) -> List[int]:
    """The windows strictly between the first and the last with traffic (the ends are partial)."""
    ends = sorted(admitted)
    return ends[1:-1] if len(ends) > 2 else ends


def row(name: str, s: Stats, windows: List[int]) -> str:
    per_window = [s.admitted.get(w, 0) for w in windows]
    mean = sum(per_window) / len(per_window) if per_window else 0
    other = s.requests - s.status[200] - s.status[429]
    p50, p99 = percentile(s.check_us, 50), percentile(s.check_us, 99)
    return (f"{name:<8} {s.requests:>9} {s.status[200]:>7} {s.status[429]:>8} {other:>6} "
            f"{mean:>10.1f} {max(per_window, default=0):>6} {p50 if p50 is not None else '-':>8} "
            f"{p99 if p99 is not None else '-':>8}")


def report(title: str, names: List[str], stats: List[Stats], limit: int, window_ms: int, out=sys.stdout) -> Dict:
    total = merge(stats)
    windows = full_windows(total.admitted)
    print(f"{title}: limit {limit} per {window_ms} ms window, shared", file=out)
    print(f"{'':<8} {'requests':>9} {'200':>7} {'429':>8} {'other':>6} {'admit/win':>10} {'max':>6} "
          f"{'p50 us':>8} {'p99 us':>8}", file=out)
    for name, s in zip(names, stats):
        print(row(name, s, windows), file=out)
    print(row("total", total, windows), file=out)
    all_windows = sorted(total.admitted)
    worst = max(total.admitted.values(), default=0)
    over = [w for w in all_windows if total.admitted[w] > limit]
    at_limit = sum(1 for w in all_windows if total.admitted[w] == limit)
    print(f"windows: {len(all_windows)} with traffic; max admitted in one window across all: {worst} "
          f"(limit {limit}); at the limit: {at_limit}; over the limit: {len(over)}; "
          f"ambiguous attributions: {total.ambiguous}", file=out)
    return {"total": total, "max": worst, "over": over, "at_limit": at_limit, "windows": all_windows}


def write_series(path: str, names: List[str], stats: List[Stats], window_ms: int) -> None:
    """One line per window: its middle in seconds since the first window's start, then admitted per
    server and in total."""
    total = merge(stats)
    ends = sorted(total.admitted)
    if not ends:
        return
    first = ends[0] - window_ms
    with open(path, "w") as f:
        f.write("# t_s " + " ".join(names) + " total\n")
        for end in range(ends[0], ends[-1] + 1, window_ms):
            counts = [s.admitted.get(end, 0) for s in stats]
            middle = (end - window_ms / 2 - first) / 1000
            f.write(f"{middle:g} " + " ".join(map(str, counts)) + f" {sum(counts)}\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, required=True)
    ap.add_argument("--window-ms", type=int, required=True)
    ap.add_argument("--title", default="servers")
    ap.add_argument("--series")
    ap.add_argument("logs", nargs="+", help="NAME=PATH")
    args = ap.parse_args()
    names = [a.split("=", 1)[0] for a in args.logs]
    stats = [read_log(a.split("=", 1)[1], args.window_ms) for a in args.logs]
    result = report(args.title, names, stats, args.limit, args.window_ms)
    if args.series:
        write_series(args.series, names, stats, args.window_ms)
    return 1 if result["over"] else 0


if __name__ == "__main__":
    sys.exit(main())
