#!/usr/bin/env bash
# Builds the repository's Python guests into target/components/ with the SDK's
# own build command (run from anywhere; needs the venv setup.sh makes):
#
#   bash sdk-python/scripts/build-guests.sh [--only <name>]... [--quiet]
#
# A guest whose inputs (its module and the files beside it, the SDK, the WIT,
# the componentize-py version) did not change since its last build is skipped
# in well under a second; a real build takes ~15 s and ~400 MB, so they run
# one at a time.
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${WASMKEEP_PY:-target/py-venv/bin/python}"
[ -x "$py" ] || { echo "build-guests: $py is missing: run bash sdk-python/scripts/setup.sh first" >&2; exit 1; }

# name → module (relative to the repository root)
guests=(
  "conformance-testee-python conformance/testees/python/testee.py"
  "counter-py examples/counter-py/counter.py"
  "account-py examples/account-py/account.py"
  "billing-py examples/account-py/billing.py"
  "account-py-cancel-first examples/account-py/account_cancel_first.py"
  "bank-py examples/bank-py/bank.py"
  "bank-py-broken examples/bank-py/bank_broken.py"
)

only=()
quiet=()
while (($#)); do
  case "$1" in
    --only) only+=("$2"); shift 2 ;;
    --quiet) quiet=(--quiet); shift ;;
    *) echo "build-guests: unknown argument $1 (use --only <name>, --quiet)" >&2; exit 2 ;;
  esac
done

for g in "${guests[@]}"; do
  read -r name module <<<"$g"
  if ((${#only[@]})) && [[ ! " ${only[*]} " =~ " $name " ]]; then continue; fi
  [ -f "$module" ] || continue
  "$py" -m wasmkeep_actor build "$module" -o "target/components/$name.wasm" "${quiet[@]}"
done
