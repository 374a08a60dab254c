#!/usr/bin/env bash
# Azurite's blob server on 127.0.0.1 for the bucket tests (docs/adr/027);
# the Azure twin of scripts/s3-server.sh.
#
#   eval "$(bash scripts/azurite-server.sh start)"   installs it if missing (npm,
#                                                    under target/azurite), starts
#                                                    it or finds the one running,
#                                                    prints the exports
#   bash scripts/azurite-server.sh env               the running server's exports
#   bash scripts/azurite-server.sh stop              stops the server it started (by PID)
#
# The exports: AZURE_STORAGE_USE_EMULATOR=true and AZURITE_BLOB_STORAGE_URL
# (object_store then signs with Azurite's well-known account and key), and
# WASMKEEP_TEST_AZURE=az://wasmkeep-test (a container made here). Data is kept
# on disk under $dir/data, emptied when a server starts and when it stops: not
# in memory, because Azurite's in-memory store keeps one extent per upload and
# its garbage collection, every 10 minutes, takes time quadratic in them with
# the server answering nothing (7,237 extents: 86 s; ADR 027). Messages go to
# stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "azurite-server: $*" >&2; }

dir=target/azurite
container=wasmkeep-test
azurite_version=3.35.0
bin=$dir/node_modules/.bin/azurite-blob

exports() {
  cat <<EOF
export AZURE_STORAGE_USE_EMULATOR=true
export AZURITE_BLOB_STORAGE_URL=http://127.0.0.1:$1
export WASMKEEP_TEST_AZURE=az://$container
EOF
}

# Any HTTP answer (Azurite answers 400 to a bare GET) means it is up.
answers() { curl -sS -o /dev/null --max-time 2 "http://127.0.0.1:$1/" 2>/dev/null; }

running() {
  [ -f "$dir/pid" ] && [ -f "$dir/port" ] || return 1
  local pid port
  pid=$(cat "$dir/pid") port=$(cat "$dir/port")
  kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q azurite-blob &&
    answers "$port" && echo "$port"
}

install() {
  command -v node >/dev/null || { say "node is missing (scripts/setup.sh installs it)"; exit 1; }
  if [ "$(node -p "require('./$dir/node_modules/azurite/package.json').version" 2>/dev/null)" != "$azurite_version" ]; then
    say "npm install azurite@$azurite_version (into $dir)"
    mkdir -p "$dir"
    npm install --no-audit --no-fund --loglevel=error --prefix "$dir" "azurite@$azurite_version" >&2
  fi
}

# Creates the test container, signed with Azurite's published development
# key (object_store makes no containers).
make_container() {
  python3 - "$1" "$container" <<'EOF'
import base64, hashlib, hmac, sys, urllib.request
from email.utils import formatdate
port, container = sys.argv[1], sys.argv[2]
account = "devstoreaccount1"
key = base64.b64decode("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")
date, version = formatdate(usegmt=True), "2021-08-06"
to_sign = "PUT\n" + "\n" * 11 + f"x-ms-date:{date}\nx-ms-version:{version}\n/{account}/{account}/{container}\nrestype:container"
sig = base64.b64encode(hmac.new(key, to_sign.encode(), hashlib.sha256).digest()).decode()
req = urllib.request.Request(f"http://127.0.0.1:{port}/{account}/{container}?restype=container", method="PUT",
    headers={"x-ms-date": date, "x-ms-version": version, "Authorization": f"SharedKey {account}:{sig}", "Content-Length": "0"})
try:
    urllib.request.urlopen(req, timeout=5)
except urllib.error.HTTPError as e:
    if e.code != 409:  # already there
        sys.exit(f"creating the container: {e.code} {e.read()[:300]!r}")
EOF
}

start() {
  if port=$(running); then
    say "already running on 127.0.0.1:$port (pid $(cat "$dir/pid"))"
    exports "$port"
    return
  fi
  install
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  rm -rf "$dir/data" && mkdir -p "$dir/data"
  setsid "$bin" --blobHost 127.0.0.1 --blobPort "$port" --location "$dir/data" \
    --disableTelemetry --skipApiVersionCheck --silent >"$dir/log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
  echo "$port" >"$dir/port"
  for _ in $(seq 1 150); do
    if answers "$port"; then
      make_container "$port"
      say "azurite $azurite_version on 127.0.0.1:$port (pid $(cat "$dir/pid"), log $dir/log)"
      exports "$port"
      return
    fi
    kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
    sleep 0.1
  done
  say "azurite did not answer on 127.0.0.1:$port; its log:"
  cat "$dir/log" >&2
  stop
  exit 1
}

stop() {
  if [ -f "$dir/pid" ]; then
    pid=$(cat "$dir/pid")
    # Only the process this script started, by its PID (and only while that
    # PID is still azurite-blob: a PID is reused once its process is gone).
    if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q azurite-blob; then
      kill "$pid"
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      say "stopped (pid $pid)"
    fi
    rm -f "$dir/pid" "$dir/port"
    rm -rf "$dir/data"
  fi
}

case "${1:-}" in
  start) start ;;
  env) if port=$(running); then exports "$port"; else say "not running"; exit 1; fi ;;
  stop) stop ;;
  *) echo "usage: bash scripts/azurite-server.sh start|env|stop" >&2; exit 2 ;;
esac
