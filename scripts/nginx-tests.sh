#!/usr/bin/env bash
# Runs nginx's own test suite (github.com/nginx/nginx-tests, not part of this
# repository) against Peregrine's release binary.
#
#   scripts/nginx-tests.sh SUITE_DIR [FILE.t ...]     (all .t files when none)
#
# Environment: BINARY (default: target/release/peregrine, built first),
# JOBS (prove -j, default 2), KEEP=1 (keep the test directories: the suite's
# TEST_NGINX_LEAVE), VERBOSE=1 (prove -v output in the per-file log).
#
# Prints one line per file (passed, failed, skipped and the skip reason) and
# a total line "N passed, N failed, N skipped". The per-file logs stay in
# $LOGDIR (default target/nginx-tests/). Exit status 1 when a subtest failed
# or a file died.
#
# nginx's suite refuses to run as root (its configurations use `user`-less
# workers and check permissions), so as root each file runs as `nobody`
# through setpriv, with a temporary directory nobody can write.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || [ ! -d "$1/lib/Test" ]; then
  echo "usage: $0 SUITE_DIR [FILE.t ...]   (SUITE_DIR: a checkout of nginx-tests)" >&2
  exit 2
fi
SUITE=$(cd "$1" && pwd)
shift

if [ -z "${BINARY:-}" ]; then
  cargo build --release --quiet || exit 2
  BINARY=target/release/peregrine
fi
BINARY=$(realpath "$BINARY")
# Debian's nginx (for comparison) loads its dynamic modules from here.
if [ "$(basename "$BINARY")" = nginx ] && [ -d /usr/lib/nginx/modules ]; then
  export TEST_NGINX_MODULES=${TEST_NGINX_MODULES:-/usr/lib/nginx/modules}
fi
LOGDIR=${LOGDIR:-target/nginx-tests}
mkdir -p "$LOGDIR"
LOGDIR=$(realpath "$LOGDIR")

if [ $# -eq 0 ]; then
  FILES=$(cd "$SUITE" && ls *.t)
else
  FILES="$*"
fi

RUNAS=()
TMPROOT=$(mktemp -d /tmp/nginx-tests.XXXXXX)
chmod 1777 "$TMPROOT"
if [ "$(id -u)" = 0 ]; then
  # The binary must be reachable by nobody: copy it where it can read it.
  if [ "$(basename "$BINARY")" != nginx ]; then
    cp "$BINARY" "$TMPROOT/peregrine" && chmod 755 "$TMPROOT/peregrine"
    BINARY=$TMPROOT/peregrine
  fi
  RUNAS=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  chmod o+rwx "$LOGDIR"
fi

run_one() {
  local t=$1 log="$LOGDIR/${1%.t}.log"
  (cd "$SUITE" && env TMPDIR="$TMPROOT" TEST_NGINX_BINARY="$BINARY" \
    ${TEST_NGINX_MODULES:+TEST_NGINX_MODULES=$TEST_NGINX_MODULES} ${KEEP:+TEST_NGINX_LEAVE=1} ${VERBOSE:+TEST_NGINX_VERBOSE=1} \
    "${RUNAS[@]}" prove -v "$t") >"$log" 2>&1
  # prove -v prints every "ok N"/"not ok N" line, and "skipped: REASON"
  # for a file planned skip_all.
  local pass fail skip reason planned
  pass=$(grep -a -cE '^ok [0-9]+' "$log")
  skip=$(grep -a -cE '^ok [0-9]+.*# (skip|SKIP)' "$log")
  pass=$((pass - skip))
  fail=$(grep -a -E '^not ok [0-9]+' "$log" | grep -a -vc '# TODO')
  # "not ok ... # TODO": a subtest the suite itself marks as not expected to
  # pass on this version (has_version gates); counted with the skipped.
  local todo
  todo=$(grep -a -E '^not ok [0-9]+' "$log" | grep -a -c '# TODO')
  skip=$((skip + todo))
  planned=$(grep -a -oE '^1\.\.[0-9]+' "$log" | head -1 | cut -d. -f3)
  reason=$(grep -a -oE 'skipped: .*' "$log" | head -1)
  if [ -n "$reason" ]; then
    printf '%-40s skipped whole (%s)\n' "$t" "${reason#skipped: }"
    echo "SKIPFILE" >"$log.sum"
    return
  fi
  local ran=$((pass + skip + fail))
  local died=""
  if [ -z "$planned" ]; then
    # No plan at all: the file died before it could say how many it has.
    died=" (died before its plan: $(grep -a -m1 -E "emerg|Can't|died" "$log" | head -c 160))"
    fail=$((fail + 1))
  elif [ "$ran" -lt "$planned" ]; then
    # Subtests the plan promised but that never ran (the file died).
    died=" (died after $ran of $planned: $(grep -a -m1 -E "Can't|died|Dubious" "$log" | head -c 120))"
    fail=$((fail + planned - ran))
  fi
  local todos=""
  [ "$todo" -gt 0 ] && todos=" ($todo of them TODO)"
  printf '%-40s %3d passed, %3d failed, %3d skipped%s%s\n' "$t" "$pass" "$fail" "$skip" "$todos" "$died"
  echo "$pass $fail $skip" >"$log.sum"
}

JOBS=${JOBS:-2}
export -f run_one
export SUITE BINARY TMPROOT LOGDIR KEEP VERBOSE
RUNAS_STR="${RUNAS[*]:-}"
export RUNAS_STR
# xargs runs run_one in parallel; each file's line is printed as it ends.
printf '%s\n' $FILES | xargs -P "$JOBS" -I{} bash -c 'RUNAS=($RUNAS_STR); run_one "$@"' _ {}

P=0 F=0 S=0 W=0
for t in $FILES; do
  sum="$LOGDIR/${t%.t}.log.sum"
  [ -f "$sum" ] || continue
  read -r p f s <"$sum"
  if [ "$p" = SKIPFILE ]; then W=$((W + 1)); continue; fi
  P=$((P + p)) F=$((F + f)) S=$((S + s))
done
echo "$P passed, $F failed, $S skipped ($W files skipped whole; logs in $LOGDIR)"
rm -rf "$TMPROOT"
[ "$F" -eq 0 ]
