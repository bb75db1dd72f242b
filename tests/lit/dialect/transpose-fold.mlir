// RUN: attune-opt %s -split-input-file -canonicalize | FileCheck %s

/// Rule "transpose of transpose" (tfm.transpose's folder): two transposes
/// that cancel fold away; two that do not stay as written, for the matchers
/// that recognise an exporter's transposes one by one.
// CHECK-LABEL: func.func @cancel
// CHECK-NOT: tfm.transpose
// CHECK: return %arg0
func.func @cancel(%x: tensor<2x?x3x8xf32>) -> tensor<2x?x3x8xf32> {
  %a = tfm.transpose %x {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x?x3x8xf32> -> tensor<2x3x?x8xf32>
  %b = tfm.transpose %a {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x3x?x8xf32> -> tensor<2x?x3x8xf32>
  return %b : tensor<2x?x3x8xf32>
}

// -----

/// Split heads [0, 2, 1, 3], then K^T [0, 1, 3, 2]: kept.
// CHECK-LABEL: func.func @compose
// CHECK-NEXT: %[[A:.+]] = tfm.transpose %arg0 {permutation = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT: %[[B:.+]] = tfm.transpose %[[A]] {permutation = array<i64: 0, 1, 3, 2>}
// CHECK-NEXT: return %[[B]]
func.func @compose(%x: tensor<2x?x3x8xf32>) -> tensor<2x3x8x?xf32> {
  %a = tfm.transpose %x {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x?x3x8xf32> -> tensor<2x3x?x8xf32>
  %b = tfm.transpose %a {permutation = array<i64: 0, 1, 3, 2>} : tensor<2x3x?x8xf32> -> tensor<2x3x8x?xf32>
  return %b : tensor<2x3x8x?xf32>
}
