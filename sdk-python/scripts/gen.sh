#!/usr/bin/env bash
# Regenerates what the Python SDK derives from wit/ (run from anywhere):
#   - wasmkeep_actor/wit/actor.wit: the WIT the build command componentizes against
#     (shipped in the package, so a pip-installed SDK needs no checkout);
#   - wasmkeep_actor/_bindings/: componentize-py's typed bindings of the `actor`
#     world, for type checkers and for importing the SDK outside a component
#     (inside one, componentize-py provides the real `wit_world`).
# With --check nothing is written: it fails when either differs from wit/.
set -euo pipefail
cd "$(dirname "$0")/../.."
check=0
[ "${1:-}" = "--check" ] && check=1

cpy="${COMPONENTIZE_PY:-}"
if [ -z "$cpy" ]; then
  if [ -x target/py-venv/bin/componentize-py ]; then cpy=target/py-venv/bin/componentize-py
  elif command -v componentize-py >/dev/null 2>&1; then cpy=componentize-py
  else echo "gen.sh: componentize-py not found: run bash sdk-python/scripts/setup.sh (or pip install componentize-py==0.25.1)" >&2; exit 1
  fi
fi

pkg=sdk-python/wasmkeep_actor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cpy" -d wit -w actor bindings "$tmp/_bindings" >/dev/null
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
    exit 1
  fi
  rm -rf "$tmp/_bindings/$unused" "$tmp/_bindings/$unused.py"
done

if [ "$check" = 1 ]; then
  status=0
  for part in _bindings wit; do
    if ! diff -r -x __pycache__ "$tmp/$part" "$pkg/$part" >/dev/null; then
      echo "gen.sh: $pkg/$part is out of date with wit/: run bash sdk-python/scripts/gen.sh and commit the result" >&2
      status=1
    fi
  done
  [ "$status" = 0 ] && echo "gen.sh: the Python bindings and WIT copy match wit/"
  exit "$status"
fi
rm -rf "$pkg/_bindings" "$pkg/wit"
cp -r "$tmp/_bindings" "$tmp/wit" "$pkg/"
echo "gen.sh: wrote $pkg/_bindings and $pkg/wit from wit/"
