#!/usr/bin/env python3
"""Send the same raw requests to nginx and Peregrine and report differences.

Both servers get the same configuration (only the port and the pid/log paths
differ) and the same docroot. For every request the whole answer is compared:
status line, each header (Date and Server excepted: they differ by design),
the body, and whether the connection was closed. Run it through
scripts/compare-nginx.sh, which installs nginx and builds Peregrine.

Exit status: 0 when there is no difference, 1 otherwise.
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

CONF = """
worker_processes 1;
error_log {logs}/error-{name}.log info;
pid {logs}/{name}.pid;
events {{ worker_connections 256; }}
http {{
    include {mime};
    default_type application/octet-stream;
    access_log off;
    charset_types text/html text/plain;
    server {{
        listen 127.0.0.1:{port} default_server;
        server_name localhost;
        root {root};
        index index.html;
        location /auto/ {{ autoindex on; }}
        location = /status {{ stub_status; }}
        location /gone {{ return 410; }}
        location /moved {{ return 301 /new; }}
        location /text {{ return 200 "hello"; }}
        location /tf/ {{ try_files $uri /index.html; }}
        location /al/ {{ alias {root}/dir/; }}
        location ~* \\.PNG$ {{ return 200 "regex"; }}
        error_page 404 /404.html;
    }}
    server {{
        listen 127.0.0.1:{port};
        server_name other.test *.wild.test;
        root {root}/dir;
    }}
}}
"""

REQUESTS = [
    b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /index.html HTTP/1.0\r\n\r\n",
    b"HEAD /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /missing HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /dir HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /dir/ HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /auto/ HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /noindex/ HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /gone HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /moved HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /text HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /tf/nothing HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /al/a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /x.png HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: other.test\r\n\r\n",
    b"GET /a.txt HTTP/1.1\r\nHost: www.wild.test\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-9\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: localhost\r\nRange: bytes=-5\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: localhost\r\nRange: bytes=999999-\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: *\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: localhost\r\nIf-Match: \"nope\"\r\n\r\n",
    b"POST /index.html HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nabc",
    b"GET /../etc/passwd HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /%2e%2e/etc/passwd HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /a%00b HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET / HTTP/1.1\r\n\r\n",
    b"GET / HTTP/2.0\r\nHost: localhost\r\n\r\n",
    b"get / HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"GET http://other.test/ HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
]


def make_docroot(root):
    files = {
        "index.html": b"<html><body>index page</body></html>\n",
        "a.txt": b"plain text file\n",
        "404.html": b"<html>custom not found</html>\n",
        "dir/index.html": b"<html>dir index</html>\n",
        "dir/a.txt": b"alias text\n",
        "auto/one.txt": b"1\n",
        "auto/<b>&.txt": b"2\n",
        "noindex/x.txt": b"x\n",
    }
    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    mtime = 1_700_000_000
    for dirpath, _, names in os.walk(root):
        for n in names:
            os.utime(os.path.join(dirpath, n), (mtime, mtime))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port):
    end = time.time() + 10
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"no server on {port}")


def exchange(port, raw):
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    s.sendall(raw)
    out = b""
    closed = False
    s.settimeout(1.0)
    while True:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            closed = True
            break
        if not chunk:
            closed = True
            break
        out += chunk
    s.close()
    return out, closed


def normalize(raw, port):
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    keep = []
    for line in lines:
        low = line.lower()
        if low.startswith(("date:", "server:")):
            continue
        keep.append(line.replace(str(port), "PORT"))
    named = b"nginx/1.22.1" in body or b"peregrine" in body
    body = body.replace(b"nginx/1.22.1", b"SERVER").replace(b"peregrine", b"SERVER")
    body = body.replace(str(port).encode(), b"PORT")
    if named:
        # Error pages name the server, so their lengths differ by design.
        keep = ["Content-Length: (error page)" if l.lower().startswith("content-length:") else l
                for l in keep]
    return keep, body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peregrine", required=True)
    ap.add_argument("--mime", required=True)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="peregrine-vs-nginx-")
    # nginx's workers run as nobody when started as root: let them read.
    os.chmod(work, 0o755)
    root = os.path.join(work, "html")
    logs = os.path.join(work, "logs")
    os.makedirs(logs)
    make_docroot(root)
    procs, ports = {}, {}
    for name in ("nginx", "peregrine"):
        port = free_port()
        conf = os.path.join(work, f"{name}.conf")
        with open(conf, "w") as f:
            f.write(CONF.format(logs=logs, name=name, mime=args.mime, port=port, root=root))
        argv = (["nginx", "-p", work, "-c", conf, "-g", "daemon off;"] if name == "nginx"
                else [args.peregrine, "-p", work, "-c", conf])
        procs[name] = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ports[name] = port
        wait_port(port)
    differences = 0
    try:
        for raw in REQUESTS:
            got = {}
            for name in ("nginx", "peregrine"):
                out, closed = exchange(ports[name], raw)
                got[name] = (normalize(out, ports[name]), closed)
            if got["nginx"] != got["peregrine"]:
                differences += 1
                first = raw.split(b"\r\n", 1)[0][:80].decode("latin-1")
                print(f"--- {first!r}")
                for name in ("nginx", "peregrine"):
                    (head, body), closed = got[name]
                    print(f"  {name:9} closed={closed} {head}")
                    if got["nginx"][0][1] != got["peregrine"][0][1]:
                        print(f"  {'':9} body={body[:200]!r}")
    finally:
        for p in procs.values():
            p.terminate()
            p.wait()
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(REQUESTS)} requests, {differences} with differences")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
