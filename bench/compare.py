#!/usr/bin/env python3
"""Side-by-side CPU cost per request: Peregrine, nginx and the floor probe.

Method (docs: README "Performance"): each server runs one worker pinned to
CPU 0, wrk -t1 runs pinned to CPU 1, servers alternate A B C A B C, and the
figure of merit is the server's CPU time (utime+stime of the whole process
tree, from /proc/PID/stat) divided by the requests wrk completed. Medians of
the rounds are reported, with Peregrine's ratio to nginx: the median of the
per-round ratios.

Called by bench/compare.sh, which installs and builds what this needs.
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from compare_util import CLK_TCK, Server, free_port, selected, tree_cpu_ticks, tree_rss_kb
import gateway_rows

SMALL = 612
LARGE = 123_784

ERRORS = "errors"

# The auth_basic row's user, in the password file as `{SHA}` (one SHA-1 a
# request: the hash dominates neither server's figure, as MD5-crypt's
# thousand rounds would).
AUTH_USER, AUTH_PASS = "bench", "peregrine"
AUTH_B64 = __import__("base64").b64encode(f"{AUTH_USER}:{AUTH_PASS}".encode()).decode()

WORKLOADS = [
    # name, file, connections, extra wrk headers, target: a ratio (<=),
    # ERRORS (zero socket errors; the ratio is informational) or None
    # (informational only)
    ("612 B keep-alive c=50", "small.html", 50, [], 0.65),
    ("612 B Connection: close c=50", "small.html", 50, ["Connection: close"], 0.75),
    # Both servers accept at the handshake by default; this row gives both
    # `listen ... deferred` (informational).
    ("612 B Connection: close c=50, both deferred", "small.html", 50, ["Connection: close"], None),
    ("123,784 B keep-alive c=50", "large.html", 50, [], 0.90),
    ("612 B keep-alive c=1000", "small.html", 1000, [], 0.60),
    ("123,784 B gzip level 6 c=50", "large.html", 50, ["Accept-Encoding: gzip"], 0.20),
    ("612 B keep-alive c=10000", "small.html", 10000, [], ERRORS),
    # The modules (issues 17 and 18): the same file through a location
    # that runs phases. The floor probes have no such row.
    ("612 B rewrite ... last + add_header c=50", "rw/small.html", 50, [], 0.70),
    ("612 B map + allow/deny + auth_basic c=50", "guard/small.html", 50,
     ["Authorization: Basic " + AUTH_B64], 0.70),
    ("612 B limit_req c=50", "limited/small.html", 50, [], 0.70),
]

# The module rows' names: only the two servers (and a baseline) run them.
MODULE_ROWS = ("rewrite", "auth_basic", "limit_req")

COMMON = """
worker_processes 1;
worker_rlimit_nofile 65535;
error_log {logs}/error.log crit;
pid {logs}/{name}.pid;
events {{ worker_connections 20000; multi_accept on; }}
http {{
    include {mime};
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 100000;
    open_file_cache max=200000 inactive=20s;
    open_file_cache_valid 30s;
    open_file_cache_min_uses 2;
    open_file_cache_errors on;
    gzip on;
    gzip_comp_level 6;
    gzip_types text/html;
    # A rate no benchmark reaches: every request passes, each one a
    # lookup and update of the shared zone's state.
    limit_req_zone $binary_remote_addr zone=bench:10m rate=100000000r/s;
    map $http_user_agent $bench_agent {{
        default other;
        ~*curl curl;
        ~*wrk wrk;
    }}
    server {{
        listen 127.0.0.1:{port}{listen_extra};
        root {root};
        location /rw/ {{
            rewrite ^/rw/(.*)$ /hdr/$1 last;
        }}
        location /hdr/ {{
            alias {root}/;
            add_header X-Bench rewritten;
        }}
        location /limited/ {{
            alias {root}/;
            limit_req zone=bench burst=1000 nodelay;
        }}
        location /guard/ {{
            alias {root}/;
            allow 127.0.0.1;
            deny all;
            auth_basic "bench";
            auth_basic_user_file {htpasswd};
            add_header X-Agent $bench_agent;
        }}
    }}
}}
"""


def run_wrk(port, path, conns, headers, duration):
    argv = ["taskset", "-c", "1", "wrk", "-t1", f"-c{conns}", f"-d{duration}s"]
    for h in headers:
        argv += ["-H", h]
    argv.append(f"http://127.0.0.1:{port}/{path}")
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    m = re.search(r"(\d+) requests in", out)
    errs = re.search(r"Socket errors: (.*)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return int(m.group(1)) if m else 0, (errs.group(1) if errs else ""), int(non2xx.group(1)) if non2xx else 0


def measure(server, workload, duration):
    name, path, conns, headers, _ = workload
    u0, s0 = tree_cpu_ticks(server.proc.pid)
    t0 = time.time()
    requests, errors, non2xx = run_wrk(server.port, path, conns, headers, duration)
    elapsed = time.time() - t0
    u1, s1 = tree_cpu_ticks(server.proc.pid)

    def per_request(ticks):
        return ticks / CLK_TCK * 1e6 / requests if requests else float("inf")

    us = per_request(u1 - u0 + s1 - s0)
    # The user part alone: the server's own work, without the kernel's TCP
    # path that every server shares (the A/B figure for hot-path changes).
    return us, requests / elapsed, errors, non2xx, per_request(u1 - u0)


def idle_memory(server, conns):
    """RSS growth per keep-alive connection after one request on each."""
    base = tree_rss_kb(server.proc.pid)
    socks = []
    req = b"GET /small.html HTTP/1.1\r\nHost: x\r\n\r\n"
    errors = 0
    for _ in range(conns):
        try:
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            s.sendall(req)
            socks.append(s)
        except OSError:
            errors += 1
    for s in socks:
        got = b""
        try:
            while b"\r\n\r\n" not in got:
                chunk = s.recv(4096)
                if not chunk:
                    raise OSError("closed")
                got += chunk
        except OSError:
            errors += 1
    time.sleep(0.5)
    grown = tree_rss_kb(server.proc.pid) - base
    for s in socks:
        s.close()
    return grown * 1024 / conns, errors


def print_round_ratios(workloads, results):
    """Each round's ratio to the nginx run beside it, for Peregrine and the
    floor probes: a target below the floors' ratios asks for less CPU than
    the kernel's own work for the exchange, and the rounds show how far
    this VM's drift moves each figure."""
    probes = [n for n in ("peregrine", "floor", "uring-floor")
              if any((wl[0], n) in results for wl in workloads)]
    print()
    print("| workload | " + " | ".join(f"{n} ÷ nginx, per round" for n in probes) + " |")
    print("|---|" + "---|" * len(probes))
    for wl in workloads:
        ngx = results[(wl[0], "nginx")]
        cells = []
        for n in probes:
            rows = results.get((wl[0], n))
            cells.append(" ".join(f"{r[0] / x[0]:.2f}" for r, x in zip(rows, ngx)) if rows else "–")
        print(f"| {wl[0]} | " + " | ".join(cells) + " |")


def print_static_tables(args, workloads, results):
    """The static rows' table, each round's ratios, and the baseline's."""
    uring = " io_uring floor µs/req |" if args.uring_floor else ""
    print(f"| workload | nginx µs/req | Peregrine µs/req | floor µs/req |{uring} ratio (target) "
          "| nginx req/s | Peregrine req/s |")
    print("|---|---:|---:|---:|" + ("---:|" if uring else "") + "---:|---:|---:|")
    for wl in workloads:
        med = {}
        for name in ("nginx", "peregrine", "floor", "uring-floor"):
            rows = results.get((wl[0], name))
            if rows:
                med[name] = (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows))
        # The ratio of each round (the two servers ran back to back, on the
        # machine as it was then), then their median: a VM's speed drifts
        # by tens of percent over minutes, and a ratio of medians taken
        # from different minutes carries that drift.
        pairs = zip(results[(wl[0], "peregrine")], results[(wl[0], "nginx")])
        ratio = statistics.median(p[0] / n[0] for p, n in pairs)
        errs = [r[2] for r in results[(wl[0], "peregrine")] if r[2]]
        if wl[4] == ERRORS:
            verdict = "errors: " + ("none" if not errs else "; ".join(errs))
        elif wl[4] is None:
            verdict = "informational" + ("" if not errs else "; errors: " + "; ".join(errs))
        else:
            verdict = "meets" if ratio <= wl[4] else "MISSES"
        floor = f"{med['floor'][0]:.2f}" if "floor" in med else "–"
        if uring:
            floor += f" | {med['uring-floor'][0]:.2f}" if "uring-floor" in med else " | –"
        print(f"| {wl[0]} | {med['nginx'][0]:.2f} | {med['peregrine'][0]:.2f} | {floor} | "
              f"{ratio:.2f}× ({'≤ ' + str(wl[4]) + ', ' if isinstance(wl[4], float) else ''}{verdict}) | {med['nginx'][1]:.0f} | {med['peregrine'][1]:.0f} |")

    print_round_ratios(workloads, results)

    if args.baseline:
        print()
        print("| workload | baseline µs/req | Peregrine ÷ baseline (median of rounds) "
              "| user µs/req: baseline → Peregrine |")
        print("|---|---:|---:|---:|")
        for wl in workloads:
            rows = results[(wl[0], "baseline")]
            ours = results[(wl[0], "peregrine")]
            ratio = statistics.median(p[0] / b[0] for p, b in zip(ours, rows))
            user = (f"{statistics.median(r[4] for r in rows):.2f} → "
                    f"{statistics.median(r[4] for r in ours):.2f}")
            print(f"| {wl[0]} | {statistics.median(r[0] for r in rows):.2f} | {ratio:.2f}× | {user} |")



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peregrine", required=True)
    ap.add_argument("--floor", required=True)
    ap.add_argument("--uring-floor", default="",
                    help="the floor probe on io_uring (bench/floor_uring.c), run beside the epoll one")
    ap.add_argument("--mime", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--only", default="", help="substrings of row names to run, comma-separated (proxy,tls,h2,fastcgi)")
    ap.add_argument("--idle-conns", type=int, default=10000)
    ap.add_argument("--backend", default="",
                    help="bench/backend.c built: the proxy rows' canned-response backend")
    ap.add_argument("--php-fpm", default="php-fpm8.2", help="php-fpm binary of the FastCGI row")
    ap.add_argument("--baseline", default="",
                    help="another peregrine binary (e.g. an older commit's) run in the same rotation")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="peregrine-compare-")
    # mkdtemp makes the directory 0700: nginx's workers run as `nobody`
    # when started as root and would answer 403 to every request (and the
    # comparison would time error pages).
    os.chmod(work, 0o755)
    root = os.path.join(work, "html")
    logs = os.path.join(work, "logs")
    os.makedirs(root)
    os.makedirs(logs)
    words = b"Peregrine compares itself with nginx on the same files. "
    for fname, size in (("small.html", SMALL), ("large.html", LARGE)):
        with open(os.path.join(root, fname), "wb") as f:
            f.write((words * (size // len(words) + 1))[:size])
    htpasswd = os.path.join(work, "htpasswd")
    digest = __import__("base64").b64encode(__import__("hashlib").sha1(AUTH_PASS.encode()).digest())
    with open(htpasswd, "w") as f:
        f.write(f"{AUTH_USER}:{{SHA}}{digest.decode()}\n")

    names = ["nginx", "peregrine"] + (["baseline"] if args.baseline else [])

    def configure(name, listen_extra=""):
        port = free_port()
        conf = os.path.join(work, f"{name}{listen_extra.replace(' ', '-')}.conf")
        with open(conf, "w") as f:
            f.write(COMMON.format(logs=logs, name=name, mime=args.mime, port=port, root=root,
                                  listen_extra=listen_extra, htpasswd=htpasswd))
        if name == "nginx":
            argv = ["nginx", "-p", work, "-c", conf, "-g", "daemon off;"]
        elif name == "baseline":
            argv = [args.baseline, "-p", work, "-c", conf]
        else:
            argv = [args.peregrine, "-p", work, "-c", conf]
        return argv, port

    servers = {name: configure(name) for name in names}
    deferred = {name: configure(name, " deferred") for name in names}
    workloads = [w for w in WORKLOADS if selected(args.only, w[0])]
    results = {}
    for wl in workloads:
        body = SMALL if wl[1].endswith("small.html") else LARGE
        floors = ["floor"] + (["uring-floor"] if args.uring_floor else [])
        order = names + floors
        if "gzip" in wl[0] or "deferred" in wl[0] or any(m in wl[0] for m in MODULE_ROWS):
            order = names
        confs = deferred if "deferred" in wl[0] else servers
        for rnd in range(args.rounds):
            for name in order:
                if name in floors:
                    port = free_port()
                    probe = args.floor if name == "floor" else args.uring_floor
                    srv = Server(name, [probe, str(port), str(body)], port)
                else:
                    argv, port = confs[name]
                    srv = Server(name, argv, port)
                try:
                    # warm the caches (open_file_cache min_uses, memory cache)
                    run_wrk(port, wl[1], 4, wl[3], 1)
                    res = measure(srv, wl, args.duration)
                finally:
                    srv.stop()
                if res[3] or res[2]:
                    print(f"  WARNING: {name} answered {res[3]} non-2xx/3xx, socket errors [{res[2]}]: "
                          "its figure is not comparable", file=sys.stderr)
                results.setdefault((wl[0], name), []).append(res)
                print(f"  {wl[0]:32} round {rnd + 1} {name:9} {res[0]:7.2f} us/req "
                      f"(user {res[4]:5.2f}) {res[1]:10.0f} req/s errors[{res[2]}] non2xx {res[3]}",
                      file=sys.stderr)

    if workloads:
        print_static_tables(args, workloads, results)
    if args.idle_conns and workloads:
        print()
        print(f"| idle keep-alive memory ({args.idle_conns} connections) | bytes per connection | failed connections |")
        print("|---|---:|---:|")
        for name in ("nginx", "peregrine"):
            argv, port = servers[name]
            srv = Server(name, argv, port)
            try:
                per, failed = idle_memory(srv, args.idle_conns)
            finally:
                srv.stop()
            print(f"| {name} | {per:.0f} | {failed} |")
    # The proxy, TLS, HTTP/2 and FastCGI rows (issues 19-22).
    gateway_rows.run_rows(args, work, root, logs)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
