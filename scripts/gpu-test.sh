#!/usr/bin/env bash
# The GPU tests, for a machine with an NVIDIA GPU and its driver: builds
# what they need (installing the dependencies first unless
# ATTUNE_SKIP_DEPS=1, for a machine without network that carries a built
# tree) and runs every test labelled `cuda` with ATTUNE_REQUIRE_GPU=1, so
# that a GPU test which cannot find the device fails instead of skipping.
# Elsewhere those tests run in the normal suite and skip with the reason.
# gpu_schedule_test JIT-compiles with libHalide; on a GPU machine that cannot
# build attune, scripts/gpu-bundle.sh packs gpu_kernel_test (the runtime's
# CUDA side, cuBLASLt and the AOT kernels) and gpu_benchmark instead.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTUNE_BUILD_DIR:-$root/build}

if [ "${ATTUNE_SKIP_DEPS:-0}" != 1 ]; then
  "$root/scripts/install-deps.sh"
  "$root/scripts/configure.sh"
fi
command -v nvidia-smi > /dev/null && nvidia-smi -L || echo "(no nvidia-smi)"
echo "== building the GPU tests"
cmake --build "$build" -j "$(nproc)" --target cuda_tests
echo "== testing"
cd "$build"
ATTUNE_REQUIRE_GPU=1 ctest --output-on-failure -L cuda "$@"
