#!/usr/bin/env bash
# The Python SDK's new-user trial, as a test: in an empty temporary folder, do
# what README.md's "Quick start (a new project)" says, with its files and
# commands taken from the README itself (each file's block begins with its
# path as a comment): a fresh venv, the README's `pip install
# "wasmkeep-actor[testing]"` done from the two wheels (the SDK's wheel with
# its [testing] extra, the harness's wheel for the requirement it names;
# componentize-py 0.25.1 and pytest from PyPI), write the actor, its tests
# and its manifest, `python -m wasmkeep_actor build`, pytest with the
# harness, and the README's `python -m wasmkeep_actor serve` (with the
# repository's `target/debug/wasmkeep-shim` on PATH: these wheels carry no
# host binary, a release's do) answering the README's request on 127.0.0.1.
# The SDK and the harness must be imported from the trial's venv, never from
# this checkout.
#
#   bash sdk-python/scripts/new-user-trial.sh [--wheels DIR] [--shim PATH] [--keep]
#
# --wheels: where wheels.sh wrote them (default target/python-dist; run
# `bash sdk-python/scripts/wheels.sh` first). --shim: default
# target/debug/wasmkeep-shim. --keep: keep the folder.
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/../.."
repo=$PWD

say() { echo "new-user trial: $*"; }
fail() { echo "new-user trial: FAILED: $*" >&2; exit 1; }

wheels=$repo/target/python-dist
shim=$repo/target/debug/wasmkeep-shim
keep=false
while (($#)); do
  case "$1" in
    --wheels) [ $# -ge 2 ] || fail "--wheels needs a folder"; wheels=$2; shift 2 ;;
    --shim) [ $# -ge 2 ] || fail "--shim needs a path"; shim=$2; shift 2 ;;
    --keep) keep=true; shift ;;
    *) fail "unknown argument $1 (usage: new-user-trial.sh [--wheels DIR] [--shim PATH] [--keep])" ;;
  esac
done
case "$wheels" in /*) ;; *) wheels=$here/$wheels ;; esac
case "$shim" in /*) ;; *) shim=$here/$shim ;; esac

sdk_whl=$(ls "$wheels"/wasmkeep_actor-*-py3-none-any.whl 2>/dev/null | head -1 || true)
harness_whl=$(ls "$wheels"/wasmkeep_actor_harness-*.whl 2>/dev/null | head -1 || true)
[ -n "$sdk_whl" ] && [ -n "$harness_whl" ] || fail "no wheels in $wheels: run bash sdk-python/scripts/wheels.sh first"
[ -x "$shim" ] || fail "$shim is missing: build it with cargo build -p wasmkeep-shim (or pass --shim)"
command -v curl >/dev/null || fail "curl is not installed"

# Compiled components are cached by content hash: here in the trial's own
# folder, removed with it, as a new user's first run would be. (A component's
# bytes differ from one build to the next, so a shared cache would only grow
# by ~35 MB per component and run.)
# Nothing of this checkout may leak in through the environment.
unset PYTHONPATH PYTHONHOME VIRTUAL_ENV PYTHONSTARTUP

dir=$(mktemp -d "${TMPDIR:-/tmp}/wasmkeep-py-new-user-XXXXXX")
export WASMKEEP_CACHE_DIR=$dir/.wasmkeep-cache
# A new user has no kept builds either: the build step runs componentize-py.
export WASMKEEP_PY_BUILD_CACHE=$dir/.python-builds
server_pid=
cleanup() {
  local rc=$?
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if $keep; then say "kept $dir"; else rm -rf "$dir"; fi
  exit $rc
}
trap cleanup EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# run STEP CMD...: runs CMD in the trial's folder with its output kept; one
# line with the time when it passes, its output and the step's name when not.
run() {
  local what=$1 t log; shift
  local rc=0
  t=$(now); log=$(mktemp)
  (cd "$dir" && "$@") >"$log" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then
    cat "$log" >&2; rm -f "$log"
    fail "$what ($*) exited $rc (its output above)"
  fi
  STEP_OUT=$(cat "$log"); rm -f "$log"
  say "$what: ok ($(secs "$t") s)"
}

# The README's files and commands.
readme=$repo/sdk-python/README.md
spec=$dir/.readme
mkdir -p "$spec/files"
python3 - "$readme" "$spec" <<'EOF' || fail "reading sdk-python/README.md's quick start (above)"
import pathlib, re, sys
readme, spec = pathlib.Path(sys.argv[1]).read_text(), pathlib.Path(sys.argv[2])
start = readme.find("## Quick start (a new project)")
if start < 0:
    sys.exit('README.md has no section "## Quick start (a new project)"')
section = readme[start:readme.find("\n## ", start + 1)]
files = {}
for lang, body in re.findall(r"```(python|toml)\n(.*?)```", section, re.S):
    m = re.match(r"# ((?:tests/)?[\w.-]+\.(?:py|toml))\n", body)
    if m:
        files[m.group(1)] = body
for need in ("hello.py", "tests/conftest.py", "tests/test_hello.py", "wasmkeep.toml"):
    if need not in files:
        sys.exit(f"README.md's quick start has no code block beginning with '# {need}'")
for path, body in files.items():
    out = spec / "files" / path
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(body)
sh = "\n".join(re.findall(r"```sh\n(.*?)```", section, re.S))
lines = [l.split("#")[0].strip() for l in sh.splitlines()]
def one(prefix):
    found = [l for l in lines if l.startswith(prefix)]
    if not found:
        sys.exit(f"README.md's quick start has no command starting with {prefix!r}")
    return found[0]
install = one("pip install ").split()[2:]
if '"wasmkeep-actor[testing]"' not in install:
    sys.exit("README.md's quick start does not pip install \"wasmkeep-actor[testing]\"")
extra = [a for a in install if a != '"wasmkeep-actor[testing]"']
build = one("python -m wasmkeep_actor build ")
if not re.fullmatch(r"python -m wasmkeep_actor build [\w.-]+\.py -o [\w.-]+\.wasm", build):
    sys.exit(f"unexpected build command in README.md: {build}")
test = one("pytest")
serve = one("python -m wasmkeep_actor serve ")
if not re.fullmatch(r"python -m wasmkeep_actor serve --manifest wasmkeep\.toml", serve):
    sys.exit(f"unexpected serve command in README.md: {serve}")
curl = [l for l in sh.splitlines() if l.startswith("curl ")]
m = re.fullmatch(r"curl -X (\w+) http://127\.0\.0\.1:\d+(/\S*)\s+# (.+)", curl[0].strip()) if curl else None
if not m:
    sys.exit("README.md's quick start has no `curl -X METHOD http://127.0.0.1:PORT/path  # answer` line")
(spec / "pip-extra").write_text("\n".join(extra))
(spec / "build").write_text(build + "\n")
(spec / "pytest").write_text(test + "\n")
(spec / "serve").write_text(serve + "\n")
(spec / "request").write_text(f"{m.group(1)}\n{m.group(2)}\n{m.group(3).strip()}\n")
EOF
mapfile -t pip_extra <"$spec/pip-extra"
read -r -a build_cmd <"$spec/build"
read -r -a pytest_cmd <"$spec/pytest"
read -r -a serve_cmd <"$spec/serve"
{ read -r method; read -r req_path; read -r expected; } <"$spec/request"
say "in $dir (wheels: $(basename "$sdk_whl"), $(basename "$harness_whl"))"

run "python3 -m venv" python3 -m venv .venv
venv_py=$dir/.venv/bin/python
export PATH="$dir/.venv/bin:$PATH" VIRTUAL_ENV="$dir/.venv"
run "pip install \"wasmkeep-actor[testing]\"${pip_extra[*]:+ ${pip_extra[*]}} from the wheels (componentize-py 0.25.1 and pytest from PyPI)" \
  "$venv_py" -m pip install -q --disable-pip-version-check "$sdk_whl[testing]" "$harness_whl" "${pip_extra[@]}"

# Where the packages come from: the venv's site-packages, from the wheels.
run "the SDK and the harness are the wheels' (imported from the venv)" "$venv_py" - "$dir/.venv" "$repo" <<'EOF'
import importlib.metadata as md, pathlib, sys
venv, repo = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
import wasmkeep_actor, wasmkeep_actor_harness
for mod in (wasmkeep_actor, wasmkeep_actor_harness):
    f = pathlib.Path(mod.__file__).resolve()
    print(f"{mod.__name__}: {f}")
    if venv not in f.parents or repo in f.parents:
        sys.exit(f"{mod.__name__} is imported from {f}, not from the trial's venv {venv}")
for dist in ("wasmkeep-actor", "wasmkeep-actor-harness"):
    d = md.distribution(dist)
    direct = d.read_text("direct_url.json") or ""
    if "archive_info" not in direct or ".whl" not in direct:
        sys.exit(f"{dist} is not installed from a wheel file: direct_url.json {direct!r}")
if md.version("componentize-py") != "0.25.1":
    sys.exit(f"componentize-py {md.version('componentize-py')}, not 0.25.1")
EOF
say "$(echo "$STEP_OUT" | tr '\n' ' ')"

cp -r "$spec/files/." "$dir/"
rm -rf "$spec"
say "wrote $(cd "$dir" && find . -path ./.venv -prune -o -type f -print | sed 's|^\./||' | sort | tr '\n' ' ')"

run "${build_cmd[*]}" "${build_cmd[@]}"
say "  $(echo "$STEP_OUT" | tail -1)"
run "${pytest_cmd[*]} with the harness" "${pytest_cmd[@]}"
run "${pytest_cmd[*]} again (the component is built and compiled already)" "${pytest_cmd[@]}"
say "  $(echo "$STEP_OUT" | tail -1)"

# Serve, as the README says (python -m wasmkeep_actor serve finds
# wasmkeep-shim on PATH), on a free port; the "listening on" line says which.
mkdir -p "$dir/.host-bin"
ln -s "$shim" "$dir/.host-bin/wasmkeep-shim"
t=$(now)
(cd "$dir" && PATH="$dir/.host-bin:$PATH" exec "${serve_cmd[@]}" --listen 127.0.0.1:0 --data-dir "$dir/.wasmkeep") >"$dir/serve.out" 2>"$dir/serve.err" &
server_pid=$!
base=
for _ in $(seq 1 1200); do
  base=$(sed -n 's|^listening on \(http://127\.0\.0\.1:[0-9]*\).*|\1|p' "$dir/serve.out" | head -1)
  [ -n "$base" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    cat "$dir/serve.out" "$dir/serve.err" >&2
    server_pid=
    fail "wasmkeep-shim serve exited before listening (its output above)"
  fi
  sleep 0.1
done
[ -n "$base" ] || { cat "$dir/serve.out" "$dir/serve.err" >&2; fail "wasmkeep-shim serve printed no 'listening on' line in 120 s"; }
answer=$(curl -sS --max-time 120 -X "$method" -w '\n%{http_code}' "$base$req_path") \
  || { cat "$dir/serve.err" >&2; fail "curl -X $method $base$req_path failed"; }
status=${answer##*$'\n'}
body=${answer%$'\n'*}
if [ "$status" != 200 ] || [ "$body" != "$expected" ]; then
  cat "$dir/serve.err" >&2
  fail "wasmkeep-shim serve: $method $req_path answered $status '$body', README.md says '$expected'"
fi
say "${serve_cmd[*]}: ok ($(secs "$t") s; $method $req_path -> $status $body)"
kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=
say "passed"
