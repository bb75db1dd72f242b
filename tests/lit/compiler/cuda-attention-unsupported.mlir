// RUN: attune-compile %s --target=cuda --precision=bf16 --emit=mlir --verbose 2>&1 | FileCheck %s

/// An attention the GPU kernel does not compile (a head size of 72, not a
/// multiple of 16) is decomposed for --target=cuda even in bf16, and
/// --verbose says why; its products go to cuBLASLt like any matmul.
// CHECK: attune-compile: attention at {{.*}} unfused: head size 72 (the GPU attention kernel takes multiples of 16 up to 128)
// CHECK-NOT: tfm.attention
// CHECK: tfm.softmax
func.func @attention(%q: tensor<1x2x?x72xf32>, %k: tensor<1x2x?x72xf32>, %v: tensor<1x2x?x72xf32>)
    -> tensor<1x2x?x72xf32> {
  %o = tfm.attention %q, %k, %v {scale = 0.11785113019775792 : f64}
      : tensor<1x2x?x72xf32>, tensor<1x2x?x72xf32>, tensor<1x2x?x72xf32> -> tensor<1x2x?x72xf32>
  return %o : tensor<1x2x?x72xf32>
}
