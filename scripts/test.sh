#!/usr/bin/env bash
# Builds attune and runs the whole test suite (lit, unit, e2e) with ctest.
# This is the command .ci/run calls.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTUNE_BUILD_DIR:-$root/build}

"$root/scripts/install-deps.sh"
"$root/scripts/configure.sh"
echo "== building"
cmake --build "$build" -j "$(nproc)" > "$build.build.log" 2>&1 \
  || { tail -80 "$build.build.log"; exit 1; }
echo "== testing"
cd "$build"
# ctest lists the tests that did not run (the GPU tests skip without a GPU,
# each with its reason) after its summary; the summary is repeated last.
set +e
ctest --output-on-failure -j "$(nproc)" "$@" 2>&1 | tee "$build.ctest.log"
status=${PIPESTATUS[0]}
set -e
grep -E '^[0-9]+% tests passed' "$build.ctest.log" | tail -1
exit "$status"
