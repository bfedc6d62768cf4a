#!/usr/bin/env bash
# Instructions per request of a Peregrine binary, under callgrind: the
# noise-free guide for hot-path work (CPU time on this VM drifts by 10-30 %
# between minutes; instruction counts do not). Not a result to claim: the
# figure of merit stays bench/compare.sh's CPU time against nginx.
#
# usage: [SIZE=BYTES] bench/instructions.sh [BINARY] [wrk options...]
#   BINARY defaults to target/release/peregrine (built if missing);
#   SIZE is the served file's size (default 612; 123784 is compare.sh's
#   large file, sent with sendfile);
#   e.g. bench/instructions.sh target/release/peregrine -H 'Connection: close'
#   URI=rw/small.html or URI=guard/small.html requests the file through
#   bench/compare.py's module rows' locations (rewrite ... last and
#   add_header; map, allow/deny and auth_basic: the Authorization header is
#   added), which the configuration then has.
# Prints the instructions under the worker loop divided by the requests wrk
# completed, and leaves the callgrind file for callgrind_annotate.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v valgrind >/dev/null || need+=(valgrind)
command -v wrk >/dev/null || need+=(wrk)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
bin=${1:-target/release/peregrine}
[ $# -gt 0 ] && shift
[ -x "$bin" ] || cargo build --release -q
bin=$(realpath "$bin")

work=$(mktemp -d /tmp/peregrine-instructions-XXXXXX)
chmod 755 "$work"
mkdir -p "$work/html" "$work/logs"
head -c "${SIZE:-612}" /dev/zero | tr '\0' 'p' > "$work/html/small.html"
uri=${URI:-small.html}
modules=""
auth=()
if [ "$uri" != small.html ]; then
  # The locations of bench/compare.py's module rows (user bench, password
  # peregrine, as {SHA}).
  printf 'bench:{SHA}%s\n' "$(printf peregrine | openssl sha1 -binary | base64)" > "$work/htpasswd"
  modules="
        location /rw/ { rewrite ^/rw/(.*)\$ /hdr/\$1 last; }
        location /hdr/ { alias $work/html/; add_header X-Bench rewritten; }
        location /guard/ { alias $work/html/; allow 127.0.0.1; deny all;
            auth_basic bench; auth_basic_user_file $work/htpasswd; add_header X-Agent \$bench_agent; }"
  auth=(-H "Authorization: Basic $(printf bench:peregrine | base64)")
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<EOF
worker_processes 1;
error_log $work/logs/error.log crit;
pid $work/logs/peregrine.pid;
events { worker_connections 1024; }
http {
    include $PWD/conf/mime.types;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    open_file_cache max=1000 inactive=20s;
    gzip on;
    map \$http_user_agent \$bench_agent { default other; ~*curl curl; ~*wrk wrk; }
    server { listen 127.0.0.1:$port; root $work/html;$modules }
}
EOF
out="$work/callgrind.out"
valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" -p "$work" -c "$work/nginx.conf" \
  > "$work/valgrind.log" 2>&1 &
vg=$!
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$port/$uri" && break
  sleep 0.2
done
n=$(wrk -t1 -c10 -d4s "${auth[@]}" "$@" "http://127.0.0.1:$port/$uri" | awk '/requests in/{print $1}')
kill -TERM "$vg"
wait "$vg" || true
# The worker loop's inclusive count: the largest of the lines callgrind
# attributes to `worker::run` or, when that is inlined into its caller,
# `Worker::event_loop` (inlining splits them over several files, and
# which one carries the binary's name changes from build to build).
total=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null \
  | awk '/peregrine_engine::worker::(run|Worker::event_loop)/ && $2 ~ /^\(/ {gsub(",","",$1); v = $1 + 0; if (v > max) max = v} END {print max + 0}')
echo "requests: $n (+1 warm-up)"
echo "instructions per request (worker loop): $(( total / (n + 1) ))"
echo "callgrind file: $out"
