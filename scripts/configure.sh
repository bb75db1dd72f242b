#!/usr/bin/env bash
# Configures the build in ${ATTUNE_BUILD_DIR:-build} (Release, Ninja, ccache
# when present). Sourced by quickstart.sh and test.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTUNE_BUILD_DIR:-$root/build}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" > "$build.configure.log" 2>&1 \
    || { cat "$build.configure.log"; exit 1; }
fi
