// RUN: attune-compile %s --emit=mlir -o %t.mlir --fusion-report=%t.json && FileCheck %s --input-file=%t.json
// RUN: attune-compile %s --emit=mlir -o %t.mlir --no-fuse-attention --fusion-report=%t.off.json && FileCheck %s --input-file=%t.off.json --check-prefix=OFF

/// --fusion-report writes the fuse pass's JSON report: every softmax site,
/// fused or not and why. With fusion off the report says so instead of
/// listing nothing, so a script cannot mistake it for "no attention found".

// CHECK-DAG: "fused": 1,
// CHECK-DAG: "not_fused": 1,
// CHECK-DAG: "fused": true,
// CHECK-DAG: "fused": false,
// CHECK-DAG: "reason": "the scores are rank 2, expected rank 4

// OFF-DAG: "fusion": "disabled"
// OFF-DAG: "fused": 0,
// OFF-DAG: "sites": []

func.func @two_sites(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>,
                     %v: tensor<1x2x8x64xf32>, %x: tensor<4x8xf32>)
    -> (tensor<1x2x8x64xf32>, tensor<4x8xf32>) {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x2x8x8xf32>
  %c = arith.constant dense<1.250000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<1x2x8x8xf32>, tensor<f32> -> tensor<1x2x8x8xf32>
  %p = tfm.softmax %t {axis = -1 : i64} : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<1x2x8x8xf32>, tensor<1x2x8x64xf32> -> tensor<1x2x8x64xf32>
  // A softmax that does not feed a matmul with V is a site left unfused.
  %y = tfm.softmax %x {axis = -1 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
  return %o, %y : tensor<1x2x8x64xf32>, tensor<4x8xf32>
}
