#!/usr/bin/env bash
# Sets up the Python SDK's tools in a virtualenv under target/ (never the
# system's site-packages), skipping what is present (run from anywhere):
#   target/py-venv: componentize-py 0.25.1, maturin, pytest, mypy, setuptools>=77; the SDK itself
#   (editable).
# What needs a cargo build comes after, from `cargo xtask setup` (which
# scripts/setup.sh's bootstraps run next): the test harness
# (wasmkeep_actor_harness, built by maturin from sdk-python/harness over the
# host library, linked by zig from PyPI's ziglang for glibc 2.28:
# scripts/harness-wheel.sh, installed into the venv when its bytes changed),
# then the Python guests built into target/components/
# (scripts/build-guests.sh, skipped when their inputs are unchanged).
# With WASMKEEP_SETUP_FOR=serve (scripts/main.sh), only what building the
# examples needs: componentize-py and the SDK; no maturin, pytest or mypy.
# Only package registries are used (PyPI through pip, Debian's apt).
set -euo pipefail
cd "$(dirname "$0")/../.."
say() { echo "setup: python: [$(date +%T)] $*"; }

venv=target/py-venv
py=$venv/bin/python
if [ ! -x "$py" ]; then
  if ! python3 -c "import venv, ensurepip" >/dev/null 2>&1; then
    say "installing python3 and python3-venv (Debian)"
    if [ "$(id -u)" = 0 ]; then sudo=(); else sudo=(sudo); fi
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends python3 python3-venv python3-dev >/dev/null
  fi
  say "creating $venv"
  python3 -m venv "$venv"
  "$py" -m pip install -q --upgrade pip
fi
pip=("$py" -m pip install -q --disable-pip-version-check)

# Tools, pinned where their output is checked (componentize-py writes the bindings).
want=()
"$py" -c "import importlib.metadata as m; assert m.version('componentize-py') == '0.25.1'" 2>/dev/null || want+=("componentize-py==0.25.1")
for_serve=false
[ "${WASMKEEP_SETUP_FOR:-test}" = serve ] && for_serve=true
if ! $for_serve; then
  "$py" -c "import maturin" 2>/dev/null || want+=("maturin>=1.16,<2")
  "$py" -c "import pytest" 2>/dev/null || want+=("pytest>=8")
  "$py" -c "import mypy" 2>/dev/null || want+=("mypy>=1.10")
  # The SDK's wheel (scripts/wheels.sh) is built with the venv's setuptools, no
  # isolated environment: pyproject.toml's SPDX `license` needs 77 or newer.
  "$py" -c "import setuptools, sys; sys.exit(int(setuptools.__version__.split('.')[0]) < 77)" 2>/dev/null || want+=("setuptools>=77")
fi
if ((${#want[@]})); then say "pip install ${want[*]}"; "${pip[@]}" "${want[@]}"; fi

# The SDK, editable: the repository's sources are what the venv imports. In
# setuptools' compat mode the venv's path names sdk-python itself, so type
# checkers find the package and its py.typed (mypy cannot follow the import
# hook of the default mode: `mypy --strict actor.py` said it had no types).
if ! "$py" -c "import sys, wasmkeep_actor; sys.exit(0 if 'sdk-python' in wasmkeep_actor.__file__ and any(p.rstrip('/').endswith('sdk-python') for p in sys.path) else 1)" 2>/dev/null; then
  say "pip install -e sdk-python (setuptools' compat mode)"
  # setuptools warns at length about editable installs: show its output only on failure.
  log=$(mktemp)
  if ! "${pip[@]}" --no-deps -e sdk-python --config-settings editable_mode=compat >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"
    echo "setup: python: installing the SDK into $venv failed (pip output above)" >&2; exit 1
  fi
  rm -f "$log"
fi

say "ready ($("$py" --version), componentize-py 0.25.1)"
