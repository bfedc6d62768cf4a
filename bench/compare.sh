#!/usr/bin/env bash
# Peregrine vs nginx vs the floor probes, CPU time per request, in one run.
# Installs wrk and nginx from Debian when missing, builds Peregrine (release),
# bench/floor.c and (with liburing) bench/floor_uring.c, then runs
# bench/compare.py. Arguments pass through (e.g. --rounds 5 --duration 10
# --only keep-alive --idle-conns 0), and --baseline-rev REV (see below).
# The proxy, TLS, HTTP/2 and FastCGI rows (bench/gateway_rows.py) also
# build bench/backend.c and use h2load, openssl s_time and php-fpm:
# `--only proxy`, `--only tls`, `--only h2`, `--only fastcgi`.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v taskset >/dev/null || need+=(util-linux)
command -v gcc >/dev/null || need+=(gcc)
# The gateway rows (bench/gateway_rows.py): h2load, openssl s_time, php-fpm, ss.
command -v h2load >/dev/null || need+=(nghttp2-client)
command -v openssl >/dev/null || need+=(openssl)
command -v ss >/dev/null || need+=(iproute2)
compgen -G '/usr/sbin/php-fpm*' >/dev/null || need+=(php-fpm)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
export PATH="$PATH:/usr/sbin"
cargo build --release -q
mkdir -p target/bench
# `--baseline-rev REV`: build commit REV (a detached worktree, its own
# target directory) and run it in the rotation as `--baseline`.
args=()
while [ $# -gt 0 ]; do
  if [ "$1" = --baseline-rev ]; then
    rev=$(git rev-parse --short "$2")
    tree=target/bench/baseline-src
    git worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
    git worktree add --detach -q "$tree" "$rev"
    CARGO_TARGET_DIR="$PWD/target/bench/baseline-target" cargo build --release -q --manifest-path "$tree/Cargo.toml"
    cp target/bench/baseline-target/release/peregrine "target/bench/peregrine-$rev"
    git worktree remove --force "$tree"
    args+=(--baseline "target/bench/peregrine-$rev")
    shift 2
  else
    args+=("$1")
    shift
  fi
done
set -- "${args[@]}"
gcc -O2 -o target/bench/floor bench/floor.c
gcc -O2 -o target/bench/backend bench/backend.c
fpm=$(compgen -G '/usr/sbin/php-fpm*' | head -n1)
# The io_uring floor probe (bench/floor_uring.c) needs liburing; without it
# (or a kernel that refuses io_uring) the table has the epoll floor only.
uring=()
[ -e /usr/include/liburing.h ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq liburing-dev >/dev/null; } || true
if gcc -O2 -o target/bench/floor-uring bench/floor_uring.c -luring 2>/dev/null; then
  uring=(--uring-floor target/bench/floor-uring)
else
  echo "compare.sh: bench/floor_uring.c not built (liburing-dev missing): no io_uring floor column" >&2
fi
ulimit -n 65535 2>/dev/null || true
exec python3 bench/compare.py --peregrine target/release/peregrine \
  --floor target/bench/floor "${uring[@]}" --mime "$PWD/conf/mime.types" \
  --backend target/bench/backend --php-fpm "$fpm" "$@"
