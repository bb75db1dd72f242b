#!/usr/bin/env bash
# Builds the GPU checks that run without Halide's compiler, MLIR or LLVM
# (gpu_kernel_test, gpu_benchmark: the runtime's CUDA side, cuBLASLt and the
# Halide kernels compiled ahead of time for sm_80; cuda_model_test: the
# example models compiled with --target=cuda against their CPU builds, whose
# libraries and weights come along; gpu_attention_test and
# gpu_attention_benchmark: the fused attention kernels of
# gpu_attention.fatbin) and puts them in one folder with what they load, for
# a GPU machine that cannot build attune:
#
#   scripts/gpu-bundle.sh [dir]          # here; dir defaults to gpu-bundle/
#   dir/run.sh [benchmark flags]         # there: the tests, then the benchmarks
#                                        # (the flags go to gpu_benchmark and
#                                        # gpu_attention_benchmark), then PyTorch
#   ATTUNE_RUN=attention dir/run.sh      # only the attention steps (base: only
#                                        # the others)
#
# run.sh needs an NVIDIA driver and cuBLASLt 13 (ATTUNE_CUBLASLT=path, or
# found in the usual places: the toolkit, PyTorch's nvidia-cublas wheel).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTUNE_BUILD_DIR:-$root/build}
out=${1:-$root/gpu-bundle}

if [ ! -f "$build/CMakeCache.txt" ]; then
  "$root/scripts/install-deps.sh"
  "$root/scripts/configure.sh"
fi
cmake --build "$build" --target gpu_kernel_test gpu_benchmark cuda_model_test cuda_model_cpu_libs \
  gpu_attention_test gpu_attention_benchmark
rm -rf "$out"
mkdir -p "$out/lib"
# Sourced by each bundle's run.sh: ATTUNE_CUBLASLT, unless set, is the
# cuBLASLt 13 of the toolkit, of PyTorch's wheels or of the loader's cache.
cat > "$out/cublaslt.sh" <<'FIND'
if [ -z "${ATTUNE_CUBLASLT:-}" ]; then
  for candidate in /usr/local/cuda/lib64/libcublasLt.so.13 \
      $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, d, "lib", "libcublasLt.so.13") for p in nvidia.__path__ for d in ("cu13", "cublas")))' 2>/dev/null) \
      $(ldconfig -p 2>/dev/null | awk '/libcublasLt.so.13/ {print $NF}'); do
    if [ -f "$candidate" ]; then export ATTUNE_CUBLASLT=$candidate; break; fi
  done
fi
if [ -z "${ATTUNE_CUBLASLT:-}" ]; then
  found=$(find /usr /opt -name 'libcublasLt.so.13*' -type f 2>/dev/null | head -1)
  [ -n "$found" ] && export ATTUNE_CUBLASLT=$found
fi
FIND
cp "$build/bin/gpu_kernel_test" "$build/bin/gpu_benchmark" "$build/bin/cuda_model_test" \
  "$build/bin/gpu_attention_test" "$build/bin/gpu_attention_benchmark" \
  "$build/tests/unit/cuda/gpu_attention.fatbin" \
  "$root/scripts/gpu_peer_bench.py" "$root/scripts/gpu_attention_peers.py" "$out/"
# Without their symbol tables (a device run needs none) the binaries leave
# room for one more model below.
if command -v strip >/dev/null; then
  strip "$out/gpu_kernel_test" "$out/gpu_benchmark" "$out/cuda_model_test" \
    "$out/gpu_attention_test" "$out/gpu_attention_benchmark"
fi
# The one shared library the binaries need beyond the C and C++ runtimes.
cp -L "$(ldd "$build/bin/gpu_benchmark" | awk '/libbenchmark/ {print $3}')" "$out/lib/"
# The example models, each compiled for the GPU and the CPU from one IR with
# one seed: one weights file serves both (the runtime checks its size and
# hash against each). A device call carries 64 MiB in all, the repository's
# files included: models are taken in CMakeLists.txt's order while the
# bundle and those files fit in 62 MiB.
models=$build/tests/unit/cuda/models
mkdir -p "$out/models"
# The GPT-2 block's --precision=bf16 and f16 builds, which read its f32
# weights.
cp "$models/gpt2_block_cuda_bf16.so" "$models/gpt2_block_cuda_f16.so" "$out/models/"
# What the device call carries besides the bundle: the files git tracks and
# the untracked ones it does not ignore.
tracked=$(cd "$root" && git ls-files -z --cached --others --exclude-standard |
  du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
budget=$((62 * 1024 * 1024 - ${tracked:-0} - $(du -sb "$out" | cut -f1)))
left=()
while read -r name; do
  files=("$models/${name}_cuda.so" "$models/${name}_cpu.so" "$models/${name}_cuda.safetensors")
  size=$(du -cb "${files[@]}" | tail -1 | cut -f1)
  if [ "$size" -gt "$budget" ]; then
    left+=("$name")
    continue
  fi
  cp "${files[@]}" "$out/models/"
  budget=$((budget - size))
done < "$models/order.txt"
# The models that did not fit (the GPT-2 block's weights are 36 MB) go to
# more bundles, $out-models, $out-models2, ...: cuda_model_test and its own
# run.sh with as many models as a device call carries, so that a device
# session checks every example, one call per bundle.
rm -rf "$out"-models*
part=1
while [ ${#left[@]} -gt 0 ]; do
  extra=$out-models$([ "$part" = 1 ] || echo "$part")
  mkdir -p "$extra/models"
  cp "$out/cuda_model_test" "$out/cublaslt.sh" "$extra/"
  budget=$((62 * 1024 * 1024 - ${tracked:-0} - $(du -sb "$extra" | cut -f1)))
  rest=()
  for name in "${left[@]}"; do
    files=("$models/${name}_cuda.so" "$models/${name}_cpu.so" "$models/${name}_cuda.safetensors")
    size=$(du -cb "${files[@]}" | tail -1 | cut -f1)
    if [ "$size" -gt "$budget" ] && [ -n "$(ls -A "$extra/models")" ]; then
      rest+=("$name")
      continue
    fi
    cp "${files[@]}" "$extra/models/"
    budget=$((budget - size))
  done
  cat > "$extra/run.sh" <<'RUN'
#!/usr/bin/env bash
# cuda_model_test on the example models that did not fit gpu-bundle/ (each
# GPU library against its CPU build); a driver that does not load fails.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/cublaslt.sh"
echo "== cuBLASLt: ${ATTUNE_CUBLASLT:-not found}"
echo "== cuda_model_test: $(cd "$here/models" && ls *_cuda.so | sed 's/_cuda.so$//' | tr '\n' ' ')"
nvidia-smi -L || true
ATTUNE_CUDA_MODELS=$here/models ATTUNE_REQUIRE_GPU=1 timeout 120 stdbuf -oL "$here/cuda_model_test" "$@"
RUN
  chmod +x "$extra/run.sh"
  echo "gpu-bundle: $(cd "$extra/models" && ls *_cuda.so | sed 's/_cuda.so$//' | tr '\n' ' ')in $extra" \
    "($(du -sb "$extra" | cut -f1) bytes): run $(basename "$extra")/run.sh there too"
  left=("${rest[@]}")
  part=$((part + 1))
done
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# The GPU checks: gpu_kernel_test and cuda_model_test (with
# ATTUNE_REQUIRE_GPU=1, so a driver that does not load fails instead of
# skipping), then gpu_benchmark with the flags given (BM_Model: the GPT-2
# block library), then the PyTorch peers where python3 has torch. Then the
# fused attention: gpu_attention_test, gpu_attention_benchmark with the same
# flags, PyTorch's SDPA back-ends on the same grid (ATTUNE_ATTENTION_PEERS:
# unset for the full table, quick for two rows, 0 for none), then the test's
# small cases under compute-sanitizer's memcheck where the machine has it
# (ATTUNE_SANITIZER_TOOLS="memcheck racecheck" for more tools).
# ATTUNE_RUN=attention runs only the attention steps, base only the others.
# ATTUNE_LOG_DIR=dir keeps each step's whole output in dir/<step>.log (a
# device call returns only the end of what it prints).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
steps=${ATTUNE_RUN:-all}
if [ -n "${ATTUNE_LOG_DIR:-}" ]; then
  mkdir -p "$ATTUNE_LOG_DIR"
  exec 3>&1
  # step NAME: what follows goes to the screen and to NAME.log.
  step() {
    echo "== $1"
    exec 1>&3 2>&3
    exec > >(tee "$ATTUNE_LOG_DIR/${1//[^A-Za-z0-9_.-]/_}.log") 2>&1
  }
else
  step() { echo "== $1"; }
fi
case "$steps" in
  all|base|attention) ;;
  *) echo "run.sh: ATTUNE_RUN is all, base or attention, not '$steps'" >&2; exit 2 ;;
esac
# Each step's exit status, for the summary at the end and run.sh's own.
summary=() failed=0
record() {
  summary+=("$1 exit $2")
  [ "$2" = 0 ] || failed=1
}
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
. "$here/cublaslt.sh"
echo "== cuBLASLt: ${ATTUNE_CUBLASLT:-not found}"
nvidia-smi -L || true
if [ "$steps" != attention ]; then
  # Line-buffered, so that a step stopped by its time limit shows how far it got.
  step gpu_kernel_test
  ATTUNE_REQUIRE_GPU=1 timeout 60 stdbuf -oL "$here/gpu_kernel_test"
  record gpu_kernel_test $?
  export ATTUNE_CUDA_MODELS=$here/models
  # BM_Model's libraries, f32 and bf16, both reading the one weights file.
  export ATTUNE_CUDA_MODEL=$here/models/gpt2_block_cuda.so,$here/models/gpt2_block_cuda_bf16.so,$here/models/gpt2_block_cuda_f16.so
  export ATTUNE_WEIGHTS_PATH=$here/models/gpt2_block_cuda.safetensors
  step cuda_model_test
  ATTUNE_REQUIRE_GPU=1 timeout 120 stdbuf -oL "$here/cuda_model_test"
  record cuda_model_test $?
  step gpu_benchmark
  timeout 150 stdbuf -oL "$here/gpu_benchmark" "$@"
  record gpu_benchmark $?
  # Each kernel's share of a GPT-2 block run, from CUDA events between calls.
  step gpt2_block_by_kernel
  ATTUNE_CUDA_PROFILE=1 timeout 60 "$here/gpu_benchmark" --benchmark_filter='BM_Model/.*/seq:(128|1024)' \
    --benchmark_min_time=0.1
  if python3 -c 'import torch' 2>/dev/null; then
    step pytorch_peers
    PYTHONUNBUFFERED=1 timeout 90 python3 "$here/gpu_peer_bench.py"
  fi
fi
if [ "$steps" != base ]; then
  # The fused attention kernels of gpu_attention.fatbin.
  export ATTUNE_GPU_ATTENTION_FATBIN=$here/gpu_attention.fatbin
  step gpu_attention_test
  ATTUNE_REQUIRE_GPU=1 timeout 120 stdbuf -oL "$here/gpu_attention_test"
  record gpu_attention_test $?
  step gpu_attention_benchmark
  timeout 180 stdbuf -oL "$here/gpu_attention_benchmark" "$@"
  record gpu_attention_benchmark $?
  # Issue 10's peers (PyTorch SDPA's cuDNN, flash and efficient back-ends) on
  # the benchmark's grid, so that the figures sit beside attune's.
  if [ "${ATTUNE_ATTENTION_PEERS:-1}" != 0 ] && python3 -c 'import torch' 2>/dev/null; then
    step pytorch_attention
    if [ "${ATTUNE_ATTENTION_PEERS:-}" = quick ]; then
      PYTHONUNBUFFERED=1 timeout 60 python3 "$here/gpu_attention_peers.py" --quick
    else
      PYTHONUNBUFFERED=1 timeout 180 python3 "$here/gpu_attention_peers.py"
    fi
  fi
  sanitize=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  if [ -n "$sanitize" ]; then
    for tool in ${ATTUNE_SANITIZER_TOOLS:-memcheck}; do
      step "compute-sanitizer_$tool"
      # The small cases only: the large ones take minutes under a tool.
      ATTUNE_REQUIRE_GPU=1 timeout 150 "$sanitize" --tool "$tool" --error-exitcode 1 \
        "$here/gpu_attention_test" --gtest_filter='-*Large*'
      record "compute-sanitizer --tool $tool" $?
    done
  else
    echo "== compute-sanitizer: not on this machine, skipped"
  fi
fi
if [ -n "${ATTUNE_LOG_DIR:-}" ]; then
  exec 1>&3 2>&3
  wait  # for the last step's tee
fi
(IFS=,; echo "${summary[*]}" | sed 's/,/, /g')
exit "$failed"
RUN
chmod +x "$out/run.sh"
du -sh "$out"
total=$((${tracked:-0} + $(du -sb "$out" | cut -f1)))
echo "gpu-bundle: $total bytes with the repository's files (limit $((62 * 1024 * 1024)))"
if [ "$total" -gt $((62 * 1024 * 1024)) ]; then
  echo "gpu-bundle: over 62 MiB: a device call would not carry it" >&2
  exit 1
fi
