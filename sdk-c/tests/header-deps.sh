#!/usr/bin/env bash
# wasmkeep.mk tracks the headers a source includes: after a header changes,
# `make` builds the component again, with the header's new contents; a
# header that is no longer included may be deleted. Builds a one-file actor
# with the SDK in a temporary folder (clang for wasm32-wasi and wasm-tools, as
# any C guest). Usage: bash sdk-c/tests/header-deps.sh [path/to/wasmkeep.mk]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mk=${1:-$root/sdk-c/mk/wasmkeep.mk}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "header-deps: $*" >&2; exit 1; }

cd "$tmp"
cat >Makefile <<MAKE
WASMKEEP_C_SDK := $root/sdk-c
WK_NAME := deps
WK_SRCS := actor.c
include $mk
MAKE
cat >actor.c <<'C'
#include <wasmkeep.h>
#include "answer.h"
void wk_on_request(const wk_request *req, wk_responder *res) {
    (void)req;
    wk_respond_text(res, 200, ANSWER);
}
C
echo '#define ANSWER "answer-one"' >answer.h
make --quiet >make.log 2>&1 || { cat make.log >&2; fail "the first make failed"; }
grep -q answer-one deps.wasm || fail "the component does not hold the header's answer"
make --quiet --question || fail "make says the component is out of date right after building it"

# The file's time must move past the component's, whatever the clock's grain.
sleep 1
echo '#define ANSWER "answer-two"' >answer.h
if make --quiet --question; then fail "after answer.h changed, make says the component is up to date"; fi
make --quiet >make.log 2>&1 || { cat make.log >&2; fail "make after answer.h changed failed"; }
grep -q answer-two deps.wasm || fail "after answer.h changed, the component still holds the old answer"

# The header removed from the source and deleted: make goes on (-MP's empty rules).
sleep 1
sed -i 's/#include "answer.h"/#define ANSWER "answer-three"/' actor.c
rm answer.h
make --quiet >make.log 2>&1 || { cat make.log >&2; fail "make after answer.h was deleted failed"; }
grep -q answer-three deps.wasm || fail "after the source changed, the component still holds the old answer"
echo "header-deps: ok (a changed header rebuilt the component; a deleted one did not stop make)"
