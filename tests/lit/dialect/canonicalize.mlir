// RUN: attune-opt %s -split-input-file -canonicalize | FileCheck %s

/// The folders of the data-movement ops: what exporters leave behind around
/// attention (a no-op transpose, a reshape back and forth, repeats of 1) goes
/// away so fusion sees the values it matches on.

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.+]]: tensor<?x12x?x64xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_identity(%x: tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32> {
  %0 = tfm.transpose %x {permutation = array<i64: 0, 1, 2, 3>} : tensor<?x12x?x64xf32> -> tensor<?x12x?x64xf32>
  return %0 : tensor<?x12x?x64xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_kept
// CHECK: tfm.transpose
func.func @transpose_kept(%x: tensor<?x12x?x64xf32>) -> tensor<?x?x12x64xf32> {
  %0 = tfm.transpose %x {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x12x?x64xf32> -> tensor<?x?x12x64xf32>
  return %0 : tensor<?x?x12x64xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x768xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_round_trip(%x: tensor<?x?x768xf32>) -> tensor<?x?x768xf32> {
  %0 = tfm.reshape %x : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
  %1 = tfm.reshape %0 : tensor<?x?x12x64xf32> -> tensor<?x?x768xf32>
  return %1 : tensor<?x?x768xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.+]] = tfm.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = tfm.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = tfm.reshape %0 : tensor<24xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @repeat_once
// CHECK-SAME: (%[[K:.+]]: tensor<1x2x?x64xf32>)
// CHECK-NEXT: return %[[K]]
func.func @repeat_once(%k: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %0 = tfm.repeat_interleave %k {axis = 1 : i64, repeats = 1 : i64} : tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32>
  return %0 : tensor<1x2x?x64xf32>
}
