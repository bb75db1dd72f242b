// RUN: attune-compile %attune_src_root/examples/gpt2-block/block.mlir --emit=mlir | FileCheck %s --check-prefix=GPT2
// RUN: attune-compile %attune_src_root/examples/gpt2-block/block.mlir --emit=host-mlir | grep -v llvm.mlir.global | FileCheck %s --check-prefix=GPT2-HOST
// RUN: attune-compile %attune_src_root/examples/gpt2-block/block.mlir --emit=mlir --no-propagate-layouts | FileCheck %s --check-prefix=KEPT
// RUN: attune-compile %attune_src_root/examples/llama-decoder/block.mlir -o %t-llama.so && attune-run %t-llama.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference | FileCheck %s --check-prefix=REF
// RUN: attune-compile %attune_src_root/tests/models/gpt2-tiny --emit=host-mlir | grep -v llvm.mlir.global | FileCheck %s --check-prefix=GPT2-HOST
// RUN: rm -rf %t-phases && attune-compile %attune_src_root/tests/models/gpt2-tiny --dump-phases-to=%t-phases -o %t-hf.so && FileCheck %s --check-prefix=PACKED --input-file=%t-phases/10-memory-plan.txt
// RUN: attune-run %t-hf.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference | FileCheck %s --check-prefix=REF
// RUN: attune-compile %s --emit=mlir | FileCheck %s
// RUN: attune-compile %s -o %t.so && attune-run %t.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference | FileCheck %s --check-prefix=REF
// RUN: attune-compile %s --no-fuse-attention -o %t-unfused.so && attune-run %t-unfused.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference | FileCheck %s --check-prefix=REF
// RUN: attune-compile %s --no-propagate-layouts -o %t-kept.so && attune-run %t-kept.so --random-inputs --dim=batch=2 --dim=seq=37 --check-reference | FileCheck %s --check-prefix=REF

/// tfm-propagate-layouts in the compiler's pipeline. The GPT-2 example's
/// graph keeps no tfm.transpose (its four head split/merge copies become
/// the attention's bshd layout), and its library calls no copy kernel;
/// --no-propagate-layouts keeps them. The libraries match the reference
/// evaluator on the model as written (attune-run's default tolerance, 1e-5
/// + 1e-4 |ref|): the LLaMA example (GQA, RoPE folded into the attention)
/// and the model below, fused with the layout, fused without it, and
/// unfused (the decomposition reads bshd through transposes).
///
/// A Hugging Face GPT-2 checkpoint projects q, k and v in one matmul
/// (c_attn) and slices them out of its [B, S, 3 * 64] rows: attention reads
/// them there, rows 192 floats apart, so the slices are views (aliases in
/// the memory plan), not copy kernels.

// GPT2: tfm.attention {{.+}} {causal = true, layout = #tfm.head_layout<bshd>
// GPT2-NOT: tfm.transpose
// GPT2-HOST-NOT: llvm.call @attune_copy
// KEPT-COUNT-4: tfm.transpose

// PACKED-COUNT-3: alias {{%[0-9]+}} (tfm.slice) of
// PACKED-NOT: (tfm.slice): slot

// REF-NOT: FAIL
// REF: (|err| <= {{.+}}: ok)

/// An encoder layer with 6 query heads over 2 key/value heads of 16, a
/// padding mask and an additive bias, heads split from and merged into
/// [B, S, 96].
// CHECK: tfm.attention {{.+}} mask({{.+}}) key_padding_mask({{.+}}) {layout = #tfm.head_layout<bshd>
// CHECK-NOT: tfm.transpose
func.func @gqa_encoder(%x: tensor<?x?x96xf32> {tfm.dim_names = ["batch", "seq", "hidden"]},
                       %pad: tensor<?x?xi32> {tfm.dim_names = ["batch", "seq"], tfm.index_bound = 2 : i64},
                       %bias: tensor<1x6x?x?xf32> {tfm.dim_names = ["one", "heads", "seq", "seq"]}) -> tensor<?x?x96xf32> {
  %wq = tfm.weight "wq" : tensor<96x96xf32>
  %wk = tfm.weight "wk" : tensor<96x32xf32>
  %wv = tfm.weight "wv" : tensor<96x32xf32>
  %wo = tfm.weight "wo" : tensor<96x96xf32>
  %q = tfm.linear %x, %wq : tensor<?x?x96xf32>, tensor<96x96xf32> -> tensor<?x?x96xf32>
  %k = tfm.linear %x, %wk : tensor<?x?x96xf32>, tensor<96x32xf32> -> tensor<?x?x32xf32>
  %v = tfm.linear %x, %wv : tensor<?x?x96xf32>, tensor<96x32xf32> -> tensor<?x?x32xf32>
  %q4 = tfm.reshape %q : tensor<?x?x96xf32> -> tensor<?x?x6x16xf32>
  %k4 = tfm.reshape %k : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %v4 = tfm.reshape %v : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x6x16xf32> -> tensor<?x6x?x16xf32>
  %kh = tfm.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x2x16xf32> -> tensor<?x2x?x16xf32>
  %vh = tfm.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x2x16xf32> -> tensor<?x2x?x16xf32>
  %o = tfm.attention %qh, %kh, %vh mask(%bias : tensor<1x6x?x?xf32>) key_padding_mask(%pad : tensor<?x?xi32>) {scale = 0.25 : f64}
      : tensor<?x6x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x6x?x16xf32>
  %ot = tfm.transpose %o {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x6x?x16xf32> -> tensor<?x?x6x16xf32>
  %m = tfm.reshape %ot : tensor<?x?x6x16xf32> -> tensor<?x?x96xf32>
  %y = tfm.linear %m, %wo : tensor<?x?x96xf32>, tensor<96x96xf32> -> tensor<?x?x96xf32>
  return %y : tensor<?x?x96xf32>
}
