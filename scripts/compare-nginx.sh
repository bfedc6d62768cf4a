#!/usr/bin/env bash
# Sends the same raw requests to Debian's nginx and to Peregrine, with the same
# configuration and docroot, and prints every difference (scripts/compare-nginx.py).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
fi
export PATH="$PATH:/usr/sbin"
cargo build --release -q
exec python3 scripts/compare-nginx.py --peregrine target/release/peregrine --mime "$PWD/conf/mime.types" "$@"
