"""The rows of issues 19-22: proxy, TLS, HTTP/2 and FastCGI, Peregrine and
nginx on one generated configuration (bench/compare.py runs them after its
static rows; `--only proxy`, `--only tls`, `--only h2`, `--only fastcgi`).

Same method as the static rows: one worker pinned to CPU 0, the load
generator pinned to CPU 1, the two servers alternated in each round, the
server's CPU time (its process tree, from /proc) per request and the
median of the per-round ratios. What these rows add:

- a backend on CPU 1 beside the load generator (bench/backend.c, the
  canned-response backend both proxies share, or one php-fpm pool both
  FastCGI gateways share); its CPU is measured too and reported apart;
- TLS: one ECDSA P-256 and one RSA-2048 certificate made for the run, TLS
  1.3 only, the same files for both servers;
- load generators besides wrk: `openssl s_time -new` (full handshakes, no
  session reuse: s_time -new starts every connection without a session
  and closes it after the handshake) and h2load.
"""
import os
import re
import statistics
import subprocess
import sys
import time

from compare_util import (CLK_TCK, Server, free_port, selected, tree_cpu_ticks, tree_rss_kb, wait_port)

# Handshakes: this many `openssl s_time` clients at once, so the server
# always has a handshake waiting (one client alone leaves it idle for the
# client's own share of each handshake).
HANDSHAKE_CLIENTS = 4
# Connections opened for the idle HTTP/2 memory table (each a full TLS
# handshake by Python's ssl module on the load CPU).
H2_IDLE_CONNS = 1000
# Clients sent at once to fill the upstream keep-alive pool, and the
# pool's size (`keepalive` in the upstream block; the throughput rows use
# at most 50 of it).
POOL_FILL = 500
POOL_SIZE = 1000
# php-fpm's static pool: enough children that the gateway, not the pool's
# queue, sets the pace on a 2-core machine.
FPM_CHILDREN = 4

# name, kind, path, connections, wrk headers, target, higher_is_better.
# kind: "http" (wrk, plain), "https" (wrk over TLS, ECDSA), "ecdsa"/"rsa"
# (full handshakes), "h2" (h2load over TLS), "fastcgi" (wrk to a PHP page).
# For higher_is_better rows the ratio is Peregrine's handshakes per
# CPU-second over nginx's (nginx's CPU per handshake over Peregrine's).
ROWS = [
    ("proxy 612 B keep-alive c=50 (upstream keepalive)", "http", "proxy/small", 50, [], 0.70, False),
    ("proxy 612 B Connection: close c=50", "http", "proxy/small", 50, ["Connection: close"], 0.70, False),
    ("proxy 123,784 B keep-alive c=50", "http", "proxy/large", 50, [], 0.70, False),
    ("tls full handshakes ECDSA P-256", "ecdsa", "", HANDSHAKE_CLIENTS, [], 1.5, True),
    ("tls full handshakes RSA-2048", "rsa", "", HANDSHAKE_CLIENTS, [], 1.0, True),
    ("tls HTTPS 612 B keep-alive c=50", "https", "small.html", 50, [], 0.75, False),
    ("tls HTTPS 123,784 B keep-alive c=50", "https", "large.html", 50, [], 0.90, False),
    ("h2 612 B h2load -c 50 -m 10 (TLS)", "h2", "small.html", 50, [], 0.60, False),
    ("fastcgi php-fpm 612 B page c=16", "fastcgi", "bench.php", 16, [], 0.70, False),
]

CONF = """
worker_processes 1;
worker_rlimit_nofile 65535;
error_log {logs}/{name}-gateway-error.log error;
pid {logs}/{name}-gateway.pid;
events {{ worker_connections 20000; multi_accept on; }}
http {{
    include {confdir}/mime.types;
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
    upstream canned {{
        server 127.0.0.1:{backend};
        keepalive {pool};
    }}
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location /proxy/ {{
            proxy_pass http://canned;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }}
        location ~ \\.php$ {{
            include {confdir}/fastcgi_params;
            fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
            fastcgi_pass unix:{fpm_sock};
        }}
    }}
    server {{
        listen 127.0.0.1:{ecdsa_port} ssl http2;
        root {root};
        ssl_certificate {work}/ecdsa.crt;
        ssl_certificate_key {work}/ecdsa.key;
        ssl_protocols TLSv1.3;
    }}
    server {{
        listen 127.0.0.1:{rsa_port} ssl;
        root {root};
        ssl_certificate {work}/rsa.crt;
        ssl_certificate_key {work}/rsa.key;
        ssl_protocols TLSv1.3;
    }}
}}
"""

FPM_CONF = """
[global]
pid = {work}/fpm.pid
error_log = {logs}/fpm.log
daemonize = no
[bench]
user = nobody
group = nogroup
listen = {sock}
listen.mode = 0666
pm = static
pm.max_children = {children}
"""

PHP_PAGE = """<?php
header('Content-Type: text/html');
echo str_repeat('Peregrine compares itself with nginx on one php-fpm pool. ', 10), "<br>\\n", date('Y'), "\\n";
"""


def make_certificates(work):
    for name, key in (("ecdsa", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]),
                      ("rsa", ["-newkey", "rsa:2048"])):
        subprocess.run(["openssl", "req", "-x509", *key, "-nodes", "-days", "30", "-subj", "/CN=localhost",
                        "-keyout", f"{work}/{name}.key", "-out", f"{work}/{name}.crt"],
                       check=True, capture_output=True)


class Run:
    """The generated configurations, the backends and the results."""

    def __init__(self, args, work, root, logs):
        self.args, self.work, self.root, self.logs = args, work, root, logs
        self.confdir = os.path.dirname(os.path.abspath(args.mime))
        make_certificates(work)
        with open(os.path.join(root, "bench.php"), "w") as f:
            f.write(PHP_PAGE)
        self.backend = self.fpm = None
        self.backend_port = free_port()
        self.fpm_sock = os.path.join(work, "fpm.sock")
        self.results = {}
        self.servers = {name: self.configure(name) for name in self.names()}

    def names(self):
        return ["nginx", "peregrine"] + (["baseline"] if self.args.baseline else [])

    def configure(self, name):
        ports = {k: free_port() for k in ("port", "ecdsa_port", "rsa_port")}
        conf = os.path.join(self.work, f"{name}-gateway.conf")
        with open(conf, "w") as f:
            f.write(CONF.format(logs=self.logs, name=name, confdir=self.confdir, root=self.root,
                                work=self.work, backend=self.backend_port, pool=POOL_SIZE,
                                fpm_sock=self.fpm_sock, **ports))
        binary = {"nginx": "nginx", "peregrine": self.args.peregrine, "baseline": self.args.baseline}[name]
        argv = [binary, "-p", self.work, "-c", conf] + (["-g", "daemon off;"] if name == "nginx" else [])
        return argv, ports

    def start_backends(self, kinds):
        """The canned-response backend and php-fpm on CPU 1, beside the load."""
        if "http" in kinds and not self.backend:
            self.backend = subprocess.Popen(
                ["taskset", "-c", "1", self.args.backend, str(self.backend_port), "612", "123784"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_port(self.backend_port)
        if "fastcgi" in kinds and not self.fpm:
            conf = os.path.join(self.work, "fpm.conf")
            with open(conf, "w") as f:
                f.write(FPM_CONF.format(work=self.work, logs=self.logs, sock=self.fpm_sock,
                                        children=FPM_CHILDREN))
            self.fpm = subprocess.Popen(["taskset", "-c", "1", self.args.php_fpm, "-F", "-y", conf],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            end = time.time() + 10
            while not os.path.exists(self.fpm_sock) and time.time() < end:
                time.sleep(0.05)

    def stop_backends(self):
        for p in (self.backend, self.fpm):
            if p:
                p.terminate()
                p.wait(10)

    def backend_pid(self, kind):
        p = {"http": self.backend, "fastcgi": self.fpm}.get(kind)
        return p.pid if p else None


def load(row, ports, duration):
    """Runs the row's load generator: (completed, errors text, non-2xx)."""
    name, kind, path, conns, headers, *_ = row
    if kind in ("ecdsa", "rsa"):
        return handshakes(ports[f"{kind}_port"], conns, duration)
    if kind == "h2":
        return run_h2load(ports["ecdsa_port"], path, conns, duration)
    scheme, port = ("https", ports["ecdsa_port"]) if kind == "https" else ("http", ports["port"])
    return run_wrk(f"{scheme}://127.0.0.1:{port}/{path}", conns, headers, duration)


def run_wrk(url, conns, headers, duration):
    argv = ["taskset", "-c", "1", "wrk", "-t1", f"-c{conns}", f"-d{duration}s"]
    for h in headers:
        argv += ["-H", h]
    out = subprocess.run(argv + [url], capture_output=True, text=True).stdout
    m = re.search(r"(\d+) requests in", out)
    errs = re.search(r"Socket errors: (.*)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return int(m.group(1)) if m else 0, (errs.group(1) if errs else ""), int(non2xx.group(1)) if non2xx else 0


def handshakes(port, clients, duration):
    """Full TLS 1.3 handshakes by `clients` `openssl s_time -new` at once."""
    argv = ["taskset", "-c", "1", "openssl", "s_time", "-connect", f"127.0.0.1:{port}", "-new",
            "-tls1_3", "-time", str(duration)]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(clients)]
    total, errors = 0, []
    for p in procs:
        out = p.communicate()[0]
        m = re.search(r"(\d+) connections in [\d.]+ real seconds", out)
        total += int(m.group(1)) if m else 0
        if not m or "ERROR" in out or "Unable" in out:
            errors.append(out.strip().splitlines()[-1] if out.strip() else "no output")
    return total, "; ".join(errors), 0


def run_h2load(port, path, conns, duration):
    argv = ["taskset", "-c", "1", "h2load", "-t1", f"-c{conns}", "-m10", f"-D{duration}",
            f"https://127.0.0.1:{port}/{path}"]
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    m = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored", out)
    if not m:
        return 0, "h2load: " + (out.strip().splitlines() or ["no output"])[-1], 0
    done, ok, failed, errored = (int(g) for g in m.groups())
    errs = f"{failed} failed, {errored} errored" if failed or errored else ""
    return ok, errs, done - ok


def measure(run, server, row, ports, duration):
    pid = run.backend_pid(row[1])
    u0, s0 = tree_cpu_ticks(server.proc.pid)
    b0 = sum(tree_cpu_ticks(pid)) if pid else 0
    t0 = time.time()
    count, errors, non2xx = load(row, ports, duration)
    elapsed = time.time() - t0
    u1, s1 = tree_cpu_ticks(server.proc.pid)
    b1 = sum(tree_cpu_ticks(pid)) if pid else 0

    def per_unit(ticks):
        return ticks / CLK_TCK * 1e6 / count if count else float("inf")

    return per_unit(u1 - u0 + s1 - s0), count / elapsed, errors, non2xx, per_unit(u1 - u0), per_unit(b1 - b0)


def run_rows(args, work, root, logs):
    rows = [r for r in ROWS if selected(args.only, r[0])]
    if not rows:
        return
    run = Run(args, work, root, logs)
    kinds = {r[1] for r in rows}
    try:
        run.start_backends(kinds)
        if "fastcgi" in kinds and not os.path.exists(run.fpm_sock):
            print("gateway rows: php-fpm did not start: no FastCGI row", file=sys.stderr)
            rows = [r for r in rows if r[1] != "fastcgi"]
        for row in rows:
            for rnd in range(args.rounds):
                for name in run.names():
                    argv, ports = run.servers[name]
                    srv = Server(name, argv, ports["port"])
                    try:
                        load(row, ports, 1)  # warm-up: caches, the upstream pool, php-fpm's opcache
                        res = measure(run, srv, row, ports, args.duration)
                    finally:
                        srv.stop()
                    if res[2] or res[3]:
                        print(f"  WARNING: {name} answered {res[3]} non-2xx, errors [{res[2]}]: "
                              "its figure is not comparable", file=sys.stderr)
                    run.results.setdefault((row[0], name), []).append(res)
                    print(f"  {row[0]:44} round {rnd + 1} {name:9} {res[0]:8.2f} us/unit "
                          f"(user {res[4]:6.2f}, backend {res[5]:7.2f}) {res[1]:9.0f}/s "
                          f"errors[{res[2]}] non2xx {res[3]}", file=sys.stderr)
        print_tables(run, rows)
        if args.idle_conns:
            print_memory(run, kinds)
    finally:
        run.stop_backends()


def ratio_of(row, p, n):
    return n[0] / p[0] if row[6] else p[0] / n[0]


def print_tables(run, rows):
    res = run.results
    print()
    print("| row | nginx µs/unit | Peregrine µs/unit | ratio (target) | backend µs/unit, nginx / Peregrine "
          "| nginx /s | Peregrine /s | errors |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for row in rows:
        ngx, ours = res[(row[0], "nginx")], res[(row[0], "peregrine")]
        ratio = statistics.median(ratio_of(row, p, n) for p, n in zip(ours, ngx))
        ok = ratio >= row[5] if row[6] else ratio <= row[5]
        what = "handshakes/CPU-s " if row[6] else ""
        target = f"{what}{ratio:.2f}× ({'≥' if row[6] else '≤'} {row[5]}, {'meets' if ok else 'MISSES'})"
        med = lambda rs, i: statistics.median(r[i] for r in rs)
        backend = f"{med(ngx, 5):.2f} / {med(ours, 5):.2f}" if run.backend_pid(row[1]) else "–"
        errs = "; ".join(f"{n}: {r[2] or ''} non-2xx {r[3]}" for n in ("nginx", "peregrine")
                         for r in res[(row[0], n)] if r[2] or r[3]) or "none"
        print(f"| {row[0]} | {med(ngx, 0):.2f} | {med(ours, 0):.2f} | {target} | {backend} "
              f"| {med(ngx, 1):.0f} | {med(ours, 1):.0f} | {errs} |")
    print()
    others = [n for n in run.names() if n != "nginx"]
    print("| row | " + " | ".join(f"{n} ÷ nginx CPU per unit, per round (user µs: nginx → {n})" for n in others) + " |")
    print("|---|" + "---|" * len(others))
    for row in rows:
        ngx = res[(row[0], "nginx")]
        cells = []
        for n in others:
            rs = res[(row[0], n)]
            rounds = " ".join(f"{r[0] / x[0]:.2f}" for r, x in zip(rs, ngx))
            cells.append(f"{rounds} ({statistics.median(x[4] for x in ngx):.2f} → "
                         f"{statistics.median(r[4] for r in rs):.2f})")
        print(f"| {row[0]} | " + " | ".join(cells) + " |")


def print_memory(run, kinds):
    lines = []
    for name in ("nginx", "peregrine"):
        argv, ports = run.servers[name]
        srv = Server(name, argv, ports["port"])
        try:
            if "http" in kinds:
                lines.append(("upstream keep-alive pool", name) + pool_memory(srv, ports["port"], run.backend_port))
            if "h2" in kinds:
                lines.append((f"idle HTTP/2 connections over TLS ({H2_IDLE_CONNS})", name)
                             + h2_idle_memory(srv, ports["ecdsa_port"]))
        finally:
            srv.stop()
    if not lines:
        return
    print()
    print("| memory | server | connections measured | bytes per connection | failed |")
    print("|---|---|---:|---:|---:|")
    for what, name, conns, per, failed in sorted(lines):
        print(f"| {what} | {name} | {conns} | {per:.0f} | {failed} |")


def upstream_conns(server_pid, backend_port):
    """Established connections from the server's process tree to the backend."""
    out = subprocess.run(["ss", "-Htnp", "state", "established", f"( dport = :{backend_port} )"],
                         capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if line.strip())


def pool_memory(server, port, backend_port):
    """RSS growth per pooled upstream connection after POOL_FILL clients,
    each with one proxied request in flight at once, have closed: what is
    left is the pool (and whatever memory the allocator kept from the
    clients' connections, so the figure is an upper bound)."""
    import socket
    # warm: the worker's first allocations are not the pool's
    warm = socket.create_connection(("127.0.0.1", port))
    warm.sendall(b"GET /proxy/small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    while warm.recv(65536):
        pass
    warm.close()
    time.sleep(0.3)
    base = tree_rss_kb(server.proc.pid)
    before = upstream_conns(server.proc.pid, backend_port)
    socks, failed = [], 0
    for _ in range(POOL_FILL):
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        except OSError:
            failed += 1
    for s in socks:
        s.sendall(b"GET /proxy/small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    for s in socks:
        try:
            got = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
            if not got.startswith(b"HTTP/1.1 200"):
                failed += 1
        except OSError:
            failed += 1
        s.close()
    time.sleep(0.5)
    pooled = upstream_conns(server.proc.pid, backend_port) - before
    grown = tree_rss_kb(server.proc.pid) - base
    return pooled, grown * 1024 / pooled if pooled else float("nan"), failed


def h2_idle_memory(server, port):
    """RSS growth per HTTP/2 connection over TLS left open after one
    request (the client preface, SETTINGS, one GET, its answer read)."""
    import socket
    import ssl
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    # HPACK: :method GET (2), :scheme https (7), :path (literal, name 4),
    # :authority (literal, name 1); END_STREAM | END_HEADERS on stream 1.
    block = b"\x82\x87\x04\x0b/small.html\x01\x09localhost"
    frames = (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
              + len(block).to_bytes(3, "big") + b"\x01\x05\x00\x00\x00\x01" + block)
    base = tree_rss_kb(server.proc.pid)
    socks, failed = [], 0
    for _ in range(H2_IDLE_CONNS):
        try:
            s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10))
            if s.selected_alpn_protocol() != "h2":
                raise OSError("no h2")
            s.sendall(frames)
            read_until_end_stream(s)
            socks.append(s)
        except OSError:
            failed += 1
    time.sleep(0.5)
    grown = tree_rss_kb(server.proc.pid) - base
    for s in socks:
        s.close()
    return len(socks), grown * 1024 / len(socks) if socks else float("nan"), failed


def read_until_end_stream(s):
    """Reads frames until one on stream 1 carries END_STREAM."""
    buf = b""
    while True:
        while len(buf) >= 9:
            length = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + length:
                break
            ftype, flags, stream = buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
            buf = buf[9 + length:]
            if stream == 1 and ftype in (0, 1) and flags & 1:
                return
        chunk = s.recv(65536)
        if not chunk:
            raise OSError("closed")
        buf += chunk
