#!/usr/bin/env bash
# Builds Peregrine's Debian package with dpkg-deb (no debhelper needed):
#
#   dist/deb/build.sh [--binary PATH] [--out DIR] [--fast]
#
# --binary: the peregrine binary to package (default: `cargo build
# --release`, then target/release/peregrine); its debug information is
# stripped into the package as dh_strip would. --out: where the .deb goes
# (default target/deb). --fast: gzip -1 instead of xz (the tests' choice).
# Prints the path of the package.
#
# Layout (Debian's nginx package, /etc/nginx -> /etc/peregrine):
#   /usr/sbin/peregrine, /etc/peregrine/{nginx.conf, mime.types,
#   fastcgi.conf, fastcgi_params, scgi_params, uwsgi_params, proxy_params,
#   snippets/, conf.d/, sites-available/default, sites-enabled/,
#   modules-enabled/}, /lib/systemd/system/peregrine.service,
#   /etc/logrotate.d/peregrine, /var/www/html/index.peregrine-debian.html.
# Every file under /etc is a conffile.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BINARY= OUT=$ROOT/target/deb COMPRESS=(-Zxz)
while [ $# -gt 0 ]; do
  case $1 in
    --binary) BINARY=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --fast) COMPRESS=(-Zgzip -z1); shift ;;
    *) echo "usage: $0 [--binary PATH] [--out DIR] [--fast]" >&2; exit 2 ;;
  esac
done
if [ -z "$BINARY" ]; then
  (cd "$ROOT" && cargo build --release --quiet --bin peregrine)
  BINARY=$ROOT/target/release/peregrine
fi
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -1)
ARCH=$(dpkg --print-architecture)
mkdir -p "$OUT"
STAGE=$(mktemp -d "$OUT/stage.XXXXXX")
chmod 0755 "$STAGE"
trap 'rm -rf "$STAGE"' EXIT
D=$ROOT/dist/deb

install -d "$STAGE/usr/sbin" "$STAGE/DEBIAN"
objcopy --strip-debug "$BINARY" "$STAGE/usr/sbin/peregrine"
chmod 0755 "$STAGE/usr/sbin/peregrine"

E=$STAGE/etc/peregrine
install -d "$E/snippets" "$E/conf.d" "$E/sites-available" "$E/sites-enabled" "$E/modules-enabled"
install -m 0644 "$D/etc/nginx.conf" "$D/etc/proxy_params" "$E/"
install -m 0644 "$ROOT"/conf/{mime.types,fastcgi.conf,fastcgi_params,scgi_params,uwsgi_params} "$E/"
install -m 0644 "$ROOT/conf/snippets/fastcgi-php.conf" "$E/snippets/"
install -m 0644 "$D/etc/sites-available/default" "$E/sites-available/"
install -D -m 0644 "$ROOT/dist/peregrine.service" "$STAGE/lib/systemd/system/peregrine.service"
install -D -m 0644 "$ROOT/dist/logrotate.conf" "$STAGE/etc/logrotate.d/peregrine"
install -D -m 0644 "$ROOT/html/index.html" "$STAGE/var/www/html/index.peregrine-debian.html"
install -D -m 0644 "$ROOT/docs/operations.md" "$STAGE/usr/share/doc/peregrine/operations.md"
install -m 0644 "$ROOT/README.md" "$STAGE/usr/share/doc/peregrine/README.md"

(cd "$STAGE" && find etc -type f | sed 's|^|/|' | sort) > "$STAGE/DEBIAN/conffiles"
install -m 0755 "$D"/scripts/{postinst,prerm,postrm} "$STAGE/DEBIAN/"
SIZE=$(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@SIZE@/$SIZE/" \
  "$D/control.in" > "$STAGE/DEBIAN/control"

DEB=$OUT/peregrine_${VERSION}_${ARCH}.deb
dpkg-deb --root-owner-group "${COMPRESS[@]}" --build "$STAGE" "$DEB" >/dev/null
echo "$DEB"
