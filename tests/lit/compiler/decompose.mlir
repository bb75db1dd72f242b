// RUN: attune-compile %s --emit=mlir --no-fuse-attention | FileCheck %s

/// A model written with tfm.attention is decomposed when fusion is off, so
/// --no-fuse-attention builds it without the fused kernel however it was
/// written.

// CHECK-LABEL: func.func @fused_in_source
// CHECK-NOT: tfm.attention
// CHECK: tfm.matmul
// CHECK: tfm.softmax
// CHECK: tfm.matmul
// CHECK: return
func.func @fused_in_source(%q: tensor<2x4x7x64xf32>, %k: tensor<2x4x7x64xf32>,
                           %v: tensor<2x4x7x64xf32>) -> tensor<2x4x7x64xf32> {
  %o = tfm.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<2x4x7x64xf32>, tensor<2x4x7x64xf32>, tensor<2x4x7x64xf32> -> tensor<2x4x7x64xf32>
  return %o : tensor<2x4x7x64xf32>
}
