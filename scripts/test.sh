#!/usr/bin/env bash
# Sets up what is missing, then runs every test: formatting, lints, the WIT
# copies, the host's and SDK's tests, the examples, and the conformance matrix.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

bash scripts/setup.sh

step() { echo; echo "==> $*"; }
step "format (cargo fmt --check)"
cargo fmt --all --check
step "WIT copies match wit/ (cargo xtask vendor-wit --check)"
cargo xtask vendor-wit --check
step "build the guests: examples and testees (cargo xtask guests)"
cargo xtask guests
step "lints (cargo clippy -D warnings)"
cargo clippy --workspace --all-targets --quiet -- -D warnings
step "tests (cargo test)"
cargo test --workspace --quiet
step "conformance matrix"
cargo run --quiet -p conformance-runner -- --no-build
