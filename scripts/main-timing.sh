#!/usr/bin/env bash
# Where `bash scripts/main.sh` spends its time on a fresh clone: clones this
# checkout's HEAD into an empty temporary folder (an empty target/; the
# machine's packages and download caches are as they are), runs main.sh there
# with each line of its output stamped with the seconds since it started, and
# stops the server at `listening on` (ADR 036).
#
#   bash scripts/main-timing.sh [LOG]     LOG defaults to target/main-timing.log
#
# Takes minutes (it builds the host from nothing) and the disk of a second
# target/ (about 5 GB), removed at the end. Not in the test command.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(realpath -m "${1:-target/main-timing.log}")
mkdir -p "$(dirname "$log")"
dir=$(mktemp -d)
server=""
cleanup() { [ -z "$server" ] || kill -- "-$server" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
git clone -q . "$dir/repo"
cd "$dir/repo"
unset CARGO_TARGET_DIR
start=$(date +%s.%N)
: >"$log"
stamp() { while IFS= read -r line; do printf '%7.1f %s\n' "$(echo "$(date +%s.%N) - $start" | bc)" "$line"; done; }
setsid bash scripts/main.sh --listen 127.0.0.1:0 > >(stamp >>"$log") 2>&1 &
server=$!
while kill -0 "$server" 2>/dev/null; do
  if grep -q "listening on" "$log"; then
    printf 'main-timing: %.1f s to listening on (the stamped output: %s)\n' "$(echo "$(date +%s.%N) - $start" | bc)" "$log"
    exit 0
  fi
  sleep 1
done
echo "main-timing: main.sh exited before listening; its output: $log" >&2
exit 1
