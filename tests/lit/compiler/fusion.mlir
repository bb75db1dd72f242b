// RUN: attune-compile %s --emit=mlir | FileCheck %s --check-prefix=FUSED
// RUN: attune-compile %s --emit=mlir --no-fuse-attention | FileCheck %s --check-prefix=UNFUSED

/// The graph pipeline raises attention written out op by op (as exporters
/// write it) to tfm.attention; --no-fuse-attention leaves it decomposed.

// FUSED-LABEL: func.func @causal_attention
// FUSED: tfm.attention
// FUSED-SAME: causal = true
// FUSED-NOT: tfm.softmax
// FUSED: return

// UNFUSED-LABEL: func.func @causal_attention
// UNFUSED-NOT: tfm.attention
// UNFUSED: tfm.causal_mask
// UNFUSED: tfm.softmax
// UNFUSED: return
func.func @causal_attention(%q: tensor<1x4x?x64xf32>, %k: tensor<1x4x?x64xf32>,
                            %v: tensor<1x4x?x64xf32>) -> tensor<1x4x?x64xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32> -> tensor<1x4x?x?xf32>
  %c = arith.constant dense<1.250000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x4x?x?xf32>, tensor<f32> -> tensor<1x4x?x?xf32>
  %m = tfm.causal_mask %t : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  %o = tfm.matmul %p, %v : tensor<1x4x?x?xf32>, tensor<1x4x?x64xf32> -> tensor<1x4x?x64xf32>
  return %o : tensor<1x4x?x64xf32>
}
