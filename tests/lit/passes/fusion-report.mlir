// RUN: attune-opt %s -tfm-fuse-attention=report-file=%t.json -verify-diagnostics -o /dev/null && FileCheck %s --input-file=%t.json

/// The JSON report lists every softmax site in IR order, fused or not, with
/// the reason a site was left alone. Keys print sorted; totals come first.

// CHECK:      {
// CHECK-NEXT:   "fused": 2,
// CHECK-NEXT:   "not_fused": 1,
// CHECK-NEXT:   "sites": [

// CHECK-NEXT:     {
// CHECK-NEXT:       "causal": true,
// CHECK-NEXT:       "fused": true,
// CHECK-NEXT:       "location": "{{.*}}fusion-report.mlir:[[@LINE+10]]:8",
// CHECK-NEXT:       "mask": "none",
// CHECK-NEXT:       "reason": "",
// CHECK-NEXT:       "scale": 0.125
// CHECK-NEXT:     },
func.func @causal(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>) -> tensor<1x12x?x64xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x?xf32>
  %c = arith.constant dense<8.000000e+00> : tensor<f32>
  %t = tfm.div %s, %c : tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
  %m = tfm.causal_mask %t : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %o = tfm.matmul %p, %v : tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return %o : tensor<1x12x?x64xf32>
}

// CHECK-NEXT:     {
// CHECK-NEXT:       "causal": false,
// CHECK-NEXT:       "fused": true,
// CHECK-NEXT:       "location": "{{.*}}fusion-report.mlir:[[@LINE+10]]:8",
// CHECK-NEXT:       "mask": "key_padding",
// CHECK-NEXT:       "reason": "",
// CHECK-NEXT:       "scale": 1
// CHECK-NEXT:     },
func.func @key_padding(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %am: tensor<2x8xi64>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %cond = tfm.reshape %am : tensor<2x8xi64> -> tensor<2x1x1x8xi64>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = tfm.where %cond, %s, %ninf : tensor<2x1x1x8xi64>, tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %m {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// CHECK-NEXT:     {
// CHECK-NEXT:       "causal": null,
// CHECK-NEXT:       "fused": false,
// CHECK-NEXT:       "location": "{{.*}}fusion-report.mlir:[[@LINE+10]]:8",
// CHECK-NEXT:       "mask": null,
// CHECK-NEXT:       "reason": "probabilities feed tfm.add, not a matmul with V",
// CHECK-NEXT:       "scale": null
// CHECK-NEXT:     }
// CHECK-NEXT:   ]
// CHECK-NEXT: }
func.func @classifier(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %bias: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  // expected-remark @+1 {{attention not fused: probabilities feed tfm.add, not a matmul with V}}
  %p = tfm.softmax %s {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.add %p, %bias : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  return %o : tensor<2x4x8x8xf32>
}
