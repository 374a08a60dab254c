#!/usr/bin/env bash
# The README's test command: sets up what is missing (scripts/setup.sh: what
# xtask's builds need; Rust itself comes from rustup), then runs every test
# through `cargo xtask test`, whose first step builds what setup needs xtask
# for (the C adapter, the QuickJS parts, the guests, the Python harness); then
# formatting, lints, the WIT copies and generated
# bindings, the host's and SDKs' tests, the examples, and the conformance
# matrix (the steps are in xtask/src/test_steps.rs; ADR 082). Arguments go to
# `cargo xtask test` (`--only <part of a step's name>`, `--from …`, `--list`).
set -euo pipefail
cd "$(dirname "$0")/.."
began=$(date +%s)
# Setup's cargo commands and the build of xtask see what the steps see
# (xtask sets the same for them), so that nothing is built twice.
export CARGO_TERM_COLOR=never
# A CI run builds once: incremental caches only cost disk (several GB) and time there.
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi
echo; echo "==> [at 0 min] set up what is missing (scripts/setup.sh)"
# Listing the steps needs no setup.
for arg in "$@"; do
  if [ "$arg" = --list ]; then exec cargo xtask test --list; fi
done
bash scripts/setup.sh
# xtask counts its clock and setup's row of the table from $began.
exec cargo xtask test --setup-done --clock-from "$began" "$@"
