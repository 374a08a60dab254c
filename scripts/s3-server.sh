#!/usr/bin/env bash
# moto's S3 server on 127.0.0.1 for the bucket tests (docs/adr/027).
#
#   eval "$(bash scripts/s3-server.sh start)"   installs it if missing, starts it
#                                               (or finds the one running), waits
#                                               until it answers, prints the exports
#   bash scripts/s3-server.sh env               the exports of the running server
#   bash scripts/s3-server.sh stop              stops the server it started (by PID)
#
# The exports: AWS_ENDPOINT_URL, dummy credentials (moto answers 403, not 412,
# to unsigned conditional writes, so the client must sign), AWS_ALLOW_HTTP, a
# region, and WASMKEEP_TEST_S3=s3://wasmkeep-test (a bucket made here). moto
# keeps everything in memory: a restart starts empty. Messages go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "s3-server: $*" >&2; }

venv=target/py-venv
dir=target/s3-server
bucket=wasmkeep-test
moto_version=5.2.5

exports() {
  local port=$1
  cat <<EOF
export AWS_ENDPOINT_URL=http://127.0.0.1:$port
export AWS_ACCESS_KEY_ID=test
export AWS_SECRET_ACCESS_KEY=test
export AWS_REGION=us-east-1
export AWS_ALLOW_HTTP=true
export WASMKEEP_TEST_S3=s3://$bucket
EOF
}

answers() { curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$1/moto-api/" 2>/dev/null; }

# The running server, if it is ours and answers: prints its port.
running() {
  [ -f "$dir/pid" ] && [ -f "$dir/port" ] || return 1
  local pid port
  pid=$(cat "$dir/pid") port=$(cat "$dir/port")
  kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q moto_server &&
    answers "$port" && echo "$port"
}

install() {
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  if [ "$("$venv/bin/python" -c 'import moto; print(moto.__version__)' 2>/dev/null)" != "$moto_version" ] ||
    ! "$venv/bin/python" -c 'import flask, flask_cors' 2>/dev/null; then
    # moto[s3] and Flask are all moto_server needs for S3; the "server" extra
    # would add every service's dependencies (docker, cfn-lint, ...).
    say "pip install moto[s3]==$moto_version flask flask-cors (prebuilt wheels)"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary :all: \
      "moto[s3]==$moto_version" "flask!=2.2.0,!=2.2.1" flask-cors >&2
  fi
}

start() {
  if port=$(running); then
    say "already running on 127.0.0.1:$port (pid $(cat "$dir/pid"))"
    exports "$port"
    return
  fi
  install
  mkdir -p "$dir"
  port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # setsid: its own process group, so that the test command's Ctrl-C does
  # not reach it half-way; `stop` ends it by its PID.
  setsid "$venv/bin/moto_server" -H 127.0.0.1 -p "$port" >"$dir/log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
  echo "$port" >"$dir/port"
  for _ in $(seq 1 100); do
    if answers "$port"; then
      # Buckets are not made by object_store: make the test bucket here (a
      # signed-or-not PUT of a bucket is accepted by moto).
      curl -fsS -o /dev/null -X PUT "http://127.0.0.1:$port/$bucket"
      say "moto $moto_version on 127.0.0.1:$port (pid $(cat "$dir/pid"), log $dir/log)"
      exports "$port"
      return
    fi
    kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
    sleep 0.1
  done
  say "moto did not answer on 127.0.0.1:$port; its log:"
  cat "$dir/log" >&2
  stop
  exit 1
}

stop() {
  if [ -f "$dir/pid" ]; then
    pid=$(cat "$dir/pid")
    # Only the process this script started, by its PID (and only while that
    # PID is still moto_server: a PID is reused once its process is gone).
    if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q moto_server; then
      kill "$pid"
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      say "stopped (pid $pid)"
    fi
    rm -f "$dir/pid" "$dir/port"
  fi
}

case "${1:-}" in
  start) start ;;
  env) if port=$(running); then exports "$port"; else say "not running"; exit 1; fi ;;
  stop) stop ;;
  *) echo "usage: bash scripts/s3-server.sh start|env|stop" >&2; exit 2 ;;
esac
