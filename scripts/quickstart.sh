#!/usr/bin/env bash
# Quick start: installs what is missing, builds attune, compiles the bundled
# GPT-2-sized block into a native library (fused, and unfused to compare),
# runs it against the reference evaluator, and times fused vs unfused
# attention.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTUNE_BUILD_DIR:-$root/build}
jobs=$(nproc)

"$root/scripts/install-deps.sh"
"$root/scripts/configure.sh"
echo "== building attune (first build takes a while)"
cmake --build "$build" -j "$jobs" --target attune-compile attune-run c_api_example \
  attention_benchmark > "$build.build.log" 2>&1 || { tail -50 "$build.build.log"; exit 1; }

out="$build/quickstart"
mkdir -p "$out"
lib="$out/libgpt2_block.so"
echo "== attune-compile examples/gpt2-block/block.mlir --target=cpu -o $lib"
start=$(date +%s%N)
"$build/bin/attune-compile" "$root/examples/gpt2-block/block.mlir" --target=cpu -o "$lib"
echo "   compiled in $(( ($(date +%s%N) - start) / 1000000 )) ms: $(du -h "$lib" | cut -f1) library + ${lib%.so}.h"
"$build/bin/attune-compile" "$root/examples/gpt2-block/block.mlir" --target=cpu \
  --no-fuse-attention -o "$out/libgpt2_block_unfused.so"

echo "== running it (fused attention), checked against the reference evaluator"
"$build/bin/attune-run" "$lib" --random-inputs --dim batch=1 --dim seq=128 \
  --check-reference --bench 10
echo "== the same block with --no-fuse-attention"
"$build/bin/attune-run" "$out/libgpt2_block_unfused.so" \
  --random-inputs --dim batch=1 --dim seq=128 --bench 10 --print 0 | grep -E "^time"
echo "== from C: examples/c-api/main.c"
"$build/bin/c_api_example" "$lib"

echo "== fused vs unfused attention (B=1, H=12, D=64, one thread)"
"$build/bin/attention_benchmark" --benchmark_filter='^BM_Attention/(un)?fused/S:(512|2048)/D:64/causal:0/T:1/' \
  --benchmark_min_time=0.2 2>/dev/null
