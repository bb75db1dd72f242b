// RUN: attune-compile %s --emit=mlir --no-fuse-attention | FileCheck %s

/// The unfused build of a model whose masks are static where q, k and v are
/// dynamic: the decomposed ops must verify (the pass manager verifies after
/// DecomposeAttention), with the key length the masks pin.

// CHECK-LABEL: func.func @static_masks
// CHECK-NOT: tfm.attention
// CHECK: tfm.add {{.*}} -> tensor<1x12x?x128xf32>
// CHECK: tfm.where {{.*}} -> tensor<1x12x?x128xf32>
// CHECK: tfm.softmax {{.*}}: tensor<1x12x?x128xf32> -> tensor<1x12x?x128xf32>
// CHECK: %[[O:.+]] = tfm.matmul {{.*}} -> tensor<1x12x?x64xf32>
// CHECK: return %[[O]] : tensor<1x12x?x64xf32>
func.func @static_masks(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>,
                        %v: tensor<1x12x?x64xf32>, %mask: tensor<1x1x1x128xf32>,
                        %kpm: tensor<1x128xi1>) -> tensor<1x12x?x64xf32> {
  %o = tfm.attention %q, %k, %v mask(%mask : tensor<1x1x1x128xf32>)
      key_padding_mask(%kpm : tensor<1x128xi1>) {scale = 0.125 : f64}
      : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return %o : tensor<1x12x?x64xf32>
}
