#!/usr/bin/env bash
# Runs h2spec (github.com/summerwind/h2spec, not part of this repository)
# against a server binary, over h2c (prior knowledge) and over TLS (ALPN h2),
# and prints one summary line for each plus every failing case.
#
#   scripts/h2spec.sh [BINARY]     (default: target/release/peregrine, built first)
#
# BINARY may be Peregrine or nginx (e.g. /usr/sbin/nginx): both read the same
# nginx.conf. Environment: H2SPEC (default /work/h2spec/h2spec, else h2spec on
# PATH), PORT (h2c port, default 18480; TLS is PORT+1), KEEP=1 (keep the temp
# directory with the configuration, logs and JUnit reports).
#
# The configuration uses the `listen ... http2` form because nginx 1.22 (the
# Debian nginx kept for comparison) has no `http2 on`; Peregrine reads both.
# Exit status 1 when a case failed.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ -z "${1:-}" ]; then
  cargo build --release --quiet || exit 2
  BINARY=target/release/peregrine
else
  BINARY=$1
fi
BINARY=$(realpath "$BINARY")
H2SPEC=${H2SPEC:-/work/h2spec/h2spec}
[ -x "$H2SPEC" ] || H2SPEC=$(command -v h2spec) || { echo "h2spec not found (set H2SPEC)" >&2; exit 2; }
PORT=${PORT:-18480}
TLS_PORT=$((PORT + 1))

# A server left on these ports (Peregrine listens with SO_REUSEPORT) would
# take some of h2spec's connections: refuse to run beside one.
for p in "$PORT" "$TLS_PORT"; do
  if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
    echo "port $p is in use: stop that server or set PORT" >&2
    exit 2
  fi
done

DIR=$(mktemp -d /tmp/h2spec.XXXXXX)
mkdir -p "$DIR/html" "$DIR/logs"
# A body larger than h2spec's small windows, so its flow-control cases see
# DATA split by the window.
for _ in $(seq 1 200); do echo "h2spec body line, padding the file past a few windows"; done >"$DIR/html/index.html"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
  -keyout "$DIR/key.pem" -out "$DIR/cert.pem" >/dev/null 2>&1 || { echo "openssl failed" >&2; exit 2; }

cat >"$DIR/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
error_log $DIR/logs/error.log info;
pid $DIR/logs/nginx.pid;
events { worker_connections 256; }
http {
    access_log $DIR/logs/access.log;
    client_body_temp_path $DIR/body;
    proxy_temp_path $DIR/proxy;
    fastcgi_temp_path $DIR/fastcgi;
    uwsgi_temp_path $DIR/uwsgi;
    scgi_temp_path $DIR/scgi;
    server {
        listen 127.0.0.1:$PORT http2;
        server_name localhost;
        location / { root $DIR/html; }
    }
    server {
        listen 127.0.0.1:$TLS_PORT ssl http2;
        server_name localhost;
        ssl_certificate $DIR/cert.pem;
        ssl_certificate_key $DIR/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        location / { root $DIR/html; }
    }
}
EOF

"$BINARY" -p "$DIR" -c "$DIR/nginx.conf" >"$DIR/logs/stdout" 2>&1 &
SERVER=$!
cleanup() {
  kill "$SERVER" 2>/dev/null
  wait "$SERVER" 2>/dev/null
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $DIR"; else rm -rf "$DIR"; fi
}
trap cleanup EXIT

# Wait for both ports.
for _ in $(seq 1 50); do
  if (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/$TLS_PORT) 2>/dev/null; then
    break
  fi
  sleep 0.1
done

status=0
run() { # NAME ARGS...
  local name=$1
  shift
  "$H2SPEC" -h 127.0.0.1 "$@" -j "$DIR/$name.xml" >"$DIR/$name.out" 2>&1
  local summary
  summary=$(grep -E '^[0-9]+ tests, ' "$DIR/$name.out" | tail -1)
  printf '%-4s %s (%s)\n' "$name" "${summary:-no summary: see $DIR/$name.out}" "$(basename "$BINARY")"
  # The failing cases: h2spec lists them after "Failures:".
  awk '/^Failures:/ {f = 1; next} f && /^ *[0-9]+(\.[0-9]+)*\. / {print "     " $0}
       f && /×/ {sub(/^ */, ""); print "       " $0}' "$DIR/$name.out"
  grep -qE ', 0 failed' <<<"$summary" || status=1
}
run h2c -p "$PORT"
run tls -p "$TLS_PORT" -t -k
exit $status
