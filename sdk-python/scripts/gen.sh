#!/usr/bin/env bash
# Regenerates what the Python SDK derives from wit/ (run from anywhere):
#   - wasmkeep_actor/wit/actor.wit: the WIT the build command componentizes against
#     (shipped in the package, so a pip-installed SDK needs no checkout);
#   - wasmkeep_actor/_bindings/: componentize-py's typed bindings of the `actor`
#     world, for type checkers and for importing the SDK outside a component
#     (inside one, componentize-py provides the real `wit_world`).
# With --check nothing is written: it fails naming every file that differs
# from what wit/ makes. `cargo xtask gen [--check]` runs this with the other
# SDKs' generators.
# Exit status: 0 current (or written), 1 files differ (--check), 2 bad
# arguments, 3 a tool is missing or failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
# What to tell the reader to run (cargo xtask gen sets its own command).
regen="${WASMKEEP_GEN_COMMAND:-bash sdk-python/scripts/gen.sh}"
check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "gen.sh: unknown argument $1 (use --check or nothing)" >&2; exit 2 ;;
esac

cpy="${COMPONENTIZE_PY:-}"
if [ -z "$cpy" ]; then
  if [ -x target/py-venv/bin/componentize-py ]; then cpy=target/py-venv/bin/componentize-py
  elif command -v componentize-py >/dev/null 2>&1; then cpy=componentize-py
  else echo "gen.sh: the tool componentize-py 0.25.1 is not found: bash sdk-python/scripts/setup.sh installs it into target/py-venv (run by scripts/setup.sh), or: pip install componentize-py==0.25.1" >&2; exit 3
  fi
fi

pkg=sdk-python/wasmkeep_actor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cpy" -d wit -w actor bindings "$tmp/_bindings" >/dev/null || { echo "gen.sh: componentize-py bindings failed on wit/" >&2; exit 3; }
mkdir -p "$tmp/wit"
cp wit/actor.wit "$tmp/wit/actor.wit"
find "$tmp" -name __pycache__ -prune -exec rm -rf {} +
# componentize-py always writes its asyncio support (an event loop whose
# unused methods raise NotImplementedError) and poll_loop. The `actor` world has
# no async function, so nothing imports them: they are left out of the package.
# If a later WIT addition needs them, generated code imports them and this stops.
for unused in componentize_py_async_support poll_loop; do
  if grep -rlq --include='*.py' --include='*.pyi' -E "(import|from) +$unused" "$tmp/_bindings/wit_world" "$tmp/_bindings/componentize_py_types.py" 2>/dev/null; then
    echo "gen.sh: the generated bindings import $unused now (an async WIT function?): keep it, and review its stubs" >&2
    exit 3
  fi
  rm -rf "$tmp/_bindings/$unused" "$tmp/_bindings/$unused.py"
done

# Prints every file of the committed directory $2 that differs from the fresh
# one $1 (changed, missing, or not generated any more), __pycache__ aside.
stale_files() {
  local files=(-name __pycache__ -prune -o -type f -print)
  { (cd "$1" && find . "${files[@]}"); if [ -d "$2" ]; then (cd "$2" && find . "${files[@]}"); fi; } |
    sort -u | while read -r f; do cmp -s "$1/$f" "$2/$f" || echo "$2/${f#./}"; done
}

if [ "$check" = 1 ]; then
  stale=$(for part in _bindings wit; do stale_files "$tmp/$part" "$pkg/$part"; done)
  if [ -n "$stale" ]; then
    echo "gen.sh: these Python files differ from what wit/ makes:" >&2
    sed 's/^/  /' <<<"$stale" >&2
    echo "gen.sh: run \`$regen\` and commit the result" >&2
    exit 1
  fi
  echo "gen.sh: the Python bindings and WIT copy match wit/"
  exit 0
fi
rm -rf "$pkg/_bindings" "$pkg/wit"
cp -r "$tmp/_bindings" "$tmp/wit" "$pkg/"
echo "gen.sh: wrote $pkg/_bindings and $pkg/wit from wit/"
